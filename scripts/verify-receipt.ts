/*
 * Verifies a repomarket receipt offline, with the marketplace's published keys, and optionally the archive
 * it vouches for:
 *
 *   npx tsx scripts/verify-receipt.ts <receipt.jws | -> <jwks.json> [archive.tar.gz]
 *
 * `receipt.jws` is the JWS from the `X-Receipt` header of an archive response (or the `signature` of the
 * receipt in its `PAYMENT-RESPONSE`); `-` reads it from stdin. `jwks.json` is a copy of the marketplace's
 * `/.well-known/jwks.json`. Prints the verified claims as JSON and exits 0; otherwise prints why the receipt
 * does not hold and exits 1 (2 for bad arguments). Nothing is fetched: the check is the package's own
 * `verifyReceipt` over these files.
 */
import { createHash } from "node:crypto"
import { readFileSync } from "node:fs"
import { verifyReceipt } from "../codec/VerifyReceipt.js"

const [receiptPath, keysPath, archivePath] = process.argv.slice(2)
if (receiptPath === undefined || keysPath === undefined) {
  process.stderr.write("usage: npx tsx scripts/verify-receipt.ts <receipt.jws | -> <jwks.json> [archive.tar.gz]\n")
  process.exit(2)
}
const receipt = readFileSync(receiptPath === "-" ? 0 : receiptPath, "utf8").trim()
const keys = JSON.parse(readFileSync(keysPath, "utf8"))
const archive = archivePath === undefined ? undefined : readFileSync(archivePath)
const expected = archive === undefined ? {} : { archive: { sha256: createHash("sha256").update(archive).digest("hex"), size: archive.length } }
const result = await verifyReceipt(receipt, keys, expected)
if (result.valid) {
  process.stdout.write(`${JSON.stringify({ valid: true, kid: result.kid, claims: result.claims }, null, 2)}\n`)
} else {
  process.stderr.write(`receipt does not verify: ${result.reason}\n`)
  process.exit(1)
}
