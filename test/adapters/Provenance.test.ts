import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { makeReceiptSigner } from "../../adapters/crypto/ReceiptSignerEd25519.js"
import { keyRingOf } from "../../adapters/crypto/SecretKeys.js"
import { verifyProvenance } from "../../codec/VerifyProvenance.js"
import { attestedBy, deliveryStatementOf, IN_TOTO_PAYLOAD_TYPE, pae, toBase64 } from "../../domain/Provenance.js"
import { aSale } from "../support/fixtures.js"

const signer = makeReceiptSigner(keyRingOf([{ kid: "k1", key: Buffer.alloc(32, 7) }]), "https://market.example")
const ARCHIVE = { sha256: "cd".repeat(32), size: 42 }
const SETTLED = aSale({ status: "settled", settledAt: new Date("2026-01-02T03:04:05.000Z"), transaction: "0xtx" })

/** A DSSE envelope of `payload` signed by the test signer, as the marketplace makes one. */
const envelopeOf = (payload: unknown, payloadType = IN_TOTO_PAYLOAD_TYPE) => {
  const bytes = new TextEncoder().encode(typeof payload === "string" ? payload : JSON.stringify(payload))
  const { kid, signature } = Effect.runSync(signer.signBytes(pae(payloadType, bytes)))
  return { payloadType, payload: toBase64(bytes), signatures: [{ keyid: kid, sig: toBase64(signature) }] }
}
const facts = () => deliveryStatementOf(SETTLED, ARCHIVE, "octo-widget-0123456.tar.gz", "https://github.com/octo/widget")!
/** The statement as the marketplace signs it: naming its origin and the signing key. */
const statement = () => attestedBy(facts(), { marketplace: "https://market.example", keyid: signer.kid })
const reason = async (envelope: unknown, expected = {}) => {
  const result = await verifyProvenance(envelope, signer.keys, expected)
  expect(result.valid).toBe(false)
  return (result as { reason: string }).reason
}

describe("DSSE's pre-authentication encoding", () => {
  it("is DSSEv1, the type's and the body's byte lengths, the type and the body", () => {
    expect(new TextDecoder().decode(pae("application/vnd.in-toto+json", new TextEncoder().encode("{}")))).toBe("DSSEv1 28 application/vnd.in-toto+json 2 {}")
    // Lengths count bytes, not characters; the DSSE specification's own example.
    expect(new TextDecoder().decode(pae("http://example.com/HelloWorld", new TextEncoder().encode("hello world")))).toBe("DSSEv1 29 http://example.com/HelloWorld 11 hello world")
    expect(pae("t", new TextEncoder().encode("é")).length).toBe("DSSEv1 1 t 2 ".length + 2)
  })
})

describe("the delivery statement", () => {
  it("names the archive as its subject and the sale, commit, payment and time as its predicate", () => {
    expect(facts()).toEqual({
      _type: "https://in-toto.io/Statement/v1",
      subject: [{ name: "octo-widget-0123456.tar.gz", digest: { sha256: ARCHIVE.sha256 } }],
      predicateType: "https://repomarket.dev/attestations/delivery/v1",
      predicate: {
        repository: "https://github.com/octo/widget",
        commit: SETTLED.commitSha,
        listing: SETTLED.listingId,
        sale: SETTLED.id,
        size: 42,
        deliveredAt: "2026-01-02T03:04:05.000Z",
        livemode: SETTLED.livemode,
        payment: { network: SETTLED.network, transaction: "0xtx", payer: SETTLED.payer, amount: SETTLED.amount.toString(), asset: SETTLED.asset, payTo: SETTLED.payTo }
      }
    })
  })

  it("of an update delivery: the update's commit and time and its id, the same sale and payment", () => {
    const update = { id: "dlv_1", commitSha: "f".repeat(40), deliveredAt: new Date("2026-01-09T00:00:00.000Z") }
    const of = deliveryStatementOf(SETTLED, ARCHIVE, "octo-widget-fffffff.tar.gz", "https://github.com/octo/widget", update)!
    expect(of.predicate).toEqual({ ...facts().predicate, commit: update.commitSha, deliveredAt: "2026-01-09T00:00:00.000Z", delivery: "dlv_1" })
    expect(of.subject).toEqual([{ name: "octo-widget-fffffff.tar.gz", digest: { sha256: ARCHIVE.sha256 } }])
    expect(Object.keys(facts().predicate)).not.toContain("delivery")
  })

  it("as signed, names the marketplace's origin and the signing key's id in its predicate", () => {
    expect(statement()).toEqual({ ...facts(), predicate: { ...facts().predicate, marketplace: "https://market.example", keyid: "did:web:market.example#k1.v2" } })
  })

  it("is none for a sale not settled, without a settlement time, a pinned commit or a transaction", () => {
    for (const fields of [{ status: "pending" as const }, { settledAt: null }, { commitSha: null }, { transaction: null }]) {
      expect(deliveryStatementOf(new (SETTLED.constructor as any)({ ...SETTLED, ...fields }), ARCHIVE, "f", "r"), JSON.stringify(fields)).toBeNull()
    }
  })
})

describe("verifyProvenance", () => {
  it("accepts the marketplace's envelope, with or without the bytes it names (standard or URL-safe base64)", async () => {
    const envelope = envelopeOf(statement())
    expect(await verifyProvenance(envelope, signer.keys)).toEqual({ valid: true, kid: "did:web:market.example#k1.v2", statement: statement(), livemode: true })
    expect(await verifyProvenance(envelope, { keys: signer.keys }, { archive: { sha256: ARCHIVE.sha256.toUpperCase(), size: 42 } })).toMatchObject({ valid: true })
    const urlSafe = { ...envelope, signatures: [{ ...envelope.signatures[0]!, sig: envelope.signatures[0]!.sig.replace(/\+/g, "-").replace(/\//g, "_") }] }
    expect(await verifyProvenance(urlSafe, signer.keys)).toMatchObject({ valid: true })
  })

  it("names the first check that fails", async () => {
    const envelope = envelopeOf(statement())
    expect(await reason(null)).toBe("not a DSSE envelope (payloadType, payload, signatures)")
    expect(await reason({ ...envelope, payload: 1 })).toBe("not a DSSE envelope (payloadType, payload, signatures)")
    expect(await reason({ ...envelope, signatures: {} })).toBe("not a DSSE envelope (payloadType, payload, signatures)")
    expect(await reason({ ...envelope, payloadType: "application/json" })).toBe("payloadType is not application/vnd.in-toto+json")
    expect(await reason({ ...envelope, payload: "not base64!" })).toBe("the payload is not base64")
    expect(await reason({ ...envelope, payload: "a===" })).toBe("the payload is not base64")
    expect(await reason({ ...envelope, signatures: [] })).toBe("signed by none of the given keys")
    expect(await reason({ ...envelope, signatures: [{ keyid: "did:web:other#k1", sig: envelope.signatures[0]!.sig }, "x", { keyid: signer.keys[0]!.kid, sig: 1 }] })).toBe("signed by none of the given keys")
    expect(await reason({ ...envelope, payload: envelopeOf({ ...statement(), subject: [] }).payload })).toBe("no signature matches: the statement was altered or not signed by these keys")
    // Signed under another payload type: the PAE differs, so the signature does not carry over.
    expect(await reason({ ...envelopeOf(statement(), "application/json"), payloadType: IN_TOTO_PAYLOAD_TYPE })).toBe("no signature matches: the statement was altered or not signed by these keys")
    expect(await reason(envelopeOf("{not json"))).toBe("the payload is not UTF-8 JSON")
    expect(await reason(envelopeOf({ ...statement(), _type: "https://in-toto.io/Statement/v0.1" }))).toBe("the payload is not an in-toto Statement of a repomarket delivery")
    expect(await reason(envelopeOf({ ...statement(), predicateType: "https://slsa.dev/provenance/v1" }))).toBe("the payload is not an in-toto Statement of a repomarket delivery")
    expect(await reason(envelopeOf([statement()]))).toBe("the payload is not an in-toto Statement of a repomarket delivery")
    expect(await reason(envelopeOf({ ...statement(), subject: [{ name: "f", digest: { sha256: "CD".repeat(32) } }] }))).toBe("the statement names no SHA-256 subject")
    expect(await reason(envelopeOf({ ...statement(), subject: [{ name: "f", digest: {} }] }))).toBe("the statement names no SHA-256 subject")
    expect(await reason(envelopeOf({ ...statement(), subject: "x" }))).toBe("the statement names no SHA-256 subject")
    expect(await reason(envelope, { archive: { ...ARCHIVE, size: 43 } })).toBe(`the bytes differ from the statement's subject (sha-256 ${ARCHIVE.sha256}, 42 bytes)`)
    expect(await reason(envelope, { archive: { ...ARCHIVE, sha256: "0".repeat(64) } })).toBe(`the bytes differ from the statement's subject (sha-256 ${ARCHIVE.sha256}, 42 bytes)`)
    expect(await reason(envelopeOf({ ...statement(), predicate: "x" }), { archive: ARCHIVE })).toBe("the statement does not name the key that signed it (predicate.keyid), so nothing binds it to these keys")
    expect(await reason(envelopeOf(facts()))).toBe("the statement does not name the key that signed it (predicate.keyid), so nothing binds it to these keys")
    expect(await reason(envelopeOf({ ...statement(), predicate: { ...statement().predicate, keyid: 7 } }))).toBe("the statement does not name the key that signed it (predicate.keyid), so nothing binds it to these keys")
    expect(await reason({ ...envelope, signatures: [{ ...envelope.signatures[0]!, keyid: "did:web:market.example#alias" }] })).toBe("signed by none of the given keys")
    const aliased = [...signer.keys, { ...signer.keys[0]!, kid: "did:web:market.example#alias" }]
    expect((await verifyProvenance({ ...envelope, signatures: [{ ...envelope.signatures[0]!, keyid: "did:web:market.example#alias" }] }, aliased)))
      .toEqual({ valid: false, reason: "the statement names key did:web:market.example#k1.v2, but its signature is under keyid did:web:market.example#alias: the envelope's keyid was rewritten" })
    expect(await reason(envelopeOf({ ...statement(), predicate: { ...statement().predicate, marketplace: "https://other.example" } }))).toBe("the statement's marketplace \"https://other.example\" is not the origin key did:web:market.example#k1.v2 belongs to")
    expect(await reason(envelopeOf({ ...statement(), predicate: { ...statement().predicate, marketplace: "https://market.example.evil" } }))).toBe("the statement's marketplace \"https://market.example.evil\" is not the origin key did:web:market.example#k1.v2 belongs to")
    expect(await reason(envelopeOf({ ...statement(), predicate: { ...statement().predicate, marketplace: undefined } }))).toBe("the statement's marketplace undefined is not the origin key did:web:market.example#k1.v2 belongs to")
    expect(await reason(envelopeOf({ ...statement(), predicate: { ...statement().predicate, marketplace: "::" } }))).toBe("the statement's marketplace \"::\" is not the origin key did:web:market.example#k1.v2 belongs to")
    expect(await reason(envelopeOf({ ...statement(), predicate: { ...statement().predicate, livemode: "true" } }))).toBe("the statement does not say whether money was paid (livemode)")
    expect(await reason(envelopeOf({ ...statement(), predicate: { ...statement().predicate, livemode: false } }), { archive: ARCHIVE })).toBe("a test purchase (livemode: false), simulated money: nothing was paid; accepted only when asked (allowTest)")
    expect(await reason(envelopeOf({ ...statement(), predicate: { ...statement().predicate, size: "42" } }), { archive: ARCHIVE })).toBe(`the bytes differ from the statement's subject (sha-256 ${ARCHIVE.sha256}, 42 bytes)`)
  })

  it("tries every signature: one by an unknown key beside the marketplace's does not hide it", async () => {
    const envelope = envelopeOf(statement())
    const both = { ...envelope, signatures: [{ keyid: signer.keys[0]!.kid, sig: toBase64(new Uint8Array(64)) }, ...envelope.signatures] }
    expect(await verifyProvenance(both, signer.keys)).toMatchObject({ valid: true })
  })
})
