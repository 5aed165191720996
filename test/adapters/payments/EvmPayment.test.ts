/*
 * Reading an `exact` EVM payment (adapters/evm/EvmPayment.ts): the parser's guards on every field, what
 * identifies a payment, and the signature check, whose verdicts the docs promise are exactly viem
 * `verifyTypedData`'s: each edge case here is compared with viem itself.
 */
import { describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import fc from "fast-check"
import { getAddress, hashTypedData, type Hex } from "viem"
import {
  type Eip3009Authorization,
  type Eip3009Domain,
  eip3009Digest,
  eip3009Key,
  evmChainId,
  evmPaymentIdentity,
  loadNativeRecover,
  loadWasmRecover,
  parseEip3009Payment,
  recoverWithNoble,
  transferWithAuthorizationTypes,
  verifyEip3009Signature
} from "../../../adapters/evm/EvmPayment.js"
import {
  authorizationOf,
  compose,
  domainFor,
  MAX_UINT256,
  N,
  newAccount,
  newAddress,
  rOf,
  sign,
  sOf,
  termsFor,
  viemVerdict,
  vOf
} from "./evmSupport.js"

const FROM = "0x857b06519E91e3A54538791bDbb0E22373e36b66"
const TO = "0x209693Bc6afc0C5328bA36FaF03C514EF312287C"
const NONCE = "0xf3746613c2d920b5fdabc0856f2aeb2d4f88ee6037b8cc5d04a71a4462f13480"
const SIGNATURE = `0x${"ab".repeat(65)}`

const wire = (over: Record<string, unknown> = {}, ...signature: [] | [unknown]) => ({
  signature: signature.length === 0 ? SIGNATURE : signature[0],
  authorization: { from: FROM, to: TO, value: "10000", validAfter: "0", validBefore: "1750000000", nonce: NONCE, ...over }
})

const reasonOf = (payload: unknown) =>
  Either.match(parseEip3009Payment(payload), { onLeft: (p) => `${p.reason}: ${p.message}`, onRight: () => "<parsed>" })
const valueOf = (value: unknown) => Either.map(parseEip3009Payment(wire({ value })), (p) => p.authorization.value)

const VALUE_PROBLEM = "invalid_exact_evm_authorization_value: authorization.value must be a uint256"
const TIME_PROBLEM = "invalid_payload: authorization.validAfter and validBefore must be uint256 timestamps"

describe("parseEip3009Payment: the value, validAfter and validBefore are uint256, decimal or 0x-hex", () => {
  it("reads decimal and hex (either prefix case, any digit case), up to uint256's maximum", () => {
    expect(valueOf("10000")).toEqual(Either.right(10_000n))
    expect(valueOf("0")).toEqual(Either.right(0n))
    expect(valueOf("0x2710")).toEqual(Either.right(10_000n))
    expect(valueOf("0X2710")).toEqual(Either.right(10_000n))
    expect(valueOf("0xAbC")).toEqual(Either.right(0xabcn))
    expect(valueOf("0x0")).toEqual(Either.right(0n))
    expect(valueOf(MAX_UINT256.toString())).toEqual(Either.right(MAX_UINT256))
    expect(valueOf(`0x${"f".repeat(64)}`)).toEqual(Either.right(MAX_UINT256))
    expect(valueOf(`0x${"0".repeat(63)}1`)).toEqual(Either.right(1n))
    // 78 digits below the maximum, leading zeros included.
    expect(valueOf(`${"0".repeat(77)}7`)).toEqual(Either.right(7n))
  })

  it("a value above uint256 is refused, whether 78 decimal digits, 79, or 65 hex digits", () => {
    for (const value of [(MAX_UINT256 + 1n).toString(), "9".repeat(78), `1${"0".repeat(78)}`, `0x1${"0".repeat(64)}`, `0x${"0".repeat(65)}`]) {
      expect(reasonOf(wire({ value })), value).toBe(VALUE_PROBLEM)
    }
  })

  it("a negative, fractional, exponent, spaced, signed, empty or non-string value is refused", () => {
    for (const value of ["-1", "-0", "1.5", "1e3", " 1", "1 ", "+1", "", "0x", "0x-1", "0xg", "ten", "1_000", 10_000, 10_000n, null, undefined, ["1"], { value: "1" }]) {
      expect(reasonOf(wire({ value })), String(value)).toBe(VALUE_PROBLEM)
    }
  })

  it("validAfter and validBefore have the same guards, as invalid_payload", () => {
    for (const bad of ["-1", "1.5", "", (MAX_UINT256 + 1n).toString(), 5, null]) {
      expect(reasonOf(wire({ validAfter: bad })), `validAfter ${String(bad)}`).toBe(TIME_PROBLEM)
      expect(reasonOf(wire({ validBefore: bad })), `validBefore ${String(bad)}`).toBe(TIME_PROBLEM)
    }
    const parsed = Either.getOrThrow(parseEip3009Payment(wire({ validAfter: "0x10", validBefore: MAX_UINT256.toString() })))
    expect(parsed.authorization.validAfter).toBe(16n)
    expect(parsed.authorization.validBefore).toBe(MAX_UINT256)
  })
})

describe("parseEip3009Payment: the other fields", () => {
  it("normalises: addresses checksummed, the nonce lower-case, the signature as given", () => {
    const parsed = parseEip3009Payment(wire({ from: FROM.toLowerCase(), to: TO.toUpperCase().replace("0X", "0x"), nonce: `0X${NONCE.slice(2).toUpperCase()}` }))
    expect(parsed).toEqual(Either.right({
      signature: SIGNATURE,
      authorization: { from: FROM, to: TO, value: 10_000n, validAfter: 0n, validBefore: 1_750_000_000n, nonce: NONCE }
    }))
  })

  it("a signature must be a 0x hex string of at least one byte's worth; its length is the signature check's business", () => {
    for (const signature of [undefined, null, 42, "", "0x", "0x1", "ab".repeat(65), `0X${"ab".repeat(65)}`, `0x${"zz".repeat(65)}`, ["0x12"]]) {
      expect(reasonOf(wire({}, signature)), String(signature)).toBe("invalid_payload: signature must be 0x-prefixed hex")
    }
    expect(reasonOf(wire({}, "0x12"))).toBe("<parsed>")
    expect(reasonOf(wire({}, "0x123"))).toBe("<parsed>")
  })

  it("from and to must be addresses; a wrong checksum is an address spelled differently, not another one", () => {
    for (const [field, text] of [["from", "authorization.from must be an address"], ["to", "authorization.to must be an address"]] as const) {
      // An array holding an address passes a regular expression's test (it is read as its text): still no address.
      for (const bad of [undefined, 42, "", "0x1234", `0x${"zz".repeat(20)}`, FROM.slice(0, -1), [FROM], [TO]]) {
        expect(reasonOf(wire({ [field]: bad })), `${field} ${String(bad)}`).toBe(`invalid_payload: ${text}`)
      }
    }
    const badChecksum = FROM.replace("E91e3", "e91e3")
    expect(Either.getOrThrow(parseEip3009Payment(wire({ from: badChecksum }))).authorization.from).toBe(FROM)
  })

  it("the nonce must be exactly 32 bytes of 0x hex", () => {
    for (const nonce of [undefined, 7, "", NONCE.slice(0, -1), `${NONCE}0`, NONCE.slice(2), `0x${"g".repeat(64)}`, `${NONCE}\n`, [NONCE]]) {
      expect(reasonOf(wire({ nonce })), String(nonce)).toBe("invalid_payload: authorization.nonce must be 32 bytes of 0x-prefixed hex")
    }
  })

  it("a payload that is not an object, or has no authorization, is invalid_payload", () => {
    for (const payload of [null, undefined, "0x12", 42, [], {}]) {
      expect(reasonOf(payload)).toBe("invalid_payload: signature must be 0x-prefixed hex")
    }
    expect(reasonOf({ signature: SIGNATURE })).toBe("invalid_payload: authorization.from must be an address")
    expect(reasonOf({ signature: SIGNATURE, authorization: "x" })).toBe("invalid_payload: authorization.from must be an address")
  })
})

describe("what identifies an EVM payment", () => {
  it("eip3009Key is from (lower-case) and nonce: what USDC marks used", () => {
    const authorization = Either.getOrThrow(parseEip3009Payment(wire())).authorization
    expect(eip3009Key(authorization)).toBe(`eip3009:${FROM.toLowerCase()}:${NONCE}`)
  })

  it("evmPaymentIdentity: key, checksummed payer, settle-by validBefore; a re-encoded signature is the same payment", () => {
    expect(evmPaymentIdentity(wire())).toEqual(Either.right({
      key: `eip3009:${FROM.toLowerCase()}:${NONCE}`,
      payer: FROM,
      settleBy: new Date(1_750_000_000_000)
    }))
    expect(evmPaymentIdentity(wire({ from: FROM.toLowerCase(), nonce: NONCE.toUpperCase().replace("0X", "0x") }, `0x${"cd".repeat(65)}`)))
      .toEqual(evmPaymentIdentity(wire()))
  })

  it("a validBefore past year 9999 has no settle-by date; the last second of 9999 has one", () => {
    const last = 253_402_300_799n
    expect(Either.map(evmPaymentIdentity(wire({ validBefore: last.toString() })), (i) => i.settleBy))
      .toEqual(Either.right(new Date("9999-12-31T23:59:59.000Z")))
    expect(Either.map(evmPaymentIdentity(wire({ validBefore: (last + 1n).toString() })), (i) => i.settleBy)).toEqual(Either.right(null))
    expect(Either.map(evmPaymentIdentity(wire({ validBefore: MAX_UINT256.toString() })), (i) => i.settleBy)).toEqual(Either.right(null))
  })

  it("a malformed payload has no identity; the reason is the parser's message", () => {
    expect(evmPaymentIdentity(wire({ value: "-1" }))).toEqual(Either.left("authorization.value must be a uint256"))
    expect(evmPaymentIdentity({})).toEqual(Either.left("signature must be 0x-prefixed hex"))
  })
})

describe("evmChainId reads eip155:<id> only", () => {
  it("a positive decimal chain id of at most 16 digits, no leading zero", () => {
    expect(evmChainId("eip155:8453")).toBe(8453)
    expect(evmChainId("eip155:84532")).toBe(84532)
    expect(evmChainId("eip155:1")).toBe(1)
    expect(evmChainId(`eip155:${"9".repeat(16)}`)).toBe(9_999_999_999_999_999)
    for (const network of ["eip155:0", "eip155:08453", `eip155:1${"0".repeat(16)}`, "eip155:", "eip155:8453x", "xeip155:8453", "eip155:-1", "eip155:0x2105", "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp", "base"]) {
      expect(evmChainId(network), network).toBeUndefined()
    }
  })
})

const canonicalDomain = domainFor(termsFor(TO))

describe("verifyEip3009Signature gives viem verifyTypedData's verdict on every signature shape", () => {
  /** Ours (with each recovery backend, which must agree) and viem's. */
  const verdicts = async (signature: Hex, authorization: Eip3009Authorization, domain: Eip3009Domain = canonicalDomain) => {
    const payment = { signature, authorization }
    const ours = await verifyEip3009Signature(payment, domain)
    const [native, wasm] = await Promise.all([loadNativeRecover(), loadWasmRecover()])
    for (const recover of [native, wasm, recoverWithNoble]) expect(await verifyEip3009Signature(payment, domain, recover)).toBe(ours)
    return { ours, viem: await viemVerdict(payment, domain) }
  }

  const signed = async () => {
    const buyer = newAccount()
    const authorization = authorizationOf(buyer, termsFor(TO))
    return { buyer, authorization, signature: await sign(buyer, authorization, canonicalDomain) }
  }

  it("each recovery backend (native libsecp256k1, its WebAssembly build, noble) recovers the signer's key", async () => {
    const { authorization, buyer, signature } = await signed()
    const hash = Buffer.from(eip3009Digest(canonicalDomain, authorization).slice(2), "hex")
    const rs = Buffer.from(signature.slice(2, 130), "hex")
    const expected = Buffer.from(buyer.publicKey.slice(2), "hex")
    for (const recover of [await loadNativeRecover(), await loadWasmRecover(), recoverWithNoble]) {
      expect(Buffer.from((await recover(hash, rs, (vOf(signature) - 27) as 0 | 1))!)).toEqual(expected)
    }
  })

  it("the buyer's own signature holds; another key's signature of the same authorization does not", async () => {
    const { authorization, signature } = await signed()
    expect(await verdicts(signature, authorization)).toEqual({ ours: true, viem: true })
    const forged = await sign(newAccount(), authorization, canonicalDomain)
    expect(await verdicts(forged, authorization)).toEqual({ ours: false, viem: false })
  })

  it("a 64-byte (EIP-2098 compact) or 66-byte signature is refused, r‖s‖00‖v included (v would read as the last byte)", async () => {
    for (const { authorization, signature } of await oneOfEachBit()) await refusesOtherLengths(authorization, signature)
  })

  const refusesOtherLengths = async (authorization: Eip3009Authorization, signature: Hex) => {
    const [r, s, v] = [rOf(signature), sOf(signature), vOf(signature)]
    const compact = `0x${signature.slice(2, 130)}` as Hex
    const cases: ReadonlyArray<readonly [string, Hex]> = [
      ["64 bytes r‖s", compact],
      ["64 bytes, EIP-2098 yParity in s", `0x${signature.slice(2, 66)}${(v === 28 ? s | (1n << 255n) : s).toString(16).padStart(64, "0")}`],
      ["66 bytes r‖s‖00‖v", `${compact}00${v.toString(16)}` as Hex],
      ["66 bytes r‖s‖v‖00", `${signature}00`],
      ["66 bytes 00‖r‖s‖v", `0x00${signature.slice(2)}`],
      ["130 bytes, twice", `${signature}${signature.slice(2)}`],
      ["empty", "0x"]
    ]
    for (const [what, candidate] of cases) expect(await verdicts(candidate, authorization), what).toEqual({ ours: false, viem: false })
    // The control: the same r, s and v as 65 bytes hold.
    expect(await verdicts(compose(r, s, v), authorization)).toEqual({ ours: true, viem: true })
  }

  /** Signed payments until there is one of each recovery bit (v = 27 and v = 28): a check of v must hold for both. */
  const oneOfEachBit = async () => {
    const found = new Map<number, Awaited<ReturnType<typeof signed>>>()
    for (let i = 0; i < 64 && found.size < 2; i++) {
      const next = await signed()
      found.set(vOf(next.signature), next)
    }
    expect([...found.keys()].sort()).toEqual([27, 28])
    return [found.get(27)!, found.get(28)!] as const
  }

  it("v is 27/28 or 0/1 for the same recovery bit; any other v is refused, whichever bit the signature has", async () => {
    for (const { authorization, signature } of await oneOfEachBit()) {
      const [r, s, v] = [rOf(signature), sOf(signature), vOf(signature)]
      const bit = v - 27
      for (const nv of [0, 1, 27, 28]) {
        const holds = nv % 27 === bit
        expect(await verdicts(compose(r, s, nv), authorization), `v = ${nv} for bit ${bit}`).toEqual({ ours: holds, viem: holds })
      }
      for (const nv of [2, 26, 29, 30, 35, 36, 255]) {
        expect(await verdicts(compose(r, s, nv), authorization), `v = ${nv} for bit ${bit}`).toEqual({ ours: false, viem: false })
      }
    }
  })

  it("a high-s signature is accepted with the other recovery bit, as ecrecover and viem accept it", async () => {
    for (const { authorization, signature } of await oneOfEachBit()) {
      const [r, s, v] = [rOf(signature), sOf(signature), vOf(signature)]
      expect(await verdicts(compose(r, N - s, v === 27 ? 28 : 27), authorization)).toEqual({ ours: true, viem: true })
      expect(await verdicts(compose(r, N - s, v), authorization)).toEqual({ ours: false, viem: false })
    }
  })

  it("r or s of 0 or n and above, and an r that is no curve point's x, are refused", async () => {
    const { authorization, signature } = await signed()
    const [r, s, v] = [rOf(signature), sOf(signature), vOf(signature)]
    for (const [what, candidate] of [
      ["r = 0", compose(0n, s, v)],
      ["s = 0", compose(r, 0n, v)],
      ["r = n", compose(N, s, v)],
      ["s = n", compose(r, N, v)],
      ["r = max", compose(MAX_UINT256, s, v)],
      ["r = 5 (no point)", compose(5n, s, v)]
    ] as const) {
      expect(await verdicts(candidate, authorization), what).toEqual({ ours: false, viem: false })
    }
  })

  it("hex spellings: upper-case digits hold; 129 digits count as 65 bytes (v its last digit alone), as viem reads them", async () => {
    const { authorization, signature } = await signed()
    expect(await verdicts(`0x${signature.slice(2).toUpperCase()}`, authorization)).toEqual({ ours: true, viem: true })
    const last = signature.slice(0, -1) as Hex
    const { ours, viem } = await verdicts(last, authorization)
    expect(ours).toBe(viem)
    expect(ours).toBe(vOf(signature) === 28)
    // A string that is not hex is read as its UTF-8 bytes, as viem reads it.
    expect(await verdicts("not a signature" as Hex, authorization)).toEqual({ ours: false, viem: false })
    expect(await verdicts(`0X${signature.slice(2)}` as Hex, authorization)).toEqual({ ours: false, viem: false })
  })

  it("the signature covers every field: another value, recipient, window, nonce or signer is refused", async () => {
    const { authorization: a, signature } = await signed()
    const variants: ReadonlyArray<readonly [string, Eip3009Authorization]> = [
      ["value + 1", { ...a, value: a.value + 1n }],
      ["value - 1", { ...a, value: a.value - 1n }],
      ["another to", { ...a, to: newAddress() }],
      ["validAfter + 1", { ...a, validAfter: a.validAfter + 1n }],
      ["validBefore + 1", { ...a, validBefore: a.validBefore + 1n }],
      ["another nonce", { ...a, nonce: `0x${"00".repeat(32)}` }],
      ["another from", { ...a, from: newAddress() }]
    ]
    for (const [what, authorization] of variants) expect(await verdicts(signature, authorization), what).toEqual({ ours: false, viem: false })
    expect(await verdicts(signature, { ...a, from: a.from.toLowerCase() as Hex })).toEqual({ ours: true, viem: true })
  })

  it("the signature covers the domain: another chain, token contract, name or version is refused", async () => {
    const { authorization, signature } = await signed()
    const domains: ReadonlyArray<readonly [string, Eip3009Domain]> = [
      ["Base mainnet", { ...canonicalDomain, chainId: 8453 }],
      ["another token", { ...canonicalDomain, verifyingContract: newAddress() }],
      ["another name", { ...canonicalDomain, name: "USD Coin" }],
      ["another version", { ...canonicalDomain, version: "1" }]
    ]
    for (const [what, domain] of domains) expect(await verdicts(signature, authorization, domain), what).toEqual({ ours: false, viem: false })
  })

  it("signatures under two token domains, checked in turn, each hold only under their own", async () => {
    const buyer = newAccount()
    const mainnet: Eip3009Domain = { name: "USD Coin", version: "2", chainId: 8453, verifyingContract: getAddress("0x833589fcd6edb6e08f4c7c32d4f71b54bda02913") }
    const authorization = authorizationOf(buyer, termsFor(TO))
    const onTest = await sign(buyer, authorization, canonicalDomain)
    const onMain = await sign(buyer, authorization, mainnet)
    expect(await verifyEip3009Signature({ signature: onTest, authorization }, canonicalDomain)).toBe(true)
    expect(await verifyEip3009Signature({ signature: onMain, authorization }, mainnet)).toBe(true)
    expect(await verifyEip3009Signature({ signature: onTest, authorization }, mainnet)).toBe(false)
    expect(await verifyEip3009Signature({ signature: onMain, authorization }, canonicalDomain)).toBe(false)
  })

  it("never rejects: a from that is no address, or a signature that is no string, is simply not valid", async () => {
    const { authorization, signature } = await signed()
    expect(await verifyEip3009Signature({ signature, authorization: { ...authorization, from: "0x1234" } }, canonicalDomain)).toBe(false)
    expect(await verifyEip3009Signature({ signature, authorization: { ...authorization, from: 7 as unknown as Hex } }, canonicalDomain)).toBe(false)
    expect(await verifyEip3009Signature({ signature: 42 as unknown as Hex, authorization }, canonicalDomain)).toBe(false)
    expect(await verifyEip3009Signature({ signature, authorization: { ...authorization, value: -1n } }, canonicalDomain)).toBe(false)
  })
})

describe("eip3009Digest is viem hashTypedData's digest", () => {
  const viemDigest = (domain: Eip3009Domain, message: Eip3009Authorization) => {
    try {
      return hashTypedData({ domain, types: transferWithAuthorizationTypes, primaryType: "TransferWithAuthorization", message })
    } catch (e) {
      return `throws ${(e as Error).name}`
    }
  }
  const ourDigest = (domain: Eip3009Domain, message: Eip3009Authorization) => {
    try {
      return eip3009Digest(domain, message)
    } catch (e) {
      return `throws ${(e as Error).name}`
    }
  }
  const bytes = (n: number) => fc.uint8Array({ minLength: n, maxLength: n }).map((b) => `0x${Buffer.from(b).toString("hex")}` as Hex)
  const address = bytes(20).map((a) => getAddress(a))
  const uint256 = fc.bigInt({ min: 0n, max: MAX_UINT256 })
  const authorization: fc.Arbitrary<Eip3009Authorization> = fc.record({
    from: address,
    to: address,
    value: uint256,
    validAfter: uint256,
    validBefore: uint256,
    nonce: bytes(32)
  })
  const domain: fc.Arbitrary<Eip3009Domain> = fc.record({
    name: fc.string({ maxLength: 12 }),
    version: fc.string({ maxLength: 3 }),
    chainId: fc.integer({ min: 0, max: 2 ** 31 }),
    verifyingContract: address
  })

  it("for canonical authorizations and domains (the fast path)", () => {
    fc.assert(fc.property(domain, authorization, (d, a) => {
      expect(ourDigest(d, a)).toBe(viemDigest(d, a))
    }), { numRuns: 150 })
    // Extremes of every field.
    const zero: Eip3009Authorization = { from: getAddress(`0x${"00".repeat(20)}`), to: getAddress(`0x${"00".repeat(20)}`), value: 0n, validAfter: 0n, validBefore: 0n, nonce: `0x${"00".repeat(32)}` }
    const max: Eip3009Authorization = { from: getAddress(`0x${"ff".repeat(20)}`), to: getAddress(`0x${"ff".repeat(20)}`), value: MAX_UINT256, validAfter: MAX_UINT256, validBefore: MAX_UINT256, nonce: `0x${"ff".repeat(32)}` }
    for (const a of [zero, max]) expect(ourDigest(canonicalDomain, a)).toBe(viemDigest(canonicalDomain, a))
  })

  it("for fields in other spellings or out of range: the same digest, or the same refusal", () => {
    const a = authorizationOf(newAccount(), termsFor(TO))
    const badChecksum = (x: Hex): Hex => {
      const flipped = x.replace(/[a-f]/, (c) => c.toUpperCase()) as Hex
      return flipped === x ? x.replace(/[A-F]/, (c) => c.toLowerCase()) as Hex : flipped
    }
    const variants: ReadonlyArray<readonly [string, Eip3009Domain, Eip3009Authorization]> = [
      ["from lower-case", canonicalDomain, { ...a, from: a.from.toLowerCase() as Hex }],
      ["from bad checksum", canonicalDomain, { ...a, from: badChecksum(a.from) }],
      ["to bad checksum", canonicalDomain, { ...a, to: badChecksum(a.to) }],
      ["value -1", canonicalDomain, { ...a, value: -1n }],
      ["value above uint256", canonicalDomain, { ...a, value: MAX_UINT256 + 1n }],
      ["validAfter -1", canonicalDomain, { ...a, validAfter: -1n }],
      ["validAfter above uint256", canonicalDomain, { ...a, validAfter: MAX_UINT256 + 1n }],
      ["validBefore -1", canonicalDomain, { ...a, validBefore: -1n }],
      ["validBefore above uint256", canonicalDomain, { ...a, validBefore: MAX_UINT256 + 1n }],
      ["nonce upper-case", canonicalDomain, { ...a, nonce: a.nonce.toUpperCase().replace("0X", "0x") as Hex }],
      ["nonce 31 bytes", canonicalDomain, { ...a, nonce: a.nonce.slice(0, 64) as Hex }],
      ["nonce 33 bytes", canonicalDomain, { ...a, nonce: `${a.nonce}00` as Hex }],
      ["verifyingContract bad checksum", { ...canonicalDomain, verifyingContract: badChecksum(canonicalDomain.verifyingContract) }, a],
      ["value 1.5 (a number)", canonicalDomain, { ...a, value: 1.5 as unknown as bigint }],
      ["validAfter 1.5 (a number)", canonicalDomain, { ...a, validAfter: 1.5 as unknown as bigint }],
      ["validBefore 1.5 (a number)", canonicalDomain, { ...a, validBefore: 1.5 as unknown as bigint }],
      ["every number -1", canonicalDomain, { ...a, value: -1n, validAfter: -1n, validBefore: -1n }],
      ["every number above uint256", canonicalDomain, { ...a, value: MAX_UINT256 + 1n, validAfter: MAX_UINT256 + 2n, validBefore: MAX_UINT256 + 3n }],
      ["nonce in an array", canonicalDomain, { ...a, nonce: [a.nonce] as unknown as Hex }],
      ["chainId -1", { ...canonicalDomain, chainId: -1 }, a],
      ["chainId 1.5", { ...canonicalDomain, chainId: 1.5 }, a]
    ]
    for (const [what, d, m] of variants) expect(ourDigest(d, m), what).toBe(viemDigest(d, m))
  })
})
