import { describe, expect, it } from "@effect/vitest"
import { encodePaymentSignatureHeader } from "@x402/core/http"
import { Either, Redacted } from "effect"
import fc from "fast-check"
import { decodePaymentHeader, MAX_PAYMENT_HEADER_LENGTH } from "../../../codec/Wire.js"
import { b64, specPayloadV1, specPayloadV2 } from "./fixtures.js"

const v2 = (value: unknown) => decodePaymentHeader({ "payment-signature": b64(value) })
const v1 = (value: unknown) => decodePaymentHeader({ "x-payment": b64(value) })
const reason = (e: Either.Either<unknown, string>): string => Either.match(e, { onLeft: (l) => l, onRight: () => "<accepted>" })

describe("decodePaymentHeader: well-formed", () => {
  it("accepts the spec's v2 example as @x402/core encodes it, unpadded base64 too", () => {
    const header = encodePaymentSignatureHeader(specPayloadV2() as never)
    expect(Either.isRight(decodePaymentHeader({ "payment-signature": header }))).toBe(true)
    expect(Either.isRight(decodePaymentHeader({ "payment-signature": header.replace(/=+$/, "") }))).toBe(true)
  })

  it("prefers PAYMENT-SIGNATURE when both headers are present", () => {
    const both = decodePaymentHeader({ "payment-signature": b64(specPayloadV2()), "x-payment": b64(specPayloadV1()) })
    expect(Either.map(both, (p) => p.x402Version)).toEqual(Either.right(2))
  })

  it("accepts a v2 payment without resource or extra (both optional in the spec)", () => {
    const { resource: _r, ...rest } = specPayloadV2()
    const { extra: _e, ...accepted } = rest.accepted
    expect(Either.isRight(v2({ ...rest, accepted }))).toBe(true)
  })
})

describe("decodePaymentHeader: malformed is Left with a short reason", () => {
  const base = specPayloadV2()
  const cases: ReadonlyArray<readonly [string, Either.Either<unknown, string>, string]> = [
    ["no header", decodePaymentHeader({}), "no PAYMENT-SIGNATURE or X-PAYMENT header"],
    ["empty", decodePaymentHeader({ "payment-signature": "" }), "PAYMENT-SIGNATURE is empty"],
    ["not base64", decodePaymentHeader({ "payment-signature": "not base64!" }), "PAYMENT-SIGNATURE is not base64"],
    ["base64url", decodePaymentHeader({ "x-payment": b64(specPayloadV1()).replace(/\+/g, "-").replace(/\//g, "_") + "-_" }), "X-PAYMENT is not base64"],
    ["impossible length", decodePaymentHeader({ "payment-signature": "abcde" }), "PAYMENT-SIGNATURE is not base64"],
    ["not JSON", decodePaymentHeader({ "payment-signature": Buffer.from("hello").toString("base64") }), "PAYMENT-SIGNATURE is not base64-encoded UTF-8 JSON"],
    ["not UTF-8", decodePaymentHeader({ "payment-signature": Buffer.from([0x22, 0xff, 0xfe, 0x22]).toString("base64") }), "PAYMENT-SIGNATURE is not base64-encoded UTF-8 JSON"],
    ["JSON array", v2([base]), "PAYMENT-SIGNATURE is not a JSON object"],
    ["JSON null", v1(null), "X-PAYMENT is not a JSON object"],
    ["JSON string", v2("x402"), "PAYMENT-SIGNATURE is not a JSON object"],
    ["v1 inside PAYMENT-SIGNATURE", v2(specPayloadV1()), "x402Version must be 2 in PAYMENT-SIGNATURE"],
    ["v2 inside X-PAYMENT", v1(base), "x402Version must be 1 in X-PAYMENT"],
    ["version as a string", v2({ ...base, x402Version: "2" }), "x402Version must be 2 in PAYMENT-SIGNATURE"],
    ["accepted missing", v2({ ...base, accepted: undefined }), "accepted is missing"],
    ["accepted not an object", v2({ ...base, accepted: "exact" }), "accepted must be an object"],
    ["amount as a number", v2({ ...base, accepted: { ...base.accepted, amount: 10000 } }), "accepted.amount must be a string"],
    ["amount with decimals", v2({ ...base, accepted: { ...base.accepted, amount: "0.01" } }), "accepted.amount must be a whole number of atomic units as a string"],
    ["negative amount", v2({ ...base, accepted: { ...base.accepted, amount: "-1" } }), "accepted.amount must be a whole number of atomic units as a string"],
    ["v1 name as a v2 network", v2({ ...base, accepted: { ...base.accepted, network: "base-sepolia" } }), "accepted.network must be a CAIP-2 network id"],
    ["payTo empty", v2({ ...base, accepted: { ...base.accepted, payTo: "" } }), "accepted.payTo must not be empty"],
    ["asset missing", v2({ ...base, accepted: { ...base.accepted, asset: undefined } }), "accepted.asset is missing"],
    ["timeout missing", v2({ ...base, accepted: { ...base.accepted, maxTimeoutSeconds: undefined } }), "accepted.maxTimeoutSeconds is missing"],
    ["timeout zero", v2({ ...base, accepted: { ...base.accepted, maxTimeoutSeconds: 0 } }), "accepted.maxTimeoutSeconds must be positive"],
    ["extra an array", v2({ ...base, accepted: { ...base.accepted, extra: [] } }), "accepted.extra must be an object"],
    ["payload a string", v2({ ...base, payload: "0xsig" }), "payload must be an object"],
    ["payload an array", v2({ ...base, payload: [] }), "payload must be an object"],
    ["payload missing", v1({ ...specPayloadV1(), payload: undefined }), "payload is missing"],
    ["v1 network missing", v1({ ...specPayloadV1(), network: undefined }), "network is missing"],
    ["v1 scheme a number", v1({ ...specPayloadV1(), scheme: 1 }), "scheme must be a string"]
  ]
  for (const [name, result, expected] of cases) {
    it(name, () => expect(reason(result)).toBe(expected))
  }

  it("refuses a header longer than the bound before decoding it, and accepts one just under", () => {
    const padded = (size: number) => {
      const payload = { ...specPayloadV2(), extensions: { pad: "" } }
      const overhead = b64(payload).length
      payload.extensions.pad = "x".repeat(Math.floor(((size - overhead) * 3) / 4))
      return b64(payload)
    }
    const big = padded(MAX_PAYMENT_HEADER_LENGTH + 100)
    const fits = padded(MAX_PAYMENT_HEADER_LENGTH - 100)
    expect(big.length).toBeGreaterThan(MAX_PAYMENT_HEADER_LENGTH)
    expect(fits.length).toBeLessThanOrEqual(MAX_PAYMENT_HEADER_LENGTH)
    expect(reason(decodePaymentHeader({ "payment-signature": big }))).toBe(`PAYMENT-SIGNATURE is larger than ${MAX_PAYMENT_HEADER_LENGTH} bytes`)
    expect(Either.isRight(decodePaymentHeader({ "payment-signature": fits }))).toBe(true)
  })

  it("never echoes the buyer's input in a reason", () => {
    const marker = "<script>alert(1)</script>"
    const result = v2({ ...specPayloadV2(), accepted: { ...specPayloadV2().accepted, amount: marker, network: marker } })
    expect(reason(result)).not.toContain("script")
  })

  it("never throws, whatever the header holds", () => {
    fc.assert(fc.property(fc.string({ maxLength: 400 }), fc.boolean(), (s, asV2) => {
      const result = decodePaymentHeader(asV2 ? { "payment-signature": s } : { "x-payment": s })
      return Either.isLeft(result) || Either.isRight(result)
    }))
    fc.assert(fc.property(fc.jsonValue(), fc.boolean(), (json, asV2) => {
      const header = b64(json)
      const result = decodePaymentHeader(asV2 ? { "payment-signature": header } : { "x-payment": header })
      return Either.isLeft(result) || Either.isRight(result)
    }))
  })
})

describe("decodePaymentHeader: the x402 payment-identifier id", () => {
  const id = "pay_7d5d747be160e280504c099d984bcfe0"
  const schema = { $schema: "https://json-schema.org/draft/2020-12/schema", type: "object" }
  const withExtensions = (extensions: unknown) => v2({ ...specPayloadV2(), extensions })

  it("reads the id, redacted, and leaves it out of what is forwarded to the facilitator (other extensions stay)", () => {
    const decoded = Either.getOrThrow(withExtensions({ "payment-identifier": { info: { required: false, id }, schema }, other: { info: 1 } }))
    expect(decoded.paymentId === undefined ? null : Redacted.value(decoded.paymentId)).toBe(id)
    expect(String(decoded.paymentId)).not.toContain(id)
    expect(JSON.stringify(decoded.raw)).not.toContain(id)
    expect((decoded.raw as any).extensions).toEqual({ other: { info: 1 } })
  })

  it("an echoed declaration without an id, or no extensions at all, is no id", () => {
    expect(Either.getOrThrow(withExtensions({ "payment-identifier": { info: { required: false }, schema } })).paymentId).toBeUndefined()
    expect(Either.getOrThrow(v2(specPayloadV2())).paymentId).toBeUndefined()
  })

  it("a malformed id is Left naming the field, never echoing it", () => {
    for (const bad of ["short", "x".repeat(129), "has spaces in it 0123", 12345678901234567n.toString() + "!", 42]) {
      const left = reason(withExtensions({ "payment-identifier": { info: { required: false, id: bad } } }))
      expect(left).toMatch(/^extensions\.payment-identifier\.info\.id /)
      expect(left).not.toContain(String(bad))
    }
    expect(reason(withExtensions({ "payment-identifier": "nope" }))).toMatch(/^extensions\.payment-identifier /)
    expect(reason(withExtensions([1]))).toBe("extensions must be an object")
  })
})
