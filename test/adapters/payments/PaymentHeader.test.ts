/*
 * Reading a buyer's payment header (adapters/x402/PaymentHeader.ts): a stranger writes it, so every step
 * (size, base64, UTF-8, JSON, shape, version) refuses with a short reason that never echoes the input, and a
 * v1 payment is mapped onto the same SubmittedPayment as a v2 one.
 */
import { describe, expect, it } from "@effect/vitest"
import { Either, Option, Redacted } from "effect"
import { decodeBase64Json, decodePaymentHeader, MAX_PAYMENT_HEADER_LENGTH } from "../../../codec/PaymentHeader.js"
import { b64, BASE_PAYTO, SPEC_AUTHORIZATION, specPayloadV1, specPayloadV2 } from "../x402/fixtures.js"

const v2 = (value: unknown) => decodePaymentHeader({ "payment-signature": b64(value) })
const v1 = (value: unknown) => decodePaymentHeader({ "x-payment": b64(value) })
const reason = (e: Either.Either<unknown, string>): string => Either.match(e, { onLeft: (l) => l, onRight: () => "<accepted>" })
const accepted = specPayloadV2().accepted
const withAccepted = (over: Record<string, unknown>) => v2({ ...specPayloadV2(), accepted: { ...accepted, ...over } })

describe("decodeBase64Json: size, base64, UTF-8, JSON object", () => {
  it("a header of exactly the bound is decoded; one character more is refused unread", () => {
    // 'A' × n is valid base64 (of zero bytes): not JSON, so it gets as far as the JSON step.
    expect(reason(decodeBase64Json("H", "A".repeat(MAX_PAYMENT_HEADER_LENGTH)))).toBe("H is not base64-encoded UTF-8 JSON")
    expect(reason(decodeBase64Json("H", "A".repeat(MAX_PAYMENT_HEADER_LENGTH + 1)))).toBe(`H is larger than ${MAX_PAYMENT_HEADER_LENGTH} bytes`)
    expect(MAX_PAYMENT_HEADER_LENGTH).toBe(16_384)
  })

  it("standard base64, padded or not, in each length class; anything else is not base64", () => {
    const json = (text: string) => Buffer.from(text, "utf8").toString("base64")
    // JSON objects whose base64 ends in "==", "=" and no padding.
    for (const text of [`{"a":1}`, `{"ab":1}`, `{"abc":1}`, `{"a":"+/"}`, `{"k":"\u00ff\u00fe"}`]) {
      const encoded = json(text)
      expect(decodeBase64Json("H", encoded), text).toEqual(Either.right(JSON.parse(text)))
      expect(decodeBase64Json("H", encoded.replace(/=+$/, "")), `${text} unpadded`).toEqual(Either.right(JSON.parse(text)))
    }
    const good = json(`{"a":1}`) // eyJhIjoxfQ==
    for (const bad of [
      "not base64!",
      `${good} `,
      ` ${good}`,
      `${good}\n`,
      `${good.slice(0, 4)}\n${good.slice(4)}`,
      good.slice(0, -1),
      `${good}=`,
      "eyJhIjoxfQ===",
      "e===",
      "eyJhIjoxf",
      "ey=J",
      "=eyJ",
      "eyJhIjoxfQ-_",
      "eyJh.IjoxfQ"
    ]) {
      expect(reason(decodeBase64Json("H", bad)), JSON.stringify(bad)).toBe("H is not base64")
    }
  })

  it("empty is its own reason; bytes that are not UTF-8 or not JSON are refused", () => {
    expect(reason(decodeBase64Json("H", ""))).toBe("H is empty")
    expect(reason(decodeBase64Json("H", Buffer.from([0x7b, 0xc3, 0x28, 0x7d]).toString("base64")))).toBe("H is not base64-encoded UTF-8 JSON")
    expect(reason(decodeBase64Json("H", Buffer.from("{'a':1}").toString("base64")))).toBe("H is not base64-encoded UTF-8 JSON")
  })

  it("JSON that is not an object (array, null, number, string, boolean) is refused", () => {
    for (const value of [[], [{}], null, 1, "x402", true]) {
      expect(reason(decodeBase64Json("H", b64(value))), JSON.stringify(value)).toBe("H is not a JSON object")
    }
  })
})

describe("decodePaymentHeader: which header", () => {
  it("PAYMENT-SIGNATURE is v2 and wins over X-PAYMENT, even when it is broken; X-PAYMENT alone is v1", () => {
    expect(Either.map(decodePaymentHeader({ "payment-signature": b64(specPayloadV2()), "x-payment": b64(specPayloadV1()) }), (p) => p.x402Version))
      .toEqual(Either.right(2))
    expect(reason(decodePaymentHeader({ "payment-signature": "", "x-payment": b64(specPayloadV1()) }))).toBe("PAYMENT-SIGNATURE is empty")
    expect(Either.map(decodePaymentHeader({ "x-payment": b64(specPayloadV1()), authorization: "Bearer x" }), (p) => p.x402Version)).toEqual(Either.right(1))
    expect(reason(decodePaymentHeader({ authorization: "Bearer x" }))).toBe("no PAYMENT-SIGNATURE or X-PAYMENT header")
    expect(reason(decodePaymentHeader({ "x-payment": "" }))).toBe("X-PAYMENT is empty")
  })
})

describe("decodePaymentHeader: a v2 payment", () => {
  it("maps to a SubmittedPayment: scheme and network from accepted, the accepted terms, the payload, the header object as raw", () => {
    const decoded = Either.getOrThrow(v2(specPayloadV2()))
    expect(decoded).toEqual({
      x402Version: 2,
      scheme: "exact",
      network: "eip155:84532",
      accepted: Option.some({
        scheme: "exact",
        network: "eip155:84532",
        asset: "0x036CbD53842c5426634e7929541eC2318f3dCF7e",
        amount: "10000",
        payTo: BASE_PAYTO
      }),
      payload: SPEC_AUTHORIZATION,
      paymentId: undefined,
      raw: specPayloadV2()
    })
  })

  it("the wrong version, or a version that is not the number 2, is refused", () => {
    for (const x402Version of [1, 3, "2", null, undefined]) {
      expect(reason(v2({ ...specPayloadV2(), x402Version })), String(x402Version)).toBe(
        x402Version === undefined ? "x402Version is missing" : "x402Version must be 2 in PAYMENT-SIGNATURE"
      )
    }
  })

  it("each accepted field: present, of its type, and well-formed", () => {
    const cases: ReadonlyArray<readonly [Record<string, unknown>, string]> = [
      [{ scheme: undefined }, "accepted.scheme is missing"],
      [{ scheme: "" }, "accepted.scheme must not be empty"],
      [{ scheme: 1 }, "accepted.scheme must be a string"],
      [{ asset: "" }, "accepted.asset must not be empty"],
      [{ payTo: undefined }, "accepted.payTo is missing"],
      [{ amount: "" }, "accepted.amount must be a whole number of atomic units as a string"],
      [{ amount: "1".repeat(79) }, "accepted.amount must be a whole number of atomic units as a string"],
      [{ amount: "+1" }, "accepted.amount must be a whole number of atomic units as a string"],
      [{ amount: "1 " }, "accepted.amount must be a whole number of atomic units as a string"],
      [{ amount: "0x10" }, "accepted.amount must be a whole number of atomic units as a string"],
      [{ maxTimeoutSeconds: -1 }, "accepted.maxTimeoutSeconds must be positive"],
      [{ maxTimeoutSeconds: "300" }, "accepted.maxTimeoutSeconds must be a number"],
      [{ extra: "x" }, "accepted.extra must be an object"]
    ]
    for (const [over, expected] of cases) expect(reason(withAccepted(over)), JSON.stringify(over)).toBe(expected)
    expect(reason(withAccepted({ amount: "1".repeat(78) }))).toBe("<accepted>")
    expect(reason(withAccepted({ amount: "0" }))).toBe("<accepted>")
    expect(reason(withAccepted({ extra: null }))).toBe("<accepted>")
    expect(reason(withAccepted({ maxTimeoutSeconds: 0.5 }))).toBe("<accepted>")
  })

  it("the network is a CAIP-2 id: 3 to 8 lower-case namespace characters, 1 to 32 reference characters", () => {
    for (const network of ["eip155:8453", "abc:1", "abcdefgh:1", "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp", `x-y:${"a".repeat(32)}`, "bip122:000000000019d6689c085ae165831e93", "a-b:A_b-9"]) {
      expect(reason(withAccepted({ network })), network).toBe("<accepted>")
    }
    for (const network of ["ab:1", "abcdefghi:1", "EIP155:8453", "eip155:", "eip155", `eip155:${"a".repeat(33)}`, "eip155:84.53", "eip155:8453 ", " eip155:8453", "eip_155:1", "eip155:1:2"]) {
      expect(reason(withAccepted({ network })), network).toBe("accepted.network must be a CAIP-2 network id")
    }
  })

  it("resource may be absent or null, else an object; payload must be an object", () => {
    const { resource: _r, ...noResource } = specPayloadV2()
    expect(reason(v2(noResource))).toBe("<accepted>")
    expect(reason(v2({ ...specPayloadV2(), resource: null }))).toBe("<accepted>")
    expect(reason(v2({ ...specPayloadV2(), resource: "https://market.example" }))).toBe("resource must be an object")
    expect(reason(v2({ ...specPayloadV2(), resource: [] }))).toBe("resource must be an object")
    expect(reason(v2({ ...specPayloadV2(), payload: null }))).toBe("payload must be an object")
    expect(reason(v2({ ...specPayloadV2(), payload: undefined }))).toBe("payload is missing")
  })
})

describe("decodePaymentHeader: the payment-identifier id", () => {
  const id = "pay_7d5d747be160e280504c099d984bcfe0"
  const withExtensions = (extensions: unknown) => v2({ ...specPayloadV2(), extensions })
  const idOf = (e: Either.Either<{ readonly paymentId?: Redacted.Redacted<string> | undefined }, string>) =>
    Either.map(e, (p) => (p.paymentId === undefined ? undefined : Redacted.value(p.paymentId)))
  const MALFORMED_ID = `extensions.payment-identifier.info.id must be 16 to 128 characters of A-Z, a-z, 0-9, "_" and "-"`

  it("16 and 128 characters are ids; 15 and 129, or other characters, are malformed", () => {
    for (const good of ["a".repeat(16), "Z".repeat(128), "abc_DEF-0123456789"]) {
      expect(idOf(withExtensions({ "payment-identifier": { info: { required: false, id: good } } })), good).toEqual(Either.right(good))
    }
    for (const bad of ["a".repeat(15), "a".repeat(129), "abcdefghijklmno!", "abcdefghijklmnop ", 1234567890123456]) {
      expect(reason(withExtensions({ "payment-identifier": { info: { id: bad } } })), String(bad)).toBe(MALFORMED_ID)
    }
  })

  it("no extensions, null extensions, other extensions only, or an info without id: no id", () => {
    for (const extensions of [undefined, null, {}, { other: { info: {} } }, { "payment-identifier": { info: { required: false } } }]) {
      expect(idOf(withExtensions(extensions)), JSON.stringify(extensions)).toEqual(Either.right(undefined))
    }
  })

  it("extensions or the payment-identifier extension of the wrong shape is malformed", () => {
    for (const extensions of [[], "x", 1]) expect(reason(withExtensions(extensions)), JSON.stringify(extensions)).toBe("extensions must be an object")
    const shape = "extensions.payment-identifier must be an object with an info object"
    for (const extension of [null, "x", [], {}, { info: null }, { info: "x" }, { info: [] }]) {
      expect(reason(withExtensions({ "payment-identifier": extension })), JSON.stringify(extension)).toBe(shape)
    }
  })

  it("the id is kept out of what is forwarded: the extension removed, the others kept, extensions dropped when it was alone", () => {
    const alone = Either.getOrThrow(withExtensions({ "payment-identifier": { info: { required: false, id } } }))
    expect(alone.raw).toEqual(specPayloadV2())
    expect("extensions" in (alone.raw as object)).toBe(false)
    const withOther = Either.getOrThrow(withExtensions({ "payment-identifier": { info: { required: false, id } }, bazaar: { info: 1 } }))
    expect(withOther.raw).toEqual({ ...specPayloadV2(), extensions: { bazaar: { info: 1 } } })
    const noId = Either.getOrThrow(withExtensions({ bazaar: { info: 1 } }))
    expect(noId.raw).toEqual({ ...specPayloadV2(), extensions: { bazaar: { info: 1 } } })
  })
})

describe("decodePaymentHeader: a v1 payment", () => {
  it("maps the v1 network to CAIP-2, has no accepted terms, keeps the header object as raw", () => {
    expect(v1(specPayloadV1())).toEqual(Either.right({
      x402Version: 1,
      scheme: "exact",
      network: "eip155:84532",
      accepted: Option.none(),
      payload: SPEC_AUTHORIZATION,
      raw: specPayloadV1()
    }))
    expect(Either.map(v1(specPayloadV1("solana")), (p) => p.network)).toEqual(Either.right("solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp"))
    expect(Either.map(v1(specPayloadV1("polygon")), (p) => p.network)).toEqual(Either.right("polygon"))
  })

  it("the wrong version, an empty scheme or network, a payload that is no object are refused", () => {
    expect(reason(v1({ ...specPayloadV1(), x402Version: 2 }))).toBe("x402Version must be 1 in X-PAYMENT")
    expect(reason(v1({ ...specPayloadV1(), x402Version: "1" }))).toBe("x402Version must be 1 in X-PAYMENT")
    expect(reason(v1({ ...specPayloadV1(), scheme: "" }))).toBe("scheme must not be empty")
    expect(reason(v1({ ...specPayloadV1(), network: "" }))).toBe("network must not be empty")
    expect(reason(v1({ ...specPayloadV1(), payload: [] }))).toBe("payload must be an object")
    expect(reason(v1({ ...specPayloadV1(), scheme: undefined }))).toBe("scheme is missing")
  })
})
