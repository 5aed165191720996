/*
 * Verifies, offline, what a repomarket purchase came with, with the marketplace's published keys and
 * optionally the archive it vouches for:
 *
 *   npx tsx scripts/verify-receipt.ts [--allow-test] <receipt.jws | provenance.json | -> <jwks.json> [archive.tar.gz]
 *
 * The first file is either the signed receipt (the JWS of an archive response's `X-Receipt` header, or the
 * `signature` of the receipt in its `PAYMENT-RESPONSE`) or the provenance attestation (the DSSE envelope of
 * `<receipt link>/provenance`); `-` reads it from stdin. `jwks.json` is a copy of the marketplace's
 * `/.well-known/jwks.json`. Prints what verified as JSON and exits 0; otherwise prints why it does not hold and
 * exits 1 (2 for bad arguments). A test-twin receipt or statement (`livemode: false`: simulated money, nothing
 * paid) does not verify unless `--allow-test` is given, and then the command says "test purchase, simulated
 * money". Nothing is fetched: the checks are the package's own `verifyReceipt` and `verifyProvenance` over
 * these files.
 */
import { createHash } from "node:crypto"
import { readFileSync } from "node:fs"
import { verifyProvenance } from "../codec/VerifyProvenance.js"
import { TEST_PURCHASE, TEST_REFUSED, verifyReceipt } from "../codec/VerifyReceipt.js"

const USAGE = "usage: npx tsx scripts/verify-receipt.ts [--allow-test] <receipt.jws | provenance.json | -> <jwks.json> [archive.tar.gz]\n"
const args = process.argv.slice(2)
const allowTest = args.includes("--allow-test")
const files = args.filter((arg) => arg !== "--allow-test")
const [inputPath, keysPath, archivePath, extra] = files
if (inputPath === undefined || keysPath === undefined || extra !== undefined || files.some((f) => f.startsWith("--"))) {
  process.stderr.write(USAGE)
  process.exit(2)
}
const input = readFileSync(inputPath === "-" ? 0 : inputPath, "utf8").trim()
const keys = JSON.parse(readFileSync(keysPath, "utf8"))
const archive = archivePath === undefined ? undefined : readFileSync(archivePath)
const options = {
  allowTest,
  ...(archive === undefined ? {} : { archive: { sha256: createHash("sha256").update(archive).digest("hex"), size: archive.length } })
}
// A DSSE envelope is a JSON object; a receipt is a JWS compact string.
const isEnvelope = input.startsWith("{")
const what = isEnvelope ? "provenance" : "receipt"
const result = isEnvelope ? await verifyProvenance(JSON.parse(input), keys, options) : await verifyReceipt(input, keys, options)
if (result.valid) {
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`)
  if (!result.livemode) process.stderr.write(`${TEST_PURCHASE}: this ${what} is the test twin's (livemode: false), no money was paid\n`)
} else {
  const hint = result.reason.startsWith(TEST_REFUSED) ? " (pass --allow-test to accept test purchases)" : ""
  process.stderr.write(`${what} does not verify: ${result.reason}${hint}\n`)
  process.exit(1)
}
