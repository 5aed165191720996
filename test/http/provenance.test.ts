import { execFile } from "node:child_process"
import { createHash } from "node:crypto"
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, layer } from "@effect/vitest"
import { x402Client } from "@x402/core/client"
import { ExactEvmScheme } from "@x402/evm/exact/client"
import { wrapFetchWithPayment } from "@x402/fetch"
import { Effect } from "effect"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { verifyProvenance } from "../../codec/VerifyProvenance.js"
import { BASE_WALLET } from "../support/app.js"
import { expectGoods, get, local, origin, PurchaseApp, REAL_TIME, receiptOf, sell, WIDGET_FILENAME, WIDGET_SHA } from "../support/purchase.js"

/*
 * Issue 30, provenance: each delivered archive has an in-toto Statement (subject: its SHA-256; predicate: the
 * repository, commit, listing, sale, payment and time) in a DSSE envelope signed with the marketplace's key, at
 * `<receipt link>/provenance`. Verified here by the package's verifier and, independently, by OpenSSL over DSSE's
 * pre-authentication encoding, with exactly the shell lines docs/receipts.md gives.
 */

/** The documented OpenSSL check (docs/receipts.md), run in a directory holding provenance.json and jwks.json. */
const OPENSSL_CHECK = `set -eu
jq -r .payload provenance.json | base64 -d > statement.json
jq -r '.signatures[0].sig' provenance.json | base64 -d > sig.bin
{ printf 'DSSEv1 28 application/vnd.in-toto+json %s ' "$(wc -c < statement.json)"; cat statement.json; } > pae.bin
kid=$(jq -r '.signatures[0].keyid' provenance.json)
{ printf '302a300506032b6570032100' | xxd -r -p; printf '%s=' "$(jq -r --arg k "$kid" '.keys[] | select(.kid == $k) | .x' jwks.json | tr '_-' '/+')" | base64 -d; } > key.der
openssl pkey -pubin -inform DER -in key.der -out key.pem
openssl pkeyutl -verify -pubin -inkey key.pem -rawin -in pae.bin -sigfile sig.bin
jq -e --arg k "$kid" '.predicate.keyid == $k' statement.json
jq -r 'if .predicate.livemode == true then "paid purchase" else "test purchase, simulated money" end' statement.json`

const shell = (dir: string, script: string) =>
  new Promise<{ code: number; stdout: string; stderr: string }>((resolve) =>
    execFile("bash", ["-c", script], { cwd: dir }, (error, stdout, stderr) =>
      resolve({ code: error === null ? 0 : (error as { code?: number }).code ?? -1, stdout, stderr })))

const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex")

describe("provenance of a delivered archive", () => {
  layer(PurchaseApp(), REAL_TIME)((it) => {
    it.effect("an in-toto Statement of the archive in a DSSE envelope, verified by the package and by OpenSSL; altered, it fails", () =>
      Effect.gen(function*() {
        const seller = yield* sell("provenance@example.com", { price_usd: "0.50", wallet_base: BASE_WALLET })
        const buyer = privateKeyToAccount(generatePrivateKey())
        const paid = yield* Effect.promise(() => wrapFetchWithPayment(fetch, new x402Client().register("eip155:*", new ExactEvmScheme(buyer)))(seller.test))
        const bytes = yield* expectGoods(paid)
        const link = yield* local(receiptOf(paid))

        const res = yield* get(`${link}/provenance`)
        expect(res.status).toBe(200)
        expect(res.headers.get("content-type")).toMatch(/^application\/vnd\.dsse\.envelope\.v1\+json/)
        const envelope: any = yield* Effect.promise(() => res.json())
        const keysAnswer = yield* get(`${yield* origin}/.well-known/jwks.json`)
        const jwks: any = yield* Effect.promise(() => keysAnswer.json())
        const archive = { sha256: sha256(bytes), size: bytes.length }
        // A test-twin purchase: refused unless test purchases are accepted, and then said to be one.
        expect(yield* Effect.promise(() => verifyProvenance(envelope, jwks, { archive }))).toEqual({
          valid: false,
          reason: "a test purchase (livemode: false), simulated money: nothing was paid; accepted only when asked (allowTest)"
        })
        const checked = yield* Effect.promise(() => verifyProvenance(envelope, jwks, { archive, allowTest: true }))
        expect(checked).toMatchObject({
          valid: true,
          kid: jwks.keys[0].kid,
          livemode: false,
          test: "test purchase, simulated money",
          statement: {
            _type: "https://in-toto.io/Statement/v1",
            subject: [{ name: WIDGET_FILENAME, digest: { sha256: archive.sha256 } }],
            predicateType: "https://repomarket.dev/attestations/delivery/v1",
            predicate: {
              repository: "https://github.com/Octo-Org/Widget",
              commit: WIDGET_SHA,
              size: archive.size,
              livemode: false,
              payment: { network: "eip155:84532", payer: buyer.address, amount: "500000", payTo: BASE_WALLET },
              // Who signed it, inside what is signed: this deployment's origin and the key.
              marketplace: "http://repomarket.test",
              keyid: jwks.keys[0].kid
            }
          }
        })

        // The same, by OpenSSL with the documented lines; then with one byte of the statement changed.
        const dir = mkdtempSync(join(tmpdir(), "provenance-"))
        writeFileSync(join(dir, "provenance.json"), JSON.stringify(envelope))
        writeFileSync(join(dir, "jwks.json"), JSON.stringify(jwks))
        const verified = yield* Effect.promise(() => shell(dir, OPENSSL_CHECK))
        expect(verified, verified.stderr).toMatchObject({ code: 0, stdout: expect.stringContaining("Signature Verified Successfully") })
        expect(verified.stdout).toMatch(/true\ntest purchase, simulated money\n$/)

        // The keyid rewritten to another key the JWK Set lists with the same public key: the signature still holds
        // over the PAE, but the statement names the key that signed it, so neither check accepts it.
        const alias = { ...jwks.keys[0], kid: "did:web:repomarket.test#alias" }
        const aliased = { keys: [...jwks.keys, alias] }
        const rewritten = { ...envelope, signatures: [{ ...envelope.signatures[0], keyid: alias.kid }] }
        expect(yield* Effect.promise(() => verifyProvenance(rewritten, aliased, { allowTest: true }))).toEqual({
          valid: false,
          reason: `the statement names key ${jwks.keys[0].kid}, but its signature is under keyid ${alias.kid}: the envelope's keyid was rewritten`
        })
        writeFileSync(join(dir, "provenance.json"), JSON.stringify(rewritten))
        writeFileSync(join(dir, "jwks.json"), JSON.stringify(aliased))
        const swapped = yield* Effect.promise(() => shell(dir, OPENSSL_CHECK))
        expect(swapped.stdout).toContain("Signature Verified Successfully")
        expect(swapped.code).not.toBe(0)
        writeFileSync(join(dir, "jwks.json"), JSON.stringify(jwks))
        const statement = Buffer.from(envelope.payload, "base64").toString("utf8")
        const altered = { ...envelope, payload: Buffer.from(statement.replace(archive.sha256, "0".repeat(64)), "utf8").toString("base64") }
        writeFileSync(join(dir, "provenance.json"), JSON.stringify(altered))
        expect((yield* Effect.promise(() => shell(dir, OPENSSL_CHECK))).code).not.toBe(0)
        expect(yield* Effect.promise(() => verifyProvenance(altered, jwks, { allowTest: true }))).toEqual({
          valid: false,
          reason: "no signature matches: the statement was altered or not signed by these keys"
        })
        // Other bytes than the statement's subject.
        expect(yield* Effect.promise(() => verifyProvenance(envelope, jwks, { archive: { sha256: sha256(Buffer.from("x")), size: 1 }, allowTest: true }))).toMatchObject({ valid: false })

        // An unknown link is a 404 problem, as for the archive itself.
        const unknown = yield* get(`${link.replace(/\/downloads\/.*/, "/downloads/sale_nope.abc")}/provenance`)
        expect(unknown.status).toBe(404)
        expect(unknown.headers.get("content-type")).toMatch(/^application\/problem\+json/)
      }), 60_000)
  })
})
