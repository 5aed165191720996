import { Context, Data, type Effect } from "effect"

/** What a proof of wallet control must be for: this service, this URL, one of these networks. */
export interface WalletProofExpectation {
  /** The host of the public origin (`BASE_URL`), never the request's `Host`. */
  readonly domain: string
  /** The exact URL the proof must name. */
  readonly uri: string
  /** CAIP-2 networks the wallet may sign for, e.g. `eip155:8453`, `solana:5eykt4Us…`. */
  readonly networks: ReadonlyArray<string>
}

/** A wallet whose control was proven by a signature over the challenge fields below. */
export interface ProvenWallet {
  /** As signed: EVM addresses in the case the wallet used, Solana addresses base58. */
  readonly address: string
  /** The CAIP-2 network the wallet signed for. */
  readonly network: string
  /** The challenge nonce the wallet signed; the caller decides whether it is one of its own and unspent. */
  readonly nonce: string
  /** When the challenge was issued, as signed. */
  readonly issuedAt: Date
  /** When the challenge expires, as signed; null when it names no expiry. */
  readonly expiresAt: Date | null
}

/**
 * A proof that is no proof. `reason` is `malformed` for a header that cannot be read at all, else the x402
 * Sign-In-With-X code of the check that failed (`invalid_siwx_signature`, `invalid_siwx_uri_mismatch`, …).
 */
export class WalletProofError extends Data.TaggedError("WalletProofError")<{
  readonly reason: string
  readonly message: string
}> {}

/** Checks a wallet's signed sign-in message (x402 Sign-In-With-X: SIWE on EVM, SIWS on Solana). */
export class WalletProof extends Context.Tag("repomarket/WalletProof")<WalletProof, {
  readonly verify: (proof: string, expected: WalletProofExpectation) => Effect.Effect<ProvenWallet, WalletProofError>
}>() {}
