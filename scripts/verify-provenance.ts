/*
 * Verifies a repomarket provenance attestation offline: the DSSE envelope of `<receipt link>/provenance` (an
 * in-toto Statement of the delivery), with the marketplace's published keys, and optionally the archive:
 *
 *   npx tsx scripts/verify-provenance.ts <provenance.json> <jwks.json> [archive.tar.gz]
 *
 * Prints the verified statement as JSON and exits 0; otherwise prints why it does not hold and exits 1 (2 for
 * bad arguments). Nothing is fetched: the check is the package's own `verifyProvenance` over these files.
 */
import { createHash } from "node:crypto"
import { readFileSync } from "node:fs"
import { verifyProvenance } from "../codec/VerifyProvenance.js"

const [envelopePath, keysPath, archivePath] = process.argv.slice(2)
if (envelopePath === undefined || keysPath === undefined) {
  process.stderr.write("usage: npx tsx scripts/verify-provenance.ts <provenance.json> <jwks.json> [archive.tar.gz]\n")
  process.exit(2)
}
const envelope: unknown = JSON.parse(readFileSync(envelopePath, "utf8"))
const keys = JSON.parse(readFileSync(keysPath, "utf8"))
const archive = archivePath === undefined ? undefined : readFileSync(archivePath)
const expected = archive === undefined ? {} : { archive: { sha256: createHash("sha256").update(archive).digest("hex"), size: archive.length } }
const result = await verifyProvenance(envelope, keys, expected)
if (result.valid) {
  process.stdout.write(`${JSON.stringify({ valid: true, kid: result.kid, statement: result.statement }, null, 2)}\n`)
} else {
  process.stderr.write(`provenance does not verify: ${result.reason}\n`)
  process.exit(1)
}
