import { execFile } from "node:child_process"
import { createPrivateKey, hkdfSync, sign } from "node:crypto"
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { verifyReceiptSignatureJWS } from "@x402/extensions/offer-receipt"
import { Effect } from "effect"
import { canonicalJson, makeReceiptSigner } from "../../adapters/crypto/ReceiptSignerEd25519.js"
import { keyRingOf } from "../../adapters/crypto/SecretKeys.js"
import { verifyProvenance, verifyReceipt } from "../../index.js"
import { attestedBy, deliveryStatementOf, IN_TOTO_PAYLOAD_TYPE, pae, toBase64 } from "../../domain/Provenance.js"
import type { ReceiptClaims } from "../../domain/ReceiptClaims.js"
import { aSale } from "../support/fixtures.js"

/*
 * Issue 39, "receipts say what they are", tried as an attacker would: a test-twin receipt passed off as a paid
 * purchase; a DSSE envelope whose (unsigned) keyid is swapped for another published key's; and staging's proofs
 * presented against production's keys when both deployments share SECRET_KEYS.
 */

const SHARED_SECRET = Buffer.alloc(32, 9)
const ring = () => keyRingOf([{ kid: "k1", key: SHARED_SECRET }])
const production = makeReceiptSigner(ring(), "https://market.example")
const staging = makeReceiptSigner(ring(), "https://staging.market.example")

const claims = (livemode: boolean): ReceiptClaims => ({
  version: 1,
  network: livemode ? "eip155:8453" : "eip155:84532",
  resourceUrl: `https://market.example/${livemode ? "" : "test/"}checkout/chk_1`,
  payer: "0xBuyer",
  issuedAt: 1767323045,
  transaction: livemode ? "0xtx" : "sim_tx",
  asset: "0xUSDC",
  amount: "750000",
  payTo: "0xSeller",
  sale: "sale_1",
  listing: "lst_1",
  repository: "octo/widget",
  commit: "0123456789abcdef0123456789abcdef01234567",
  archive: { sha256: "ab".repeat(32), size: 13 },
  deliveredAt: 1767323045,
  livemode
})

type Signer = typeof production
const receiptBy = (signer: Signer, livemode: boolean) => Effect.runSync(signer.sign(claims(livemode)))

const SETTLED = aSale({ status: "settled", settledAt: new Date("2026-01-02T03:04:05.000Z"), transaction: "0xtx" })
const ARCHIVE = { sha256: "cd".repeat(32), size: 42 }
const factsOf = (livemode: boolean) =>
  deliveryStatementOf(new (SETTLED.constructor as any)({ ...SETTLED, livemode }), ARCHIVE, "octo-widget.tar.gz", "https://github.com/octo/widget")!

/** The envelope the marketplace serves: the statement names its signer, the signature covers it. */
const envelopeBy = (signer: Signer, livemode = true) => {
  const bytes = new TextEncoder().encode(JSON.stringify(attestedBy(factsOf(livemode), { marketplace: signer.origin, keyid: signer.kid })))
  const { kid, signature } = Effect.runSync(signer.signBytes(pae(IN_TOTO_PAYLOAD_TYPE, bytes)))
  return { payloadType: IN_TOTO_PAYLOAD_TYPE, payload: toBase64(bytes), signatures: [{ keyid: kid, sig: toBase64(signature) }] }
}
const withKeyid = (envelope: ReturnType<typeof envelopeBy>, keyid: string) => ({ ...envelope, signatures: [{ ...envelope.signatures[0]!, keyid }] })

/** The Ed25519 key each SECRET_KEYS key derived before keys were bound to their deployment (the same everywhere). */
const previousKeyOf = (secret: Buffer) =>
  createPrivateKey({
    key: Buffer.concat([
      Buffer.from("302e020100300506032b657004220420", "hex"),
      Buffer.from(hkdfSync("sha256", secret, Buffer.alloc(0), "repomarket x402 offer-receipt signing key, Ed25519, v1", 32))
    ]),
    format: "der",
    type: "pkcs8"
  })

const run = (...args: ReadonlyArray<string>) =>
  new Promise<{ code: number; stdout: string; stderr: string }>((resolve) =>
    execFile("npx", ["tsx", "scripts/verify-receipt.ts", ...args], { cwd: process.cwd() }, (error, stdout, stderr) =>
      resolve({ code: error === null ? 0 : (error as { code?: number }).code ?? -1, stdout, stderr })))

describe("a test-twin receipt passed off as a paid purchase", () => {
  it("is refused by verifyReceipt unless the caller accepts test receipts; accepted, it says it is a test purchase", async () => {
    const test = receiptBy(production, false)
    expect(await verifyReceipt(test, production.keys)).toEqual({
      valid: false,
      reason: "a test purchase (livemode: false), simulated money: nothing was paid; accepted only when asked (allowTest)"
    })
    expect(await verifyReceipt(test, { keys: production.keys }, { archive: claims(false).archive! })).toMatchObject({ valid: false })
    expect(await verifyReceipt(test, production.keys, { allowTest: true })).toEqual({
      valid: true,
      kid: production.kid,
      claims: claims(false),
      livemode: false,
      test: "test purchase, simulated money"
    })
    // A paid receipt is what it was: no allowTest needed, and it says livemode: true.
    expect(await verifyReceipt(receiptBy(production, true), production.keys)).toEqual({ valid: true, kid: production.kid, claims: claims(true), livemode: true })
    // The mode is signed: flipping livemode in the payload breaks the signature.
    const [h, , s] = test.split(".")
    const flipped = `${h}.${Buffer.from(canonicalJson(claims(true)), "utf8").toString("base64url")}.${s}`
    expect(await verifyReceipt(flipped, production.keys)).toMatchObject({ valid: false, reason: expect.stringContaining("the signature does not match") })
  })

  it("is refused by verifyProvenance too, and accepted with allowTest as a test purchase", async () => {
    const envelope = envelopeBy(production, false)
    expect(await verifyProvenance(envelope, production.keys)).toEqual({
      valid: false,
      reason: "a test purchase (livemode: false), simulated money: nothing was paid; accepted only when asked (allowTest)"
    })
    expect(await verifyProvenance(envelope, production.keys, { allowTest: true })).toMatchObject({
      valid: true,
      kid: production.kid,
      livemode: false,
      test: "test purchase, simulated money"
    })
    expect(await verifyProvenance(envelopeBy(production, true), production.keys)).toMatchObject({ valid: true, livemode: true })
  })

  it("makes scripts/verify-receipt.ts exit 1 unless --allow-test, which then says \"test purchase, simulated money\"", async () => {
    const dir = mkdtempSync(join(tmpdir(), "receipt-mode-"))
    const file = (name: string, content: string) => (writeFileSync(join(dir, name), content), join(dir, name))
    const receipt = file("test.jws", `${receiptBy(production, false)}\n`)
    const envelope = file("provenance.json", JSON.stringify(envelopeBy(production, false)))
    const jwks = file("jwks.json", JSON.stringify({ keys: production.keys }))

    const refused = await run(receipt, jwks)
    expect(refused.code).toBe(1)
    expect(refused.stdout).toBe("")
    expect(refused.stderr).toBe(
      "receipt does not verify: a test purchase (livemode: false), simulated money: nothing was paid; accepted only when asked (allowTest) (pass --allow-test to accept test purchases)\n"
    )
    expect(await run(envelope, jwks)).toMatchObject({ code: 1, stdout: "", stderr: expect.stringMatching(/^provenance does not verify: a test purchase \(livemode: false\)/) })

    const accepted = await run("--allow-test", receipt, jwks)
    expect(accepted.code, accepted.stderr).toBe(0)
    expect(JSON.parse(accepted.stdout)).toMatchObject({ valid: true, livemode: false, test: "test purchase, simulated money", claims: { transaction: "sim_tx" } })
    expect(accepted.stderr).toBe("test purchase, simulated money: this receipt is the test twin's (livemode: false), no money was paid\n")
    const attested = await run(envelope, jwks, "--allow-test")
    expect(attested.code, attested.stderr).toBe(0)
    expect(attested.stderr).toContain("test purchase, simulated money")

    // A paid receipt needs no flag and prints no warning.
    const paid = await run(file("paid.jws", receiptBy(production, true)), jwks)
    expect(paid).toMatchObject({ code: 0, stderr: "" })
    expect(JSON.parse(paid.stdout)).toMatchObject({ valid: true, livemode: true })
    expect((await run("--allow-tests", receipt, jwks)).code).toBe(2)
  }, 60_000)
})

describe("a provenance envelope whose keyid is rewritten", () => {
  it("fails when the keyid names another published key holding the same public key (an alias)", async () => {
    const envelope = envelopeBy(production)
    const alias = { ...production.keys[0]!, kid: "did:web:market.example#alias" }
    const keys = { keys: [...production.keys, alias] }
    expect(await verifyProvenance(envelope, keys)).toMatchObject({ valid: true, kid: production.kid })
    expect(await verifyProvenance(withKeyid(envelope, alias.kid), keys)).toEqual({
      valid: false,
      reason: `the statement names key ${production.kid}, but its signature is under keyid ${alias.kid}: the envelope's keyid was rewritten`
    })
  })

  it("fails when the keyid names any other value: another published key, an unknown one", async () => {
    const rotated = makeReceiptSigner(keyRingOf([{ kid: "k2", key: Buffer.alloc(32, 2) }, { kid: "k1", key: SHARED_SECRET }]), "https://market.example")
    const envelope = envelopeBy(rotated)
    for (const kid of rotated.keys.map((k) => k.kid).slice(1)) {
      expect(await verifyProvenance(withKeyid(envelope, kid), rotated.keys), kid).toMatchObject({ valid: false })
    }
    expect(await verifyProvenance(withKeyid(envelope, "did:web:market.example#nope"), rotated.keys)).toEqual({ valid: false, reason: "signed by none of the given keys" })
  })

  it("fails when the statement names no key (as every envelope signed before this check did) or a marketplace its key does not belong to", async () => {
    const sign = (statement: unknown) => {
      const bytes = new TextEncoder().encode(JSON.stringify(statement))
      const { kid, signature } = Effect.runSync(production.signBytes(pae(IN_TOTO_PAYLOAD_TYPE, bytes)))
      return { payloadType: IN_TOTO_PAYLOAD_TYPE, payload: toBase64(bytes), signatures: [{ keyid: kid, sig: toBase64(signature) }] }
    }
    expect(await verifyProvenance(sign(factsOf(true)), production.keys)).toEqual({
      valid: false,
      reason: "the statement does not name the key that signed it (predicate.keyid), so nothing binds it to these keys"
    })
    expect(await verifyProvenance(sign(attestedBy(factsOf(true), { marketplace: "https://staging.market.example", keyid: production.kid })), production.keys)).toEqual({
      valid: false,
      reason: `the statement's marketplace "https://staging.market.example" is not the origin key ${production.kid} belongs to`
    })
    expect(await verifyProvenance(sign(attestedBy(factsOf(true), { marketplace: "not a url", keyid: production.kid })), production.keys)).toMatchObject({ valid: false })
    const { livemode: _, ...noMode } = factsOf(true).predicate
    expect(await verifyProvenance(sign({ ...attestedBy(factsOf(true), { marketplace: production.origin, keyid: production.kid }), predicate: { ...noMode, marketplace: production.origin, keyid: production.kid } }), production.keys))
      .toEqual({ valid: false, reason: "the statement does not say whether money was paid (livemode)" })
  })
})

describe("two deployments sharing SECRET_KEYS (staging and production)", () => {
  it("sign with different keys, each bound to its BASE_URL", () => {
    expect(staging.kid).toBe("did:web:staging.market.example#k1.v2")
    expect(production.kid).toBe("did:web:market.example#k1.v2")
    expect(staging.keys[0]!.x).not.toBe(production.keys[0]!.x)
    expect(production.keys.map((k) => k.x)).not.toContain(staging.keys[0]!.x)
    // The same deployment, started again: the same keys.
    expect(makeReceiptSigner(ring(), "https://market.example").keys).toEqual(production.keys)
  })

  it("a staging receipt does not verify as production's, even given production's key directly", async () => {
    const receipt = receiptBy(staging, true)
    expect(await verifyReceipt(receipt, staging.keys)).toMatchObject({ valid: true })
    expect(await verifyReceipt(receipt, production.keys)).toMatchObject({ valid: false })
    // x402's own verifier takes the key it is given, not the kid: production's key must not hold.
    await expect(verifyReceiptSignatureJWS({ format: "jws", signature: receipt }, production.keys[0] as any)).rejects.toThrow()
  })

  it("staging's provenance with its keyid rewritten to production's does not verify against production's keys", async () => {
    const envelope = envelopeBy(staging)
    expect(await verifyProvenance(envelope, staging.keys)).toMatchObject({ valid: true })
    for (const kid of production.keys.map((k) => k.kid)) {
      expect(await verifyProvenance(withKeyid(envelope, kid), production.keys), kid).toMatchObject({ valid: false })
    }
    // An envelope staging signed before keys were bound (its key the same as production's previous one, no keyid in
    // the statement), with production's previous key id: the signature holds, the statement binds nothing.
    const bytes = new TextEncoder().encode(JSON.stringify(factsOf(true)))
    const old = {
      payloadType: IN_TOTO_PAYLOAD_TYPE,
      payload: toBase64(bytes),
      signatures: [{ keyid: "did:web:market.example#k1", sig: toBase64(sign(null, pae(IN_TOTO_PAYLOAD_TYPE, bytes), previousKeyOf(SHARED_SECRET))) }]
    }
    expect(await verifyProvenance(old, production.keys)).toMatchObject({ valid: false, reason: expect.stringContaining("does not name the key that signed it") })
  })

  it("a receipt the deployment signed before its keys were bound still verifies against its published keys", async () => {
    const header = Buffer.from(JSON.stringify({ alg: "EdDSA", kid: "did:web:market.example#k1" })).toString("base64url")
    const payload = Buffer.from(canonicalJson(claims(true)), "utf8").toString("base64url")
    const old = `${header}.${payload}.${sign(null, Buffer.from(`${header}.${payload}`), previousKeyOf(SHARED_SECRET)).toString("base64url")}`
    expect(await verifyReceipt(old, production.keys)).toEqual({ valid: true, kid: "did:web:market.example#k1", claims: claims(true), livemode: true })
    // Not against staging's: its previous key has the same bytes, but under staging's name.
    expect(await verifyReceipt(old, staging.keys)).toMatchObject({ valid: false })
  })
})
