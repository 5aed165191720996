import { Effect, Option, Redacted, Schedule, Stream } from "effect"
import { type Checkout, checkoutPath, repoPagePath, testCheckoutPath } from "../model/Checkout.js"
import {
  CheckoutGone,
  NotFound,
  NotSelling,
  PaymentIdConflict,
  PaymentRejected,
  RateLimited,
  PaymentsUnavailable,
  ReceiptExpired,
  SettlementFailed,
  SettlementPending
} from "../model/Errors.js"
import { type CheckoutId, IdPrefix, RepoRef, type SaleId } from "../model/Ids.js"
import type { Listing } from "../model/Listing.js"
import { Sale } from "../model/Sale.js"
import { Chain } from "../model/Wallet.js"
import { parseReceipt, receiptExpired, receiptToken } from "../model/rules/Receipt.js"
import { matchesTerms, matchRequirement, requirementsOf } from "../model/rules/Requirements.js"
import { isSelling } from "../model/rules/Selling.js"
import { newId, now } from "../model/rules/Tokens.js"
import { Chains, type PaymentRefused } from "../ports/Chains.js"
import { RateLimiter } from "../ports/RateLimiter.js"
import { CodeHost, type CodeHostError } from "../ports/CodeHost.js"
import { ListingStore } from "../ports/ListingStore.js"
import { Packager } from "../ports/Packager.js"
import {
  type Facilitator,
  PaymentFacilitator,
  type PaymentRequirement,
  type Settlement,
  type SubmittedPayment
} from "../ports/PaymentFacilitator.js"
import { PublicOrigin } from "../ports/PublicOrigin.js"
import { SaleLedger } from "../ports/SaleLedger.js"
import { SecretBox } from "../ports/SecretBox.js"
import { AUTHORIZATION_CANCELED, AUTHORIZATION_USED_ELSEWHERE, TRANSACTION_FAILED, TRANSFER_MISMATCH } from "../model/SettlementReasons.js"
import { cannotDeliver } from "./HostErrors.js"
import { testGoodsFiles } from "../model/rules/TestGoods.js"
import { Listings } from "./Listings.js"
import { Settlements } from "./Settlements.js"

/** What a checkout offers right now. */
export interface Quote {
  /** The checkout, current. */
  readonly checkout: Checkout
  /** The listing it sells. */
  readonly listing: Listing
  /** Real money (true) or the test twin (false). */
  readonly livemode: boolean
  /** One x402 payment requirement per chain the listing pays out on. */
  readonly requirements: ReadonlyArray<PaymentRequirement>
  /** Absolute URL of the checkout (the x402 resource). */
  readonly resource: string
  /** Absolute URL of the repo page. */
  readonly page: string
}

/** Paid goods: the archive of the pinned commit, or the test twin's small tar.gz. */
export interface Goods {
  /** The settled sale. */
  readonly sale: Sale
  /** Always names the payer (x402 v1 requires it in the receipt), even when the facilitator left it out. */
  readonly settlement: Settlement & { readonly payer: string }
  /** The download's file name. */
  readonly filename: string
  /** The archive's bytes, streamed from the code host. */
  readonly body: Stream.Stream<Uint8Array, CodeHostError>
  /** Absolute URL that re-downloads the same commit for 7 days. */
  readonly receipt: string
}

/** Payment attempts (requests carrying a payment) per client address per minute, live and test checkouts together. */
export const PAYMENT_ATTEMPTS_PER_MINUTE = 60

/** What a payment already on the ledger is answered with, when it does not come with its buyer's id. */
const ALREADY_USED = "This payment was already used. Every part of a settled payment is public on chain, so presenting it again never unlocks the goods by itself. Recover the purchase with the receipt link (Link rel=\"receipt\") of the first answer, by presenting the payment again with the x402 payment-identifier id it was sent with, or with x402 Sign-In-With-X using the paying wallet."

/** What a buyer is told of a settlement that failed, by its reason. */
const settlementFailedDetail = (reason: string): string =>
  reason === AUTHORIZATION_USED_ELSEWHERE
    ? "The payment's authorization was used on chain by another transfer of the payer (same nonce, other recipient or amount), so this payment can never settle; nothing was delivered."
    : reason === AUTHORIZATION_CANCELED
    ? "The payer cancelled the payment's authorization on chain, so it can never settle; nothing was delivered."
    : reason === TRANSACTION_FAILED
    ? "The payment's transaction failed on chain, so it can never settle; nothing was delivered."
    : reason === TRANSFER_MISMATCH
    ? "The transaction that carries the payment's signature on chain does not pay this sale (another recipient, asset or amount), so this payment can never settle it; nothing was delivered."
    : "The payment could not be settled; nothing was delivered."

/** How long a second copy of a payment waits for a settle in flight before asking the chain (and answering 503). */
const SETTLING_WAIT = Schedule.intersect(Schedule.spaced("100 millis"), Schedule.recurUpTo("5 seconds"))

/**
 * Buying: the current checkout, its 402 quote, paying (verify, pin the commit, record the sale, settle, deliver)
 * and re-downloading by receipt.
 */
export class Purchases extends Effect.Service<Purchases>()("usecases/Purchases", {
  effect: Effect.gen(function*() {
    const store = yield* ListingStore
    const ledger = yield* SaleLedger
    const facilitators = yield* PaymentFacilitator
    const chains = yield* Chains
    const host = yield* CodeHost
    const packager = yield* Packager
    const box = yield* SecretBox
    const listings = yield* Listings
    const settlements = yield* Settlements
    const limiter = yield* RateLimiter
    const { baseUrl } = yield* PublicOrigin

    const pageOf = (repo: { owner: string; name: string }) => `${baseUrl}${repoPagePath(repo)}`

    /** The checkout, if it is current: unknown is 404, voided (repriced, re-walleted, taken down) is 410. */
    const current = Effect.fn("Purchases.current")(function*(id: string) {
      const found = yield* store.findCheckoutWithListing(id as CheckoutId)
      if (Option.isNone(found)) return yield* new NotFound({ detail: "No such checkout." })
      const { checkout, listing } = found.value
      const page = pageOf(checkout.repo)
      // Current means: not voided, and still the listing's own checkout. The second test also catches a
      // checkout orphaned by two concurrent reprices, so no stale price can ever be paid.
      if (checkout.isVoid || Option.isNone(listing) || !listing.value.isLive || listing.value.checkoutId !== checkout.id) {
        return yield* new CheckoutGone({ page, detail: `This checkout was replaced or withdrawn; see ${page} for the current one.` })
      }
      return { checkout, listing: listing.value, page }
    })

    const facilitatorFor = (livemode: boolean): Effect.Effect<Facilitator, PaymentsUnavailable> =>
      livemode
        ? Option.match(facilitators.live, {
          onNone: () => Effect.fail(new PaymentsUnavailable({ detail: "Live payments are off: the operator has not configured an x402 facilitator. The test checkout still works." })),
          onSome: Effect.succeed
        })
        : Effect.succeed(facilitators.test)

    const settlementUnknown = new SettlementPending({
      retryAfterSeconds: 10,
      detail: "The payment was sent for settlement but its outcome is not known yet, so it may have been charged. It is recorded and will not be charged twice: retry shortly with the same payment (and its payment-identifier) to receive the goods once it settles."
    })

    const unavailable = (what: string) => () => new PaymentsUnavailable({ detail: `The payment facilitator could not ${what}; nothing was charged by this request. Try again shortly.` })

    /** The 402 offer: one requirement per chain the listing has a payout address for. */
    const quote = Effect.fn("Purchases.quote")(function*(id: string, livemode: boolean) {
      const { checkout, listing, page } = yield* current(id)
      if (!isSelling(listing) || checkout.price === null || checkout.chains.length === 0) {
        return yield* new NotSelling({ page, detail: "This listing is not selling right now (no price or no payout wallet)." })
      }
      yield* facilitatorFor(livemode)
      // A chain the facilitator cannot serve right now (e.g. it names no Solana fee payer) is left out of
      // the offer; with no chain left there is nothing to pay.
      const extras = yield* Effect.forEach(checkout.chains, (chain) =>
        Effect.map(Effect.option(facilitators.extra(chain, livemode)), (extra) => [chain, extra] as const))
      const extraOf = new Map(extras.flatMap(([chain, extra]) => Option.isSome(extra) ? [[chain, extra.value] as const] : []))
      if (extraOf.size === 0) return yield* unavailable("describe its payment options")()
      const resource = baseUrl + (livemode ? checkoutPath(checkout.id) : testCheckoutPath(checkout.id))
      const requirements = requirementsOf(checkout, livemode, resource, (c) => chains.facts(c, livemode), (c) => extraOf.get(c) ?? {})
        .filter((r) => extraOf.has(r.chain))
      return { checkout, listing, livemode, requirements, resource, page } satisfies Quote
    })

    /**
     * The bytes a settled sale buys: the pinned commit's archive, or for the test twin a manifest and a note.
     * `held` is the sale's listing when the caller already read it in this request (a purchase); otherwise
     * it is read here.
     */
    const goodsOf = Effect.fn("Purchases.goods")(function*(sale: Sale, settlement: Goods["settlement"], held?: Listing) {
      const listing = held ?? Option.getOrNull(yield* store.findById(sale.listingId))
      const [owner, name] = sale.repo.split("/") as [string, string]
      const sha = sale.commitSha ?? "unknown"
      const filename = `${owner}-${name}-${sha.slice(0, 7)}.tar.gz`
      const receipt = `${baseUrl}/downloads/${receiptToken(sale.id, box.mac)}`
      const token = listing === null ? Option.none() : yield* listings.tokenOf(listing)
      // Both kinds of goods ask the code host only when their body is first pulled: a failure there comes
      // after the sale settled, and the host answers it with the receipt link (goods owed, not lost).
      const body: Stream.Stream<Uint8Array, CodeHostError> = sale.livemode
        ? host.archive(listing?.repo ?? new RepoRef({ owner, name }), sha, token)
        : Stream.unwrap(Effect.gen(function*() {
          const info = yield* host.repo({ owner, name }, token)
          // The tree of the commit paid for, not of today's head: the manifest names the pinned commit.
          const pinned = sale.commitSha === null ? info : { ...info, headSha: sale.commitSha }
          const tree = yield* host.tree(pinned, token)
          return packager.tarGz(testGoodsFiles(sale, tree, `${owner}-${name}-${sha.slice(0, 7)}`))
        }))
      return { sale, settlement, filename, body, receipt } satisfies Goods
    })

    const settlementOf = (sale: Sale): Goods["settlement"] => ({
      success: true,
      transaction: sale.transaction,
      network: sale.network,
      payer: sale.payer,
      errorReason: null
    })

    /**
     * A pending sale, given a moment: a settle in flight usually lands within it; then the chain (or the
     * facilitator) is asked. Answers the sale as it then stands, possibly still pending.
     */
    const settling = Effect.fnUntraced(function*(pending: Sale) {
      const sale = yield* Effect.flatten(ledger.findById(pending.id)).pipe(
        Effect.orDie,
        Effect.filterOrFail((s) => s.status !== "pending", () => "still_pending" as const),
        Effect.retry(SETTLING_WAIT),
        Effect.orElseSucceed(() => pending)
      )
      return sale.status === "pending" ? yield* settlements.resolve(sale) : sale
    })

    const failedEarlier = (sale: Sale) =>
      new SettlementFailed({ reason: sale.failureReason ?? "settlement_failed", network: sale.network, payer: sale.payer, detail: "This payment failed to settle earlier; it cannot be used again." })

    /**
     * A payment already on the ledger, presented without its buyer's payment-identifier id: it never settles
     * twice and never unlocks the goods (its every byte is public once settled). Settled → 402
     * `payment_already_used` naming the ways to recover; failed → its failure again; pending → 503 until known.
     */
    const alreadyPresented = Effect.fnUntraced(function*(existing: Sale) {
      const sale = existing.status === "pending" ? yield* settling(existing) : existing
      if (sale.status === "pending") return yield* settlementUnknown
      if (sale.status === "failed") return yield* failedEarlier(sale)
      return yield* new PaymentRejected({ reason: "payment_already_used", detail: ALREADY_USED })
    })

    /** A purchase retried with its buyer's id (already checked to be that purchase): its goods, once settled. */
    const recovered = Effect.fnUntraced(function*(existing: Sale, held?: Listing) {
      const sale = existing.status === "pending" ? yield* settling(existing) : existing
      if (sale.status === "pending") return yield* settlementUnknown
      if (sale.status === "failed") return yield* failedEarlier(sale)
      return yield* goodsOf(sale, settlementOf(sale), held)
    })

    /** The keyed digest a payment-identifier id is stored as: a leaked ledger does not reveal ids. */
    const paymentIdDigest = (network: string, payer: string, id: Redacted.Redacted<string>) =>
      box.mac(`payment-id:${network}:${payer}:${Redacted.value(id)}`)

    const idConflict = new PaymentIdConflict({
      detail: "This payment-identifier id names another purchase of this payer, and this payment is not that purchase's (other terms, another checkout, or not validly signed by the payer). To retry that purchase send the same payment (or a new one signed by the same payer for the same terms at the same checkout) with the id; for a new purchase use a new id."
    })

    /**
     * The buyer's retry of the purchase it made with this payment-identifier id: the payment must be signed by
     * the sale's payer, for the sale's terms, at the sale's checkout. The signature is checked here, with
     * no facilitator; its time window is not (a retry may come after the authorization lapsed).
     */
    const retry = Effect.fnUntraced(function*(sale: Sale, id: string, livemode: boolean, payment: SubmittedPayment) {
      if (sale.checkoutId !== id || sale.livemode !== livemode || payment.network !== sale.network) return yield* idConflict
      const claimed = Option.getOrNull(payment.accepted)
      if (claimed !== null && !matchesTerms(sale.chain, claimed, sale)) return yield* idConflict
      const terms = { network: sale.network, asset: sale.asset, amount: sale.amount, payTo: sale.payTo, extra: chains.facts(sale.chain, sale.livemode).extra }
      yield* chains.checkPayment(sale.chain, payment.payload, terms, Option.none()).pipe(Effect.mapError(() => idConflict))
      return yield* recovered(sale)
    })

    /** The chain a payment's network belongs to, in this mode. */
    const chainOf = (network: string, livemode: boolean): Chain | undefined =>
      Chain.literals.find((c) => chains.facts(c, livemode).network === network)

    /**
     * A purchase, in the order DECISIONS.md fixes: verify → pin the commit the code host will deliver →
     * record the sale as pending (durable before any byte leaves) → settle → mark settled → goods. Before
     * that: the client's attempts are limited, a retry with the buyer's payment-identifier id is recognised
     * (even at a checkout no longer current), and the payment is checked locally (signature, terms, window)
     * so junk never costs a facilitator call. A payment already on the ledger never settles twice and never
     * unlocks goods by itself.
     */
    const pay = Effect.fn("Purchases.pay")(function*(id: string, livemode: boolean, payment: SubmittedPayment, client: string) {
      yield* limiter.consume(`checkout:pay:${client}`, PAYMENT_ATTEMPTS_PER_MINUTE, 60_000).pipe(
        Effect.mapError((e) => new RateLimited({ retryAfterSeconds: e.retryAfterSeconds, detail: "Too many payment attempts from this address; wait and try again." }))
      )

      // The buyer's id, scoped to the payer the payment names: a retry of that payer's purchase is answered
      // from the ledger before the checkout must be current and before any facilitator is asked.
      let digest: string | null = null
      const idChain = chainOf(payment.network, livemode)
      if (payment.paymentId !== undefined && idChain !== undefined) {
        const named = yield* Effect.option(chains.paymentIdentity(idChain, payment.payload))
        if (Option.isSome(named)) {
          digest = paymentIdDigest(payment.network, named.value.payer, payment.paymentId)
          const prior = yield* ledger.findByPaymentId(payment.network, named.value.payer, digest)
          if (Option.isSome(prior)) return yield* retry(prior.value, id, livemode, payment)
        }
      }

      const q = yield* quote(id, livemode)
      const facilitator = yield* facilitatorFor(livemode)
      const onNetwork = q.requirements.find((r) => r.network === payment.network)
      if (onNetwork === undefined) {
        return yield* new PaymentRejected({ reason: "network_mismatch", detail: `This checkout does not take payments on ${payment.network}.` })
      }
      const identity = yield* chains.paymentIdentity(onNetwork.chain, payment.payload).pipe(
        Effect.mapError((e) => new PaymentRejected({ reason: "invalid_payload", detail: e.message }))
      )
      const requirement = yield* Option.match(matchRequirement(payment, q.requirements), {
        onNone: () => Effect.fail(new PaymentRejected({ reason: "requirements_mismatch", detail: "The payment was made for other terms (price, address, asset or network); pay one of the current requirements." })),
        onSome: Effect.succeed
      })
      // Signed by its payer and for these terms, checked here: junk never reaches the facilitator, and a
      // stranger holding a settled payment's public parts cannot get past this with a signature of its own.
      const refused = (e: PaymentRefused) => new PaymentRejected({ reason: e.reason, detail: "The payment is not validly signed by its payer for this checkout's terms." })
      yield* chains.checkPayment(requirement.chain, payment.payload, requirement, Option.none()).pipe(Effect.mapError(refused))
      const paymentKey = `${payment.network}:${identity.key}`
      const known = yield* ledger.findByPaymentKey(paymentKey)
      if (Option.isSome(known)) {
        // Recorded by a copy of this payment that raced past the id lookup above: with the same id, the buyer's retry.
        const sameBuyerId = payment.paymentId !== undefined && known.value.payer === identity.payer &&
          known.value.paymentIdDigest === paymentIdDigest(payment.network, identity.payer, payment.paymentId)
        return yield* (sameBuyerId ? retry(known.value, id, livemode, payment) : alreadyPresented(known.value))
      }
      yield* chains.checkPayment(requirement.chain, payment.payload, requirement, Option.some(yield* now)).pipe(Effect.mapError(refused))

      const verification = yield* facilitator.verify(payment, requirement).pipe(Effect.mapError(unavailable("verify the payment")))
      if (!verification.valid) {
        return yield* new PaymentRejected({ reason: verification.invalidReason ?? "invalid_payment", detail: "The payment did not verify." })
      }

      // Pin the commit and make sure the code host can still serve it, before anyone is charged.
      const token = yield* listings.tokenOf(q.listing)
      const info = yield* host.repo(q.listing.repo, token).pipe(Effect.mapError(cannotDeliver))
      const at = yield* now
      const saleId = yield* newId<SaleId>(IdPrefix.sale).pipe(Effect.provideService(SecretBox, box))
      // The payer the signature was checked against: the same string the buyer's id is scoped to.
      const payer = identity.payer
      if (payment.paymentId !== undefined && digest === null) digest = paymentIdDigest(payment.network, payer, payment.paymentId)
      const sameId = (sale: Sale) => digest !== null && sale.paymentIdDigest === digest && sale.payer === payer
      // From the pending record to the recorded outcome nothing may stop half-way: a buyer who disconnects
      // interrupts the request, which would leave a payment charged but its sale pending for ever.
      const outcome = yield* Effect.uninterruptible(Effect.gen(function*() {
        const record = ledger.recordPending(new Sale({
          id: saleId,
          paymentKey,
          listingId: q.listing.id,
          checkoutId: q.checkout.id,
          accountId: q.listing.accountId,
          repo: q.listing.repo.slug,
          livemode,
          chain: requirement.chain,
          network: requirement.network,
          asset: requirement.asset,
          amount: requirement.amount,
          payTo: requirement.payTo,
          payer,
          commitSha: info.headSha,
          transaction: null,
          status: "pending",
          failureReason: null,
          createdAt: at,
          settledAt: null,
          // A Solana transaction names no expiry: its blockhash ages out within minutes, well inside the
          // requirement's own time limit, so that limit bounds it.
          settleBy: identity.settleBy ?? new Date(at.getTime() + requirement.maxTimeoutSeconds * 1000),
          paymentIdDigest: digest
        }))
        // Two payments of one payer with one id at once: the store keeps one sale per id (the loser's write
        // is refused, a defect), and the loser is a retry of the winner's purchase.
        const recorded = digest === null ? record : record.pipe(
          Effect.catchAllDefect((defect) =>
            Effect.flatMap(ledger.findByPaymentId(requirement.network, payer, digest!), Option.match({
              onNone: () => Effect.die(defect),
              onSome: (sale) => Effect.succeed({ sale, created: false })
            })))
        )
        const { sale: pending, created } = yield* recorded
        // Another copy of this payment (or another payment with this id) got there first: it alone settles.
        if (!created) return { replay: pending } as const

        const fail = (reason: string) => settlements.markFailed(pending, reason)
        // No answer (a timeout, a 5xx, a lost connection) is no refusal: the payment may have moved. The sale
        // stays pending; the chain (the reconciler) or the buyer's retry settles its fate.
        const settled = yield* facilitator.settle(payment, requirement).pipe(
          Effect.mapError(() => settlementUnknown)
        )
        // The payer is optional in a v2 settle answer; the sale knows it from the payment it verified.
        const settlement = { ...settled, payer: settled.payer ?? pending.payer }
        if (!settlement.success) {
          // A refusal can hide a payment that moved all the same: anyone who saw the authorization broadcast
          // can submit it first, and the facilitator's own transfer then fails. The chain decides, and only on
          // final evidence of the very transfer this sale was signed for: a used nonce is not enough (the payer
          // may have spent it on another authorization of its own, or cancelled it).
          const onChain = yield* facilitator.status(pending)
          if (onChain._tag === "Settled") {
            const moved = { ...settlement, success: true, transaction: onChain.transaction, errorReason: null }
            return { settled: yield* settlements.markSettled(pending, moved), settlement: moved } as const
          }
          // On chain but not final yet: its fate is being decided, so the sale stays pending (the buyer's retry
          // and the reconciler finish it). Without evidence either way, the facilitator's refusal stands.
          if (onChain._tag === "NotFinal") return yield* settlementUnknown
          const reason = onChain._tag === "Failed" ? onChain.reason : settlement.errorReason ?? "settlement_failed"
          yield* fail(reason)
          return yield* new SettlementFailed({ reason, network: settlement.network, payer: settlement.payer, detail: settlementFailedDetail(reason) })
        }
        return { settled: yield* settlements.markSettled(pending, settlement), settlement } as const
      }))
      if ("replay" in outcome) {
        if (!sameId(outcome.replay)) return yield* alreadyPresented(outcome.replay)
        // The same id: this request is the buyer's own retry, and the payment was checked for the terms.
        if (outcome.replay.checkoutId !== q.checkout.id) return yield* idConflict
        return yield* recovered(outcome.replay, q.listing)
      }
      // The listing this purchase was quoted from is the sale's own (the sale was recorded from it).
      return yield* goodsOf(outcome.settled, outcome.settlement, q.listing)
    })

    /** `GET /downloads/<token>`: the same commit again, for 7 days after settlement. */
    const download = Effect.fn("Purchases.download")(function*(token: string) {
      const unknown = new NotFound({ detail: "No such download." })
      const saleId = parseReceipt(token, box.verifyMac)
      if (saleId === null) return yield* unknown
      const sale = yield* Effect.flatten(ledger.findById(saleId)).pipe(Effect.mapError(() => unknown))
      if (sale.status !== "settled" || sale.settledAt === null) return yield* unknown
      if (receiptExpired(sale.settledAt, yield* now)) {
        const [owner, name] = sale.repo.split("/") as [string, string]
        return yield* new ReceiptExpired({ page: pageOf({ owner, name }), detail: "This download link has expired (links last 7 days after payment)." })
      }
      return yield* goodsOf(sale, settlementOf(sale))
    })

    return { current, quote, pay, download, goods: goodsOf } as const
  })
}) {}
