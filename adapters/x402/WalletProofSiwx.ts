import { parseSIWxHeader, type SIWxPayload, validateSIWxMessage, verifySIWxSignature } from "@x402/extensions/sign-in-with-x"
import { Effect, Layer } from "effect"
import { type ProvenWallet, WalletProof, WalletProofError } from "../../ports/WalletProof.js"

/** A proof is a few hundred bytes; anything much larger is not one. */
export const MAX_SIWX_HEADER_LENGTH = 8 * 1024

const refuse = (reason: string, message: string) => Effect.fail(new WalletProofError({ reason, message }))

/** The signature algorithm each chain family signs with (CAIP-122 `type`). */
const typeOf = (network: string) => network.startsWith("solana:") ? "ed25519" : "eip191"

/**
 * x402 Sign-In-With-X through @x402/extensions: the header is parsed, bound to this service (domain, the
 * exact checkout URL, a network it offers), checked for time (issuedAt, expirationTime, notBefore) and its
 * signature verified: EIP-191 `personal_sign` of the SIWE message by an EOA on EVM, ed25519 over the SIWS
 * message on Solana. Smart-contract wallets (EIP-1271, EIP-6492) would need an RPC call to the chain, which
 * this adapter does not make: their proofs are refused as `invalid_siwx_signature`.
 */
export const WalletProofSiwx = Layer.succeed(WalletProof, {
  verify: (header, expected) =>
    Effect.gen(function*() {
      if (header.length > MAX_SIWX_HEADER_LENGTH) {
        return yield* refuse("malformed", `is longer than ${MAX_SIWX_HEADER_LENGTH} characters`)
      }
      const payload: SIWxPayload = yield* Effect.try({
        try: () => parseSIWxHeader(header.trim()),
        catch: (e) => new WalletProofError({ reason: "malformed", message: `is not a Sign-In-With-X proof (${e instanceof Error ? e.message : "unreadable"})` })
      })
      if (payload.domain !== expected.domain) {
        return yield* refuse("invalid_siwx_domain_mismatch", `The proof is for ${JSON.stringify(payload.domain)}, not ${expected.domain}.`)
      }
      if (payload.uri !== expected.uri) {
        return yield* refuse("invalid_siwx_uri_mismatch", `The proof is for ${JSON.stringify(payload.uri)}, not this checkout (${expected.uri}).`)
      }
      if (!expected.networks.includes(payload.chainId) || payload.type !== typeOf(payload.chainId)) {
        return yield* refuse("invalid_siwx_unsupported_chain", `This checkout takes sign-in on ${expected.networks.join(", ")} only.`)
      }
      const valid = yield* Effect.tryPromise(() => validateSIWxMessage(payload, new URL(expected.uri))).pipe(Effect.orDie)
      if (!valid.isValid) return yield* refuse(valid.invalidReason, valid.invalidMessage)
      // The SIWE formatter throws on fields it cannot put into a message (a non-checksummed address, say).
      const verified = yield* Effect.tryPromise(() => verifySIWxSignature(payload)).pipe(
        Effect.catchAll(() => Effect.succeed({ isValid: false, invalidReason: "invalid_siwx_signature", invalidMessage: "The signed message could not be rebuilt." } as const))
      )
      if (!verified.isValid) return yield* refuse(verified.invalidReason, verified.invalidMessage)
      return {
        address: verified.payer,
        network: payload.chainId,
        nonce: payload.nonce,
        issuedAt: new Date(payload.issuedAt),
        expiresAt: payload.expirationTime === undefined ? null : new Date(payload.expirationTime)
      } satisfies ProvenWallet
    })
})
