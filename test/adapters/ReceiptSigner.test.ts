import { execFile } from "node:child_process"
import { createHash, generateKeyPairSync, randomBytes, sign } from "node:crypto"
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { canonicalize, verifyReceiptSignatureJWS } from "@x402/extensions/offer-receipt"
import { Effect } from "effect"
import { canonicalJson, didWebOf, makeReceiptSigner } from "../../adapters/crypto/ReceiptSignerEd25519.js"
import { keyRingOf } from "../../adapters/crypto/SecretKeys.js"
import { verifyReceipt } from "../../index.js"
import { IN_TOTO_PAYLOAD_TYPE, pae, toBase64 } from "../../domain/Provenance.js"
import type { ReceiptClaims } from "../../domain/ReceiptClaims.js"

const key = (n: number) => Buffer.alloc(32, n)
const ORIGIN = "https://market.example"
const DIGEST = { sha256: createHash("sha256").update("archive bytes").digest("hex"), size: 13 }
const CLAIMS: ReceiptClaims = {
  version: 1,
  network: "eip155:8453",
  resourceUrl: `${ORIGIN}/checkout/chk_1`,
  payer: "0xBuyer",
  issuedAt: 1767323045,
  transaction: "0xtx",
  asset: "0xUSDC",
  amount: "750000",
  payTo: "0xSeller",
  sale: "sale_1",
  listing: "lst_1",
  repository: "octo/widget",
  commit: "0123456789abcdef0123456789abcdef01234567",
  archive: DIGEST,
  deliveredAt: 1767323045,
  livemode: true
}

const signerOf = (...kids: ReadonlyArray<[string, number]>) =>
  makeReceiptSigner(keyRingOf(kids.map(([kid, n]) => ({ kid, key: key(n) })) as any), ORIGIN)
const signed = (signer: ReturnType<typeof signerOf>, claims: object = CLAIMS) => Effect.runSync(signer.sign(claims))
const b64url = (value: unknown) => Buffer.from(typeof value === "string" ? value : JSON.stringify(value), "utf8").toString("base64url")

describe("the marketplace's signing key", () => {
  it("is named after BASE_URL's did:web DID", () => {
    expect(didWebOf("https://market.example")).toBe("did:web:market.example")
    expect(didWebOf("http://127.0.0.1:3000")).toBe("did:web:127.0.0.1%3A3000")
    expect(didWebOf("https://example.com/shop/")).toBe("did:web:example.com:shop")
    expect(signerOf(["k1", 1]).did).toBe("did:web:market.example")
    expect(signerOf(["k1", 1]).origin).toBe(ORIGIN)
    // The signing key first (bound to this deployment), then the one derived before keys were bound, to verify only.
    expect(signerOf(["k1", 1]).keys.map((k) => k.kid)).toEqual(["did:web:market.example#k1.v2", "did:web:market.example#k1"])
    expect(signerOf(["k1", 1]).kid).toBe("did:web:market.example#k1.v2")
    expect(makeReceiptSigner(keyRingOf([{ kid: "k1", key: key(1) }]), ORIGIN, { previous: false }).keys.map((k) => k.kid)).toEqual(["did:web:market.example#k1.v2"])
  })

  it("is derived from the SECRET_KEYS key: the same key gives the same signer, another key another", () => {
    expect(signerOf(["k1", 1]).keys).toEqual(signerOf(["k1", 1]).keys)
    expect(signed(signerOf(["k1", 1]))).toBe(signed(signerOf(["k1", 1])))
    expect(signerOf(["k1", 2]).keys[0]!.x).not.toBe(signerOf(["k1", 1]).keys[0]!.x)
    // Not the AES key itself: the public key is no encoding of it.
    expect(signerOf(["k1", 1]).keys[0]!.x).not.toBe(key(1).toString("base64url"))
  })

  it("rotates with SECRET_KEYS: the first key signs, every key is published, receipts signed before still verify", async () => {
    const before = signerOf(["k1", 1])
    const after = signerOf(["k2", 2], ["k1", 1])
    expect(after.keys.map((k) => k.kid)).toEqual([
      "did:web:market.example#k2.v2",
      "did:web:market.example#k1.v2",
      "did:web:market.example#k2",
      "did:web:market.example#k1"
    ])
    const old = signed(before)
    const fresh = signed(after)
    expect(JSON.parse(Buffer.from(fresh.split(".")[0]!, "base64url").toString())).toEqual({ alg: "EdDSA", kid: "did:web:market.example#k2.v2" })
    expect(await verifyReceipt(old, { keys: after.keys })).toMatchObject({ valid: true, kid: "did:web:market.example#k1.v2" })
    expect(await verifyReceipt(fresh, { keys: after.keys })).toMatchObject({ valid: true, kid: "did:web:market.example#k2.v2" })
    // A key dropped from SECRET_KEYS is no longer published, and what it signed no longer verifies.
    expect(await verifyReceipt(old, signerOf(["k2", 2]).keys)).toEqual({ valid: false, reason: "signed by did:web:market.example#k1.v2, which is not among the given keys" })
  })

  it("signs the JCS form of the claims, as x402's own canonicalize writes it; the official verifier accepts it", async () => {
    const signer = signerOf(["k1", 1])
    const jws = signed(signer)
    expect(Buffer.from(jws.split(".")[1]!, "base64url").toString("utf8")).toBe(canonicalize(CLAIMS))
    expect(await verifyReceiptSignatureJWS({ format: "jws", signature: jws }, signer.keys[0] as any)).toEqual(CLAIMS)
    expect(canonicalJson({ b: [1, "x", null, true, { d: 1, c: undefined }], a: "é\"\\" })).toBe(canonicalize({ b: [1, "x", null, true, { d: 1 }], a: "é\"\\" }))
    // Control characters as RFC 8785 writes them (JSON.stringify's short escapes), where x402's helper differs.
    expect(canonicalJson({ a: "\n\u0001" })).toBe('{"a":"\\n\\u0001"}')
    expect(() => canonicalJson({ a: 1.5 })).toThrow()
    expect(() => canonicalJson({ a: 2 ** 60 })).toThrow()
    expect(() => canonicalJson({ a: () => 1 })).toThrow()
  })

  it("digests bytes it delivers itself", () => {
    expect(signerOf(["k1", 1]).digest(Buffer.from("archive bytes"))).toEqual(DIGEST)
  })
})

describe("verifyReceipt", () => {
  const signer = signerOf(["k1", 1])
  const jws = signed(signer)
  const [header, payload, signature] = jws.split(".") as [string, string, string]
  const refusal = async (receipt: Parameters<typeof verifyReceipt>[0], keys: Parameters<typeof verifyReceipt>[1] = signer.keys, expected = {}) => {
    const result = await verifyReceipt(receipt, keys, expected)
    expect(result.valid).toBe(false)
    return (result as { reason: string }).reason
  }

  it("accepts the receipt, as a string (trimmed) or as the extension's object, against a JWK Set or its keys", async () => {
    const valid = { valid: true, kid: "did:web:market.example#k1.v2", claims: CLAIMS, livemode: true }
    expect(await verifyReceipt(jws, signer.keys)).toEqual(valid)
    expect(await verifyReceipt(`${jws}\n`, { keys: signer.keys })).toEqual(valid)
    expect(await verifyReceipt({ format: "jws", signature: jws }, signer.keys, { archive: DIGEST })).toEqual(valid)
    expect(await verifyReceipt(jws, signer.keys, { archive: { ...DIGEST, sha256: DIGEST.sha256.toUpperCase() } })).toEqual(valid)
  })

  it("names the first check that fails", async () => {
    expect(await refusal({ format: "eip712", signature: jws })).toBe("format is \"eip712\", not \"jws\"")
    expect(await refusal("not a jws")).toBe("not a JWS compact serialization (header.payload.signature, base64url JSON)")
    expect(await refusal(`${b64url({ alg: "none", kid: signer.keys[0]!.kid })}.${payload}.`)).toBe("alg is \"none\", not \"EdDSA\"")
    expect(await refusal(`${b64url({ kid: signer.keys[0]!.kid })}.${payload}.${signature}`)).toBe("alg is undefined, not \"EdDSA\"")
    expect(await refusal(`${b64url({ alg: "EdDSA" })}.${payload}.${signature}`)).toBe("the JWS header names no kid")
    expect(await refusal(jws, [])).toBe("signed by did:web:market.example#k1.v2, which is not among the given keys")
    expect(await refusal(jws, [{ ...signer.keys[0]!, kty: "EC" } as any])).toBe("key did:web:market.example#k1.v2 is not an Ed25519 key")
    expect(await refusal(jws, [{ ...signer.keys[0]!, crv: "X25519" } as any])).toBe("key did:web:market.example#k1.v2 is not an Ed25519 key")
    expect(await refusal(jws, [{ ...signer.keys[0]!, x: undefined } as any])).toBe("key did:web:market.example#k1.v2 is not an Ed25519 key")
    expect(await refusal(jws, [{ ...signer.keys[0]!, x: "AAAA" }])).toBe("key did:web:market.example#k1.v2 could not be used to verify (not a valid Ed25519 public key)")
    expect(await refusal(`${header}.${b64url({ ...CLAIMS, amount: "1" })}.${signature}`)).toBe("the signature does not match: the receipt was altered or not signed by this key")
    expect(await refusal(`${header}.${payload}.${Buffer.from(randomBytes(64)).toString("base64url")}`)).toBe("the signature does not match: the receipt was altered or not signed by this key")
    expect(await refusal(signed(signer, { ...CLAIMS, payer: undefined }))).toBe("the signed payload is not a receipt: payer is missing or not a string")
    expect(await refusal(jws, signer.keys, { archive: { ...DIGEST, size: 14 } })).toBe(`the bytes differ from the receipt's archive (sha-256 ${DIGEST.sha256}, 13 bytes)`)
    expect(await refusal(jws, signer.keys, { archive: { ...DIGEST, sha256: "0".repeat(64) } })).toBe(`the bytes differ from the receipt's archive (sha-256 ${DIGEST.sha256}, 13 bytes)`)
    expect(await refusal(signed(signer, { ...CLAIMS, archive: null }), signer.keys, { archive: DIGEST })).toBe("the receipt names no archive digest, so it cannot vouch for these bytes")
  })

  it("refuses a forgery: the marketplace's kid on a signature by another key", async () => {
    const { privateKey } = generateKeyPairSync("ed25519")
    const forged = sign(null, Buffer.from(`${header}.${payload}`), privateKey).toString("base64url")
    expect(await refusal(`${header}.${payload}.${forged}`)).toBe("the signature does not match: the receipt was altered or not signed by this key")
  })
})

describe("the offline command", () => {
  const run = (...args: ReadonlyArray<string>) =>
    new Promise<{ code: number; stdout: string; stderr: string }>((resolve) =>
      execFile("npx", ["tsx", "scripts/verify-receipt.ts", ...args], { cwd: process.cwd() }, (error, stdout, stderr) =>
        resolve({ code: error === null ? 0 : (error as { code?: number }).code ?? -1, stdout, stderr })))

  it("verifies a receipt and the archive it names from files, and says why one does not hold", async () => {
    const signer = signerOf(["k1", 1])
    const dir = mkdtempSync(join(tmpdir(), "receipt-"))
    const file = (name: string, content: string | Buffer) => (writeFileSync(join(dir, name), content), join(dir, name))
    const receipt = file("receipt.jws", `${signed(signer)}\n`)
    const jwks = file("jwks.json", JSON.stringify({ keys: signer.keys }))
    const archive = file("repo.tar.gz", Buffer.from("archive bytes"))
    const ok = await run(receipt, jwks, archive)
    expect(ok.code, ok.stderr).toBe(0)
    expect(JSON.parse(ok.stdout)).toEqual({ valid: true, kid: "did:web:market.example#k1.v2", claims: CLAIMS, livemode: true })
    expect(ok.stderr).toBe("")
    const other = await run(receipt, jwks, file("other.tar.gz", Buffer.from("archive bytez")))
    expect(other).toMatchObject({ code: 1, stderr: expect.stringContaining("receipt does not verify: the bytes differ from the receipt's archive") })
    const [h, , s] = signed(signer).split(".")
    const altered = await run(file("altered.jws", `${h}.${b64url({ ...CLAIMS, payer: "0xMallory" })}.${s}`), jwks)
    expect(altered).toMatchObject({ code: 1, stderr: "receipt does not verify: the signature does not match: the receipt was altered or not signed by this key\n" })
    expect((await run()).code).toBe(2)
    // The same command takes a provenance envelope (JSON) in place of the receipt.
    const bytes = new TextEncoder().encode(JSON.stringify({ not: "a statement" }))
    const { kid, signature } = Effect.runSync(signer.signBytes(pae(IN_TOTO_PAYLOAD_TYPE, bytes)))
    const envelope = file("provenance.json", JSON.stringify({ payloadType: IN_TOTO_PAYLOAD_TYPE, payload: toBase64(bytes), signatures: [{ keyid: kid, sig: toBase64(signature) }] }))
    expect(await run(envelope, jwks)).toMatchObject({ code: 1, stderr: "provenance does not verify: the payload is not an in-toto Statement of a repomarket delivery\n" })
  }, 60_000)
})
