/*
 * Shared by the EVM payment tests of this folder: a buyer with a fresh key, USDC's Base Sepolia terms, and
 * EIP-3009 authorizations signed the way the official client signs them (viem's signTypedData).
 */
import { getAddress, type Hex, verifyTypedData } from "viem"
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts"
import type { Eip3009Terms } from "../../../adapters/evm/Eip3009Check.js"
import {
  type Eip3009Authorization,
  type Eip3009Domain,
  type Eip3009Payment,
  transferWithAuthorizationTypes
} from "../../../adapters/evm/EvmPayment.js"

/** secp256k1's group order. */
export const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n
export const MAX_UINT256 = (1n << 256n) - 1n
export const USDC_BASE_SEPOLIA = "0x036CbD53842c5426634e7929541eC2318f3dCF7e"
export const PRICE = 10_000n
/** A fixed "now" for the validity window, in Unix seconds. */
export const NOW = 1_750_000_000n

export const newAccount = (): PrivateKeyAccount => privateKeyToAccount(generatePrivateKey())
export const newAddress = (): Hex => newAccount().address

export const termsFor = (payTo: string, over: Partial<Eip3009Terms> = {}): Eip3009Terms => ({
  network: "eip155:84532",
  asset: USDC_BASE_SEPOLIA,
  amount: PRICE,
  payTo,
  extra: { name: "USDC", version: "2" },
  ...over
})

export const domainFor = (terms: Eip3009Terms): Eip3009Domain => ({
  name: terms.extra["name"]!,
  version: terms.extra["version"]!,
  chainId: Number(terms.network.split(":")[1]),
  verifyingContract: getAddress(terms.asset) as Hex
})

/** A fresh 32-byte nonce, lower-case hex. */
export const newNonce = (): Hex => `0x${Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("hex")}`

export const authorizationOf = (buyer: PrivateKeyAccount, terms: Eip3009Terms, over: Partial<Eip3009Authorization> = {}): Eip3009Authorization => ({
  from: buyer.address,
  to: getAddress(terms.payTo.toLowerCase()),
  value: terms.amount,
  validAfter: NOW - 60n,
  validBefore: NOW + 300n,
  nonce: newNonce(),
  ...over
})

export const sign = (buyer: PrivateKeyAccount, authorization: Eip3009Authorization, domain: Eip3009Domain): Promise<Hex> =>
  buyer.signTypedData({ domain, types: transferWithAuthorizationTypes, primaryType: "TransferWithAuthorization", message: authorization })

/** The x402 `exact` EVM payload (numbers as decimal strings, as on the wire). */
export const wirePayload = (payment: Eip3009Payment) => ({
  signature: payment.signature,
  authorization: {
    ...payment.authorization,
    value: payment.authorization.value.toString(),
    validAfter: payment.authorization.validAfter.toString(),
    validBefore: payment.authorization.validBefore.toString()
  }
})

/** viem's own verdict (`verifyTypedData`), false where it throws. */
export const viemVerdict = async (payment: Eip3009Payment, domain: Eip3009Domain): Promise<boolean> => {
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

const word = (n: bigint) => n.toString(16).padStart(64, "0")
export const rOf = (signature: Hex) => BigInt(`0x${signature.slice(2, 66)}`)
export const sOf = (signature: Hex) => BigInt(`0x${signature.slice(66, 130)}`)
export const vOf = (signature: Hex) => Number.parseInt(signature.slice(130), 16)
/** r‖s‖v, then any bytes after (hex digits without 0x). */
export const compose = (r: bigint, s: bigint, v: number, after = ""): Hex =>
  `0x${word(r)}${word(s)}${v.toString(16).padStart(2, "0")}${after}`
