import { describe, expect, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import fc from "fast-check"
import { getAddress, hashTypedData, type Hex, recoverTypedDataAddress, toHex, verifyTypedData } from "viem"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import {
  type Eip3009Authorization,
  type Eip3009Domain,
  type Eip3009Payment,
  eip3009Digest,
  evmChainId,
  loadNativeRecover,
  loadWasmRecover,
  parseEip3009Payment,
  recoverWithNoble,
  transferWithAuthorizationTypes,
  verifyEip3009Signature
} from "../../adapters/evm/EvmPayment.js"
import { payEvm, requirement, testBase } from "./x402/simulatedSupport.js"

/** secp256k1's group order. */
const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n
const MAX_UINT256 = (1n << 256n) - 1n

/** What `verifyEip3009Signature` was before it recovered with libsecp256k1: viem's pure-JS `verifyTypedData`. */
const reference = async (payment: Eip3009Payment, domain: Eip3009Domain): Promise<boolean> => {
  try {
    return await verifyTypedData({
      address: payment.authorization.from,
      domain,
      types: transferWithAuthorizationTypes,
      primaryType: "TransferWithAuthorization",
      message: payment.authorization,
      signature: payment.signature
    })
  } catch {
    return false
  }
}

// Every recovery the check may run with: native libsecp256k1 (what it picks here), its WebAssembly build,
// and noble (what a bundle falls back to). Both libsecp256k1 builds must load on this machine.
const backends = Promise.all([loadNativeRecover(), loadWasmRecover()])

/** Our verdict (the default recovery's, then each other's, which must be the same) and viem's. */
const verdicts = async (payment: Eip3009Payment, domain: Eip3009Domain) => {
  const ours = await verifyEip3009Signature(payment, domain)
  const [native, wasm] = await backends
  expect(await verifyEip3009Signature(payment, domain, native)).toBe(ours)
  expect(await verifyEip3009Signature(payment, domain, wasm)).toBe(ours)
  expect(await verifyEip3009Signature(payment, domain, recoverWithNoble)).toBe(ours)
  return { ours, viem: await reference(payment, domain) }
}

const sign = (privateKey: Hex, authorization: Eip3009Authorization, domain: Eip3009Domain): Promise<Hex> =>
  privateKeyToAccount(privateKey).signTypedData({
    domain,
    types: transferWithAuthorizationTypes,
    primaryType: "TransferWithAuthorization",
    message: authorization
  })

const word = (n: bigint) => n.toString(16).padStart(64, "0")
const rOf = (signature: Hex) => BigInt(`0x${signature.slice(2, 66)}`)
const sOf = (signature: Hex) => BigInt(`0x${signature.slice(66, 130)}`)
const vOf = (signature: Hex) => Number.parseInt(signature.slice(130), 16)
const compose = (r: bigint, s: bigint, v: number): Hex =>
  `0x${word(r)}${word(s)}${v.toString(16).padStart(2, "0")}`

/** The signature with byte `index` XORed with `mask`. */
const flipByte = (signature: Hex, index: number, mask: number): Hex => {
  const bytes = Buffer.from(signature.slice(2), "hex")
  bytes[index] = bytes[index]! ^ mask
  return `0x${bytes.toString("hex")}`
}

const bytes = (length: number) => fc.uint8Array({ minLength: length, maxLength: length })
const address = bytes(20).map((b) => getAddress(toHex(b)))
const uint256 = fc.bigInt({ min: 0n, max: MAX_UINT256 })
const privateKey = bytes(32).map((b) => toHex(b)).filter((k) => BigInt(k) > 0n && BigInt(k) < N)
const domainArb: fc.Arbitrary<Eip3009Domain> = fc.record({
  name: fc.oneof(fc.constantFrom("USDC", "USD Coin"), fc.string({ maxLength: 16 })),
  version: fc.oneof(fc.constant("2"), fc.string({ maxLength: 4 })),
  chainId: fc.oneof(fc.constantFrom(8453, 84532), fc.integer({ min: 1, max: 2 ** 31 })),
  verifyingContract: address
})
const authorizationFor = (from: Hex): fc.Arbitrary<Eip3009Authorization> =>
  fc.record({
    from: fc.constant(from),
    to: address,
    value: uint256,
    validAfter: uint256,
    validBefore: uint256,
    nonce: bytes(32).map((b) => toHex(b))
  })

/** A signer, what it signs under which domain, and the random material the mutations draw from. */
const signedCase = fc.record({ key: privateKey, domain: domainArb }).chain(({ domain, key }) =>
  fc.record({
    privateKey: fc.constant(key),
    domain: fc.constant(domain),
    authorization: authorizationFor(privateKeyToAccount(key).address),
    flipR: fc.tuple(fc.integer({ min: 0, max: 31 }), fc.integer({ min: 1, max: 255 })),
    flipS: fc.tuple(fc.integer({ min: 32, max: 63 }), fc.integer({ min: 1, max: 255 })),
    flipAny: fc.tuple(fc.integer({ min: 0, max: 64 }), fc.integer({ min: 1, max: 255 })),
    vMask: fc.integer({ min: 1, max: 255 }),
    tooBig: fc.bigInt({ min: N, max: MAX_UINT256 }),
    otherAddress: address,
    otherUint: uint256,
    otherNonce: bytes(32).map((b) => toHex(b)),
    otherKey: privateKey
  })
)

/** viem's digest, or the name of the error it throws. */
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

describe("eip3009Digest is viem hashTypedData's digest", () => {
  it("for random canonical authorizations and domains (the fast path)", () => {
    fc.assert(
      fc.property(domainArb, address.chain(authorizationFor), (domain, authorization) => {
        expect(ourDigest(domain, authorization)).toBe(viemDigest(domain, authorization))
      }),
      { numRuns: 300 }
    )
  })

  it("for fields in other spellings and out of range: the same digest, or the same refusal", () => {
    const badChecksum = (a: Hex): Hex => {
      const flipped = a.replace(/[a-f]/, (c) => c.toUpperCase()) as Hex
      return flipped === a ? a.replace(/[A-F]/, (c) => c.toLowerCase()) as Hex : flipped
    }
    const messy = fc.tuple(domainArb, address.chain(authorizationFor), fc.integer({ min: 0, max: 9 }), fc.bigInt({ min: 1n, max: 1n << 300n }))
    fc.assert(
      fc.property(messy, ([domain, a, which, big]) => {
        const variants: Array<[Eip3009Domain, Eip3009Authorization]> = [
          [domain, { ...a, from: a.from.toLowerCase() as Hex }],
          [domain, { ...a, to: a.to.toUpperCase().replace("0X", "0x") as Hex }],
          [domain, { ...a, to: badChecksum(a.to) }],
          [domain, { ...a, nonce: a.nonce.toUpperCase().replace("0X", "0x") as Hex }],
          [domain, { ...a, nonce: a.nonce.slice(0, 64) as Hex }],
          [domain, { ...a, value: -big }],
          [domain, { ...a, validBefore: MAX_UINT256 + big }],
          [domain, { ...a, validAfter: Number(big % 1000n) as unknown as bigint }],
          [{ ...domain, verifyingContract: badChecksum(domain.verifyingContract) }, a],
          [{ ...domain, chainId: 0 }, a]
        ]
        const [d, m] = variants[which]!
        expect(ourDigest(d, m)).toBe(viemDigest(d, m))
      }),
      { numRuns: 300 }
    )
  })
})

describe("verifyEip3009Signature (libsecp256k1) gives viem verifyTypedData's verdicts", () => {
  it("accepts what viem signs, as viem does, for random keys, authorizations and domains", async () => {
    await fc.assert(
      fc.asyncProperty(signedCase, async ({ authorization, domain, privateKey }) => {
        const signature = await sign(privateKey, authorization, domain)
        expect(await verdicts({ signature, authorization }, domain)).toEqual({ ours: true, viem: true })
      }),
      { numRuns: 100 }
    )
  })

  it("agrees with viem on every mutation of a signed authorization", async () => {
    await fc.assert(
      fc.asyncProperty(signedCase, async (c) => {
        const { authorization, domain } = c
        const signature = await sign(c.privateKey, authorization, domain)
        const r = rOf(signature)
        const s = sOf(signature)
        const v = vOf(signature)
        const otherBit = v === 27 ? 28 : 27
        const otherFrom = privateKeyToAccount(c.otherKey).address
        // [what, payment, domain, the verdict both must give (undefined: whatever viem says)]
        const cases: ReadonlyArray<readonly [string, Eip3009Payment, Eip3009Domain, boolean | undefined]> = [
          ...([
            ["as signed", signature, true],
            ["byte flipped in r", flipByte(signature, ...c.flipR), undefined],
            ["byte flipped in s", flipByte(signature, ...c.flipS), undefined],
            ["byte flipped anywhere", flipByte(signature, ...c.flipAny), undefined],
            ["v byte flipped", flipByte(signature, 64, c.vMask), undefined],
            ...[0, 1, 27, 28, 29, 2].map((nv) =>
              [`v = ${nv}`, compose(r, s, nv), nv === 29 || nv === 2 ? false : (nv === 1 || nv === 28) === (v === 28)] as const
            ),
            // ecrecover (and noble, under viem) accept a high s: (r, n - s) with the other recovery bit is the same key.
            ["high-s twin", compose(r, N - s, otherBit), true],
            ["high-s, same recovery bit", compose(r, N - s, v), false],
            ["r = 0", compose(0n, s, v), false],
            ["s = 0", compose(r, 0n, v), false],
            ["r = n", compose(N, s, v), false],
            ["s = n", compose(r, N, v), false],
            ["r ≥ n", compose(c.tooBig, s, v), false],
            ["s ≥ n", compose(r, c.tooBig, v), false],
            ["r + n (the same scalar)", r + N <= MAX_UINT256 ? compose(r + N, s, v) : compose(MAX_UINT256, s, v), false],
            ["upper-case hex", `0x${signature.slice(2).toUpperCase()}`, true],
            ["0X prefix", `0X${signature.slice(2)}`, false],
            ["empty", "0x", false],
            // viem's `size` rounds up: 129 digits are 65 bytes, v being the last digit alone (1 → recovery bit 1).
            ["last digit dropped", signature.slice(0, -1), v === 28],
            ["last byte dropped", signature.slice(0, -2), false],
            ["a digit appended", `${signature}0`, false],
            ["a byte appended", `${signature}00`, false],
            ["doubled", `${signature}${signature.slice(2)}`, false],
            ["64-byte compact (EIP-2098)", `0x${word(r)}${word(v === 28 ? s | (1n << 255n) : s)}`, false]
          ] as const).map(([what, sig, expected]) => [what, { signature: sig as Hex, authorization }, domain, expected] as const),
          ["another to", { signature, authorization: { ...authorization, to: c.otherAddress } }, domain, undefined],
          ["another value", { signature, authorization: { ...authorization, value: c.otherUint } }, domain, undefined],
          ["value + 1", { signature, authorization: { ...authorization, value: authorization.value + 1n } }, domain, false],
          ["another validAfter", { signature, authorization: { ...authorization, validAfter: c.otherUint } }, domain, undefined],
          ["another validBefore", { signature, authorization: { ...authorization, validBefore: c.otherUint } }, domain, undefined],
          ["another nonce", { signature, authorization: { ...authorization, nonce: c.otherNonce } }, domain, undefined],
          ["another from", { signature, authorization: { ...authorization, from: otherFrom } }, domain, false],
          ["from lower-cased", { signature, authorization: { ...authorization, from: authorization.from.toLowerCase() as Hex } }, domain, true],
          ["from not an address", { signature, authorization: { ...authorization, from: "0x1234" } }, domain, false],
          ["another chain", { signature, authorization }, { ...domain, chainId: domain.chainId + 1 }, false],
          ["another token", { signature, authorization }, { ...domain, verifyingContract: c.otherAddress }, undefined]
        ]
        for (const [what, payment, d, expected] of cases) {
          const { ours, viem } = await verdicts(payment, d)
          expect(ours, what).toBe(viem)
          if (expected !== undefined) expect(ours, what).toBe(expected)
        }
      }),
      { numRuns: 50 }
    )
  }, 120_000) // 50 signed cases × every mutation, each checked by viem too: ~10 s alone, over 30 s on a loaded machine

  it("agrees with viem on signatures that are not hex (viem reads those as UTF-8 bytes)", async () => {
    const domain: Eip3009Domain = { name: "USDC", version: "2", chainId: 84532, verifyingContract: testBase.asset as Hex }
    const from = privateKeyToAccount(generatePrivateKey()).address
    const authorization: Eip3009Authorization = {
      from,
      to: from,
      value: 10_000n,
      validAfter: 0n,
      validBefore: 2_000_000_000n,
      nonce: `0x${"ab".repeat(32)}`
    }
    // 65 characters are 65 bytes: r and s spelled in letters, then \x1b (v = 27); for some letters r is a
    // point's x and viem recovers a key from them. That key cannot be `from` (the digest covers `from`), so
    // the verdict is false either way; what is checked is that neither side throws or disagrees.
    let recovered = 0
    for (const letter of "ghijklmnopqrstuvwxyz") {
      const signature = `0x${letter.repeat(62)}\x1b` as Hex
      const signer = await recoverTypedDataAddress({
        domain,
        types: transferWithAuthorizationTypes,
        primaryType: "TransferWithAuthorization",
        message: authorization,
        signature
      }).catch(() => undefined)
      if (signer !== undefined) recovered++
      expect(await verdicts({ signature, authorization }, domain)).toEqual({ ours: false, viem: false })
    }
    expect(recovered).toBeGreaterThan(0)
    for (const signature of ["", "0x", "hello", `0X${"ab".repeat(65)}`, `${"ab".repeat(65)}`, `0x${"zz".repeat(65)}`]) {
      expect(await verdicts({ signature: signature as Hex, authorization }, domain)).toEqual({ ours: false, viem: false })
    }
  })

  it("never throws or rejects, whatever it is given", async () => {
    const domain: Eip3009Domain = { name: "USDC", version: "2", chainId: 84532, verifyingContract: testBase.asset as Hex }
    const from = privateKeyToAccount(generatePrivateKey()).address
    const authorization: Eip3009Authorization = {
      from,
      to: from,
      value: 1n,
      validAfter: 0n,
      validBefore: 1n,
      nonce: `0x${"00".repeat(32)}`
    }
    const signature = await sign(generatePrivateKey(), authorization, domain)
    const odd: ReadonlyArray<readonly [Eip3009Payment, Eip3009Domain]> = [
      [{ signature: 42 as unknown as Hex, authorization }, domain],
      [{ signature: undefined as unknown as Hex, authorization }, domain],
      [{ signature, authorization: { ...authorization, from: undefined as unknown as Hex } }, domain],
      [{ signature, authorization: { ...authorization, value: -1n } }, domain],
      [{ signature, authorization: { ...authorization, value: MAX_UINT256 + 1n } }, domain],
      [{ signature, authorization: { ...authorization, nonce: "0x12" } }, domain],
      [{ signature, authorization: { ...authorization, to: "0xnot" } }, domain],
      [{ signature, authorization }, { ...domain, verifyingContract: "0x1" }],
      [{ signature, authorization }, { ...domain, chainId: -1 }]
    ]
    for (const [payment, d] of odd) {
      expect(await verdicts(payment, d)).toEqual({ ours: false, viem: false })
    }
  })
})

describe("verifyEip3009Signature on a real client's payment", () => {
  const domain: Eip3009Domain = {
    name: testBase.extra["name"]!,
    version: testBase.extra["version"]!,
    chainId: evmChainId(testBase.network)!,
    verifyingContract: getAddress(testBase.asset) as Hex
  }

  it.effect("verifies the official @x402/evm client's signature, and not one by another key", () =>
    Effect.gen(function*() {
      const buyer = privateKeyToAccount(generatePrivateKey())
      const { payload } = yield* payEvm(buyer, requirement(testBase, { payTo: privateKeyToAccount(generatePrivateKey()).address }))
      const payment = Either.getOrThrow(parseEip3009Payment(payload))
      expect(payment.authorization.from).toBe(buyer.address)
      expect(yield* Effect.promise(() => verifyEip3009Signature(payment, domain))).toBe(true)
      expect(yield* Effect.promise(() => verifyEip3009Signature(payment, domain, recoverWithNoble))).toBe(true)

      const forged = yield* Effect.promise(() => sign(generatePrivateKey(), payment.authorization, domain))
      expect(yield* Effect.promise(() => verifyEip3009Signature({ ...payment, signature: forged }, domain))).toBe(false)
      expect(yield* Effect.promise(() => verifyEip3009Signature({ ...payment, signature: forged }, domain, recoverWithNoble))).toBe(false)
    }))
})
