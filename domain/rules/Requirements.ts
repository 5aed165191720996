import { Option } from "effect"
import type { Checkout } from "../Checkout.js"
import type { PaymentRequirement, SubmittedPayment } from "../Payment.js"
import type { Chain, ChainFacts } from "../Wallet.js"

/** DECISIONS.md: `maxTimeoutSeconds` = 300. */
export const MAX_TIMEOUT_SECONDS = 300

/**
 * The payment options of a checkout: one `exact` USDC requirement per chain it has a payout address for,
 * amount = the price in atomic units. Empty when the checkout cannot sell (no price or no address).
 */
export const requirementsOf = (
  checkout: Checkout,
  livemode: boolean,
  resource: string,
  facts: (chain: Chain) => ChainFacts,
  facilitatorExtra: (chain: Chain) => Readonly<Record<string, string>>
): ReadonlyArray<PaymentRequirement> => {
  if (checkout.price === null) return []
  const price = checkout.price
  return checkout.chains.map((chain): PaymentRequirement => {
    const f = facts(chain)
    return {
      chain,
      livemode,
      scheme: "exact",
      network: f.network,
      v1Network: f.v1Network,
      asset: f.asset,
      amount: price,
      payTo: checkout.payTo[chain]!,
      maxTimeoutSeconds: MAX_TIMEOUT_SECONDS,
      resource,
      description: `${checkout.repo.owner}/${checkout.repo.name}: the repository's default branch as a .tar.gz`,
      extra: { ...f.extra, ...facilitatorExtra(chain) }
    }
  })
}

const sameAddress = (chain: Chain, a: string, b: string) => (chain === "base" ? a.toLowerCase() === b.toLowerCase() : a === b)

/** Whether what a v2 payment says it accepted names exactly these terms (network, asset, amount, payTo). */
export const matchesTerms = (
  chain: Chain,
  accepted: { readonly scheme: string; readonly network: string; readonly asset: string; readonly amount: string; readonly payTo: string },
  terms: { readonly network: string; readonly asset: string; readonly amount: bigint; readonly payTo: string }
): boolean =>
  accepted.scheme === "exact" && accepted.network === terms.network && sameAddress(chain, accepted.asset, terms.asset) &&
  accepted.amount === terms.amount.toString() && sameAddress(chain, accepted.payTo, terms.payTo)

/**
 * The one current requirement a payment was made for, if any. A v2 payment names what it accepted and must
 * match network, asset, amount and payTo exactly; a v1 payment names only scheme and network, and the
 * facilitator's verification against the chosen requirement checks the rest. A payment made for a voided
 * checkout, an old price or another address matches nothing.
 */
export const matchRequirement = (
  payment: SubmittedPayment,
  requirements: ReadonlyArray<PaymentRequirement>
): Option.Option<PaymentRequirement> =>
  Option.fromNullable(requirements.find((r) => {
    if (payment.scheme !== r.scheme || payment.network !== r.network) return false
    return Option.match(payment.accepted, {
      onNone: () => payment.x402Version === 1,
      // Every requirement is `exact` (its type says so), and matchesTerms checks the accepted scheme is `exact`.
      onSome: (a) => matchesTerms(r.chain, a, r)
    })
  }))
