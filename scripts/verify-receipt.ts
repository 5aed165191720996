/*
 * Verifies, offline, what a repomarket purchase came with, with the marketplace's published keys and
 * optionally the archive it vouches for:
 *
 *   npx tsx scripts/verify-receipt.ts <receipt.jws | provenance.json | -> <jwks.json> [archive.tar.gz]
 *
 * The first file is either the signed receipt (the JWS of an archive response's `X-Receipt` header, or the
 * `signature` of the receipt in its `PAYMENT-RESPONSE`) or the provenance attestation (the DSSE envelope of
 * `<receipt link>/provenance`); `-` reads it from stdin. `jwks.json` is a copy of the marketplace's
 * `/.well-known/jwks.json`. Prints what verified as JSON and exits 0; otherwise prints why it does not hold and
 * exits 1 (2 for bad arguments). Nothing is fetched: the checks are the package's own `verifyReceipt` and
 * `verifyProvenance` over these files.
 */
import { createHash } from "node:crypto"
import { readFileSync } from "node:fs"
import { verifyProvenance } from "../codec/VerifyProvenance.js"
import { verifyReceipt } from "../codec/VerifyReceipt.js"

const [inputPath, keysPath, archivePath] = process.argv.slice(2)
if (inputPath === undefined || keysPath === undefined) {
  process.stderr.write("usage: npx tsx scripts/verify-receipt.ts <receipt.jws | provenance.json | -> <jwks.json> [archive.tar.gz]\n")
  process.exit(2)
}
const input = readFileSync(inputPath === "-" ? 0 : inputPath, "utf8").trim()
const keys = JSON.parse(readFileSync(keysPath, "utf8"))
const archive = archivePath === undefined ? undefined : readFileSync(archivePath)
const expected = archive === undefined ? {} : { archive: { sha256: createHash("sha256").update(archive).digest("hex"), size: archive.length } }
// A DSSE envelope is a JSON object; a receipt is a JWS compact string.
const isEnvelope = input.startsWith("{")
const result = isEnvelope ? await verifyProvenance(JSON.parse(input), keys, expected) : await verifyReceipt(input, keys, expected)
if (result.valid) {
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`)
} else {
  process.stderr.write(`${isEnvelope ? "provenance" : "receipt"} does not verify: ${result.reason}\n`)
  process.exit(1)
}
