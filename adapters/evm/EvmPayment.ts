import { Either } from "effect"
import {
  concat,
  domainSeparator,
  getAddress,
  hashTypedData,
  type Hex,
  hexToBytes,
  hexToNumber,
  isAddress,
  isHex,
  keccak256,
  recoverPublicKey,
  size,
  toBytes,
  toHex
} from "viem"

/*
 * Reading an x402 `exact` EVM payment (EIP-3009 `transferWithAuthorization`) without trusting it:
 * `{ signature, authorization: { from, to, value, validAfter, validBefore, nonce } }`.
 */

/** The EIP-712 struct USDC's `transferWithAuthorization` checks (EIP-3009). */
export const transferWithAuthorizationTypes = {
  TransferWithAuthorization: [
    { name: "from", type: "address" },
    { name: "to", type: "address" },
    { name: "value", type: "uint256" },
    { name: "validAfter", type: "uint256" },
    { name: "validBefore", type: "uint256" },
    { name: "nonce", type: "bytes32" }
  ]
} as const

/** An EIP-3009 `transferWithAuthorization` as x402's `exact` EVM payload carries it. */
export interface Eip3009Authorization {
  /** EIP-55 checksummed. */
  readonly from: Hex
  /** The recipient. */
  readonly to: Hex
  /** The amount, in atomic units. */
  readonly value: bigint
  /** Unix seconds after which it is valid. */
  readonly validAfter: bigint
  /** Unix seconds before which it must settle. */
  readonly validBefore: bigint
  /** 32 bytes, lower-case hex. */
  readonly nonce: Hex
}

/** x402's `exact` EVM payload: the authorization and its signature. */
export interface Eip3009Payment {
  /** The payer's EIP-712 signature of the authorization. */
  readonly signature: Hex
  /** The authorization signed. */
  readonly authorization: Eip3009Authorization
}

/** The failures a payload can have before its signature is looked at, named as @x402/evm names them. */
export type Eip3009ParseProblem =
  | { readonly reason: "invalid_payload"; readonly message: string }
  | { readonly reason: "invalid_exact_evm_authorization_value"; readonly message: string }

const UINT = /^(0[xX][0-9a-fA-F]{1,64}|[0-9]{1,78})$/
const NONCE = /^0[xX][0-9a-fA-F]{64}$/
const MAX_UINT256 = (1n << 256n) - 1n

/** Decimal or 0x-hex unsigned integer (the spec allows both); undefined when not one or above uint256. */
const parseUint = (raw: unknown): bigint | undefined => {
  if (typeof raw !== "string" || !UINT.test(raw)) return undefined
  const value = BigInt(raw.toLowerCase())
  return value <= MAX_UINT256 ? value : undefined
}

const field = (record: unknown, name: string): unknown =>
  typeof record === "object" && record !== null ? (record as Record<string, unknown>)[name] : undefined

const problem = (message: string): Either.Either<never, Eip3009ParseProblem> =>
  Either.left({ reason: "invalid_payload", message })

/** Parses and normalises an EIP-3009 payload; Left names what is malformed. */
export const parseEip3009Payment = (payload: unknown): Either.Either<Eip3009Payment, Eip3009ParseProblem> => {
  const signature = field(payload, "signature")
  const auth = field(payload, "authorization")
  if (typeof signature !== "string" || !isHex(signature, { strict: true }) || signature.length < 4) {
    return problem("signature must be 0x-prefixed hex")
  }
  const from = field(auth, "from")
  const to = field(auth, "to")
  if (typeof from !== "string" || !isAddress(from, { strict: false })) return problem("authorization.from must be an address")
  if (typeof to !== "string" || !isAddress(to, { strict: false })) return problem("authorization.to must be an address")
  const nonce = field(auth, "nonce")
  if (typeof nonce !== "string" || !NONCE.test(nonce)) return problem("authorization.nonce must be 32 bytes of 0x-prefixed hex")
  const value = parseUint(field(auth, "value"))
  if (value === undefined) {
    return Either.left({ reason: "invalid_exact_evm_authorization_value", message: "authorization.value must be a uint256" })
  }
  const validAfter = parseUint(field(auth, "validAfter"))
  const validBefore = parseUint(field(auth, "validBefore"))
  if (validAfter === undefined || validBefore === undefined) {
    return problem("authorization.validAfter and validBefore must be uint256 timestamps")
  }
  return Either.right({
    signature: signature as Hex,
    authorization: {
      from: getAddress(from.toLowerCase()),
      to: getAddress(to.toLowerCase()),
      value,
      validAfter,
      validBefore,
      nonce: `0x${nonce.slice(2).toLowerCase()}`
    }
  })
}

/**
 * What identifies an EVM payment: `from` and `nonce`, exactly what USDC marks used on chain. The signature
 * is left out on purpose: a re-encoded signature for the same authorization is still the same payment.
 */
export const eip3009Key = (authorization: Eip3009Authorization): string =>
  `eip3009:${authorization.from.toLowerCase()}:${authorization.nonce}`

/** Past year 9999 a `validBefore` means "no end" as far as a date is concerned. */
const MAX_DATE_SECONDS = 253_402_300_799n

export const evmPaymentIdentity = (
  payload: unknown
): Either.Either<{ key: string; payer: string; settleBy: Date | null }, string> =>
  parseEip3009Payment(payload).pipe(
    Either.mapLeft((p) => p.message),
    Either.map(({ authorization }) => ({
      key: eip3009Key(authorization),
      payer: authorization.from,
      // USDC refuses the authorization once block time reaches `validBefore`.
      settleBy: authorization.validBefore > MAX_DATE_SECONDS ? null : new Date(Number(authorization.validBefore) * 1000)
    }))
  )

/** The chain id of an `eip155:<id>` CAIP-2 network, or undefined. */
export const evmChainId = (network: string): number | undefined => {
  const match = /^eip155:([1-9][0-9]{0,15})$/.exec(network)
  return match === null ? undefined : Number(match[1])
}

/** The EIP-712 domain of the token contract (USDC's `name`, `version`, chain id and address). */
export interface Eip3009Domain {
  readonly name: string
  readonly version: string
  readonly chainId: number
  readonly verifyingContract: Hex
}

/** The recovery bit a signature's last byte stands for: 0/1, or 27/28 (pre-EIP-155 `v`); anything else is none. */
const recoveryBit = (v: number): 0 | 1 | undefined =>
  v === 0 || v === 27 ? 0 : v === 1 || v === 28 ? 1 : undefined

/**
 * Recovers the signer's 65-byte uncompressed public key from an EIP-712 digest, the 64 bytes r‖s and the
 * recovery bit; null when r is no curve point's x. May throw on an r or s of 0 or ≥ n.
 */
export type RecoverPublicKey = (hash: Uint8Array, rs: Uint8Array, bit: 0 | 1) => Uint8Array | null | Promise<Uint8Array | null>

/** viem's own recovery (noble, pure JS, ~20× slower than native libsecp256k1): the last fallback. */
export const recoverWithNoble: RecoverPublicKey = async (hash, rs, bit) =>
  hexToBytes(await recoverPublicKey({ hash: toHex(hash), signature: toHex(concat([rs, Uint8Array.of(27 + bit)])) }))

/** The one function of the `secp256k1` package's native binding that is used here. */
interface NativeSecp256k1 {
  readonly ecdsaRecover: (rs: Uint8Array, bit: number, hash: Uint8Array, compressed: boolean) => Uint8Array
}

// A variable, so that a bundler (the Lambda build) leaves the import alone: a bundle has no native binding.
const SECP256K1_NATIVE = "secp256k1/bindings.js"

/**
 * libsecp256k1 built natively (the optional `secp256k1` package's prebuilt N-API binding, its `bindings.js`:
 * never its pure-JS `elliptic` fallback). ~45 µs a recovery here against ~220 µs for the WebAssembly build.
 * Rejects when the package or a binding for this platform is missing.
 */
export const loadNativeRecover = (): Promise<RecoverPublicKey> =>
  (import(SECP256K1_NATIVE) as Promise<{ readonly default: NativeSecp256k1 }>).then(({ default: lib }) => (hash, rs, bit) => lib.ecdsaRecover(rs, bit, hash, false))

/**
 * libsecp256k1 as WebAssembly (tiny-secp256k1). Its module reads its .wasm file from beside itself, which a
 * bundle does not carry: there this rejects.
 */
export const loadWasmRecover = (): Promise<RecoverPublicKey> =>
  import("tiny-secp256k1").then((wasm) => (hash, rs, bit) => wasm.recover(hash, rs, bit, false))

let defaultRecover: Promise<RecoverPublicKey> | undefined
/**
 * The fastest recovery this process can load, chosen on first use: native libsecp256k1, else its
 * WebAssembly build, else noble. All three give the same verdicts (the tests check each against viem).
 */
const recoverDefault = () =>
  defaultRecover ??= loadNativeRecover().catch(loadWasmRecover).catch(() => recoverWithNoble)

/** keccak256 of the struct's EIP-712 type string. */
const AUTHORIZATION_TYPE_HASH = hexToBytes(keccak256(toBytes(
  "TransferWithAuthorization(address from,address to,uint256 value,uint256 validAfter,uint256 validBefore,bytes32 nonce)"
)))
const BYTES32 = /^0x[0-9a-fA-F]{64}$/

/** Domain separators already computed (a process sees a handful of token domains); bounded. */
const separators = new Map<string, Uint8Array>()

const separatorOf = (domain: Eip3009Domain): Uint8Array => {
  const key = JSON.stringify([domain.name, domain.version, domain.chainId, domain.verifyingContract])
  let separator = separators.get(key)
  if (separator === undefined) {
    separator = hexToBytes(domainSeparator({ domain }))
    if (separators.size >= 64) separators.clear()
    separators.set(key, separator)
  }
  return separator
}

const isUint256 = (n: unknown): n is bigint => typeof n === "bigint" && n >= 0n && n <= MAX_UINT256

/**
 * The EIP-712 digest of a TransferWithAuthorization: viem's `hashTypedData`, with the domain separator
 * remembered and the six fixed-width fields encoded directly (two keccaks where viem's generic encoder
 * spends five). Anything not already in the canonical form (checksummed addresses, uint256 bigints, a
 * 32-byte nonce) goes through `hashTypedData` itself, so its verdicts (including its refusals) stay viem's.
 */
export const eip3009Digest = (domain: Eip3009Domain, a: Eip3009Authorization): Hex => {
  const canonical = isAddress(a.from) && isAddress(a.to) && isUint256(a.value) && isUint256(a.validAfter) &&
    isUint256(a.validBefore) && typeof a.nonce === "string" && BYTES32.test(a.nonce) &&
    typeof domain.name === "string" && typeof domain.version === "string" && Number.isSafeInteger(domain.chainId) &&
    domain.chainId >= 0 && isAddress(domain.verifyingContract)
  if (!canonical) {
    return hashTypedData({ domain, types: transferWithAuthorizationTypes, primaryType: "TransferWithAuthorization", message: a })
  }
  const struct = Buffer.alloc(7 * 32)
  struct.set(AUTHORIZATION_TYPE_HASH, 0)
  struct.write(a.from.slice(2), 32 + 12, "hex")
  struct.write(a.to.slice(2), 64 + 12, "hex")
  struct.write(a.value.toString(16).padStart(64, "0"), 96, "hex")
  struct.write(a.validAfter.toString(16).padStart(64, "0"), 128, "hex")
  struct.write(a.validBefore.toString(16).padStart(64, "0"), 160, "hex")
  struct.write(a.nonce.slice(2), 192, "hex")
  const message = Buffer.alloc(2 + 32 + 32)
  message[0] = 0x19
  message[1] = 0x01
  message.set(separatorOf(domain), 2)
  message.set(keccak256(struct, "bytes"), 34)
  return keccak256(message)
}

/**
 * True when `signature` is `authorization.from`'s EIP-712 signature of the authorization under the token's
 * domain. EOA signatures only (ecrecover): smart-wallet (EIP-1271/6492) signatures would need a chain.
 * Never rejects: a signature that cannot even be parsed is simply not valid.
 *
 * How: `eip3009Digest` gives the EIP-712 digest (viem's `hashTypedData`, faster); the signer's public key is
 * recovered from it with libsecp256k1 (native where it loads, else WebAssembly; both far cheaper than viem's
 * pure-JS recovery, which `recover` may name instead); the address it stands for (the last 20 bytes of keccak256 of
 * the 64-byte uncompressed key)
 * must be `from`, compared case-insensitively. The verdicts are exactly viem `verifyTypedData`'s, which the
 * tests check property by property: the signature is 65 bytes of hex (viem's `size`, so 129 digits whose
 * last one is v count too); v is 0, 1, 27 or 28; r and s are in 1..n-1; a high s is accepted (as by
 * ecrecover and viem); r must be the x-coordinate of a curve point.
 */
export const verifyEip3009Signature = async (
  payment: Eip3009Payment,
  domain: Eip3009Domain,
  recover?: RecoverPublicKey
): Promise<boolean> => {
  try {
    const from: unknown = payment.authorization.from
    if (typeof from !== "string" || !isAddress(from, { strict: false })) return false
    const hash = eip3009Digest(domain, payment.authorization)
    // As viem reads it: a string that is not hex stands for its UTF-8 bytes (which in practice then fail).
    const signature = isHex(payment.signature) ? payment.signature : toHex(payment.signature)
    if (size(signature) !== 65) return false
    const bit = recoveryBit(hexToNumber(`0x${signature.slice(130)}`))
    if (bit === undefined) return false
    const publicKey = await (recover ?? await recoverDefault())(
      Buffer.from(hash.slice(2), "hex"),
      Buffer.from(signature.slice(2, 130), "hex"),
      bit
    )
    return publicKey !== null && `0x${keccak256(publicKey.subarray(1)).slice(26)}` === from.toLowerCase()
  } catch {
    return false
  }
}
