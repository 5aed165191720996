import { Effect, Layer, Option, type Either } from "effect"
import type { Address, Chain, ChainFacts } from "../../domain/Wallet.js"
import { ChainUnreachable, Chains, InvalidAddress, InvalidPayment, type PaymentIdentity, PaymentRefused, type PaymentTerms } from "../../ports/Chains.js"
import { baseFacts, normalizeBaseAddress } from "../evm/BaseAddress.js"
import { checkEip3009 } from "../evm/Eip3009Check.js"
import { evmPaymentIdentity } from "../evm/EvmPayment.js"
import { normalizeSolanaAddress, solanaFacts } from "../solana/SolanaAddress.js"
import { checkSolana } from "../solana/SolanaCheck.js"
import { solanaPaymentIdentity } from "../solana/SolanaPayment.js"
import { makeRecentBlockhash } from "../solana/RecentBlockhash.js"
import { RPC_TIMEOUT_MS, SolanaRpcUrl } from "../x402/ChainStatus.js"

type Refusal = { readonly reason: string; readonly payer: string | null } | undefined

interface ChainRules {
  readonly normalize: (raw: string) => Either.Either<Address, string>
  readonly facts: (livemode: boolean) => ChainFacts
  readonly paymentIdentity: (payload: unknown) => Either.Either<PaymentIdentity, string>
  /** The local signature-and-terms check; `at` in unix seconds, null to leave the time window out. */
  readonly check: (payload: unknown, terms: PaymentTerms, at: bigint | null) => Promise<Refusal>
}

// A Record (not a ternary) so that adding a chain to the domain fails to compile until it has rules here.
const rules: Record<Chain, ChainRules> = {
  base: { normalize: normalizeBaseAddress, facts: baseFacts, paymentIdentity: evmPaymentIdentity, check: checkEip3009 },
  // A Solana transaction names no validity window of its own (its blockhash ages out on chain).
  solana: { normalize: normalizeSolanaAddress, facts: solanaFacts, paymentIdentity: solanaPaymentIdentity, check: (payload, terms) => checkSolana(payload, terms) }
}

/** Address rules and network facts for every supported chain. Input is not trimmed: spaces are invalid. */
export const ChainsLive = Layer.succeed(Chains, {
  normalize: (chain, raw) =>
    rules[chain].normalize(raw).pipe(Effect.mapError((message) => new InvalidAddress({ chain, message }))),
  facts: (chain, livemode) => rules[chain].facts(livemode),
  paymentIdentity: (chain, payload) =>
    rules[chain].paymentIdentity(payload).pipe(Effect.mapError((message) => new InvalidPayment({ message }))),
  checkPayment: (chain, payload, terms, at) =>
    Effect.promise(() =>
      rules[chain].check(payload, terms, Option.match(at, { onNone: () => null, onSome: (d) => BigInt(Math.floor(d.getTime() / 1000)) }))
    ).pipe(
      Effect.flatMap((refusal) => refusal === undefined ? Effect.void : Effect.fail(new PaymentRefused(refusal))),
      Effect.withSpan("Chains.checkPayment")
    ),
  // SOLANA_RPC_URL is read when asked (it was validated at start by the facilitator's chain status).
  latestSolanaBlockhash: Effect.flatMap(Effect.orElseSucceed(SolanaRpcUrl, () => Option.none()), (url) =>
    Option.match(url, {
      onNone: () => Effect.succeed(Option.none()),
      onSome: (u) =>
        makeRecentBlockhash(u, { timeoutMs: RPC_TIMEOUT_MS }).pipe(
          Effect.map(Option.some),
          Effect.mapError(() => new ChainUnreachable())
        )
    }))
})
