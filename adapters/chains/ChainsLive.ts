import { Effect, Layer, type Either } from "effect"
import type { Address, Chain, ChainFacts } from "../../domain/Wallet.js"
import { Chains, InvalidAddress, InvalidPayment, type PaymentIdentity } from "../../ports/Chains.js"
import { baseFacts, normalizeBaseAddress } from "../evm/BaseAddress.js"
import { evmPaymentIdentity } from "../evm/EvmPayment.js"
import { normalizeSolanaAddress, solanaFacts } from "../solana/SolanaAddress.js"
import { solanaPaymentIdentity } from "../solana/SolanaPayment.js"

interface ChainRules {
  readonly normalize: (raw: string) => Either.Either<Address, string>
  readonly facts: (livemode: boolean) => ChainFacts
  readonly paymentIdentity: (payload: unknown) => Either.Either<PaymentIdentity, string>
}

// A Record (not a ternary) so that adding a chain to the domain fails to compile until it has rules here.
const rules: Record<Chain, ChainRules> = {
  base: { normalize: normalizeBaseAddress, facts: baseFacts, paymentIdentity: evmPaymentIdentity },
  solana: { normalize: normalizeSolanaAddress, facts: solanaFacts, paymentIdentity: solanaPaymentIdentity }
}

/** Address rules and network facts for every supported chain. Input is not trimmed: spaces are invalid. */
export const ChainsLive = Layer.succeed(Chains, {
  normalize: (chain, raw) =>
    rules[chain].normalize(raw).pipe(Effect.mapError((message) => new InvalidAddress({ chain, message }))),
  facts: (chain, livemode) => rules[chain].facts(livemode),
  paymentIdentity: (chain, payload) =>
    rules[chain].paymentIdentity(payload).pipe(Effect.mapError((message) => new InvalidPayment({ message })))
})
