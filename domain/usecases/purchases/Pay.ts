import { Cause, Effect, Option } from "effect"
import { PaymentRejected, RateLimited, SettlementFailed } from "../../Errors.js"
import { echoedCommit, echoedUpdatesDays } from "../../ReceiptClaims.js"
import { IdPrefix, type SaleId } from "../../Ids.js"
import { Sale } from "../../Sale.js"
import { Chain } from "../../Wallet.js"
import { settleInFlight } from "../../SettlementReasons.js"
import { matchRequirement } from "../../rules/Requirements.js"
import { now } from "../../rules/Clock.js"
import { newId } from "../Minting.js"
import type { PaymentRefused } from "../../../ports/Chains.js"
import type { SubmittedPayment } from "../../../ports/PaymentFacilitator.js"
import { SecretBox } from "../../../ports/SecretBox.js"
import { cannotDeliver } from "../HostErrors.js"
import type { PurchaseDeps } from "./Deps.js"
import type { makeGoods } from "./Goods.js"
import { commitMovedDetail, notVerifiedDetail, OFFER_MISMATCH, settlementFailedDetail, settleRefusedDetail, updatesChangedDetail } from "./Messages.js"
import type { makeQuoting } from "./Quote.js"
import type { makeRecovery } from "./Recovery.js"

/** Payment attempts (requests carrying a payment) per client address per minute, live and test checkouts together. */
export const PAYMENT_ATTEMPTS_PER_MINUTE = 60

/** Paying: the one path from a signed payment to goods. */
export const makePay = (
  { box, chains, host, ledger, limiter, settlements, tokens }: PurchaseDeps,
  { facilitatorFor, priced, unavailable }: ReturnType<typeof makeQuoting>,
  { goodsOf }: ReturnType<typeof makeGoods>,
  { alreadyPresented, idConflict, latestOf, paymentIdDigest, recovered, retry, settlementUnknown }: ReturnType<typeof makeRecovery>
) => {
  /** The chain a payment's network belongs to, in this mode. */
  const chainOf = (network: string, livemode: boolean): Chain | undefined =>
    Chain.literals.find((c) => chains.facts(c, livemode).network === network)

  /**
   * A purchase, in the order DECISIONS.md fixes: verify → confirm the code host can deliver and pin the commit
   * (the one the payment's echoed offer names, or the payment is refused) → record the sale as pending (durable
   * before any byte leaves) → settle → mark settled → goods. Before
   * that: the client's attempts are limited, a retry with the buyer's payment-identifier id is recognised
   * (even at a checkout no longer current), and the payment is checked locally (signature, terms, window)
   * so junk never costs a facilitator call. A payment already on the ledger never settles twice and never
   * unlocks goods by itself. `latest`: a retry with the buyer's id gets the listing's current commit within the
   * sale's update window rather than the commit paid for (a new payment buys the commit sold now either way).
   */
  const pay = Effect.fn("Purchases.pay")(function*(id: string, livemode: boolean, payment: SubmittedPayment, client: string, latest = false) {
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
        if (Option.isSome(prior)) return yield* retry(prior.value, id, livemode, payment, latest, client)
      }
    }

    const q = yield* priced(id, livemode)
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
      return yield* (sameBuyerId ? retry(known.value, id, livemode, payment, latest, client) : alreadyPresented(known.value))
    }
    // The offer this payment was made against (an x402 v2 client echoes the 402's signed offers) must name the
    // commit sold now: a push between the 402 and the payment, or an edited echo, is refused before anyone is
    // charged, so no payment ever buys other bytes than its offer named. Checked here against the head the code
    // host gives now (a host that cannot say now is asked again after verify), so a moved commit costs no
    // facilitator call. Without an echo (x402 v1 sends none) the payment buys the commit sold now, which its
    // receipt names.
    const echoed = echoedCommit(payment.raw, payment.network)
    if (echoed._tag === "unreadable") return yield* new PaymentRejected({ reason: "offer_mismatch", detail: OFFER_MISMATCH })
    // The update window is part of what the offer sold: a payment whose offer named another one than the listing
    // has now (the seller changed it since, or the echo was edited) is refused before anyone is charged.
    const offeredDays = echoedUpdatesDays(payment.raw, payment.network)
    if (offeredDays !== null && offeredDays !== q.listing.updatesDays) {
      return yield* new PaymentRejected({ reason: "offer_mismatch", detail: updatesChangedDetail(offeredDays, q.listing.updatesDays) })
    }
    const token = yield* tokens.tokenOf(q.listing)
    const movedFrom = (head: string) =>
      echoed._tag === "names" && echoed.commit.toLowerCase() !== head.toLowerCase()
        ? Effect.fail(new PaymentRejected({ reason: "commit_moved", detail: commitMovedDetail(q.listing.repo.slug, head) }))
        : Effect.void
    const headNow = yield* Effect.option(host.repo(q.listing.repo, token))
    if (Option.isSome(headNow)) yield* movedFrom(headNow.value.headSha)
    yield* chains.checkPayment(requirement.chain, payment.payload, requirement, Option.some(yield* now)).pipe(Effect.mapError(refused))

    const verification = yield* facilitator.verify(payment, requirement).pipe(Effect.mapError(unavailable("verify the payment")))
    if (!verification.valid) {
      const reason = verification.invalidReason ?? "invalid_payment"
      return yield* new PaymentRejected({ reason, detail: notVerifiedDetail(reason) })
    }

    // Pin the commit and make sure the code host can still serve it, before anyone is charged: the head now must
    // still be the one the payment's offer named (it may have moved while the payment was verified).
    const info = yield* host.repo(q.listing.repo, token).pipe(Effect.mapError(cannotDeliver))
    yield* movedFrom(info.headSha)
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
        paymentIdDigest: digest,
        // The update window this payment buys is the one offered now; a later change to the listing's
        // leaves it as it was.
        updatesDays: q.listing.updatesDays
      }))
      // Two payments of one payer with one id at once: the store keeps one sale per id (the loser's write
      // is refused: a StorageError, or a defect), and the loser is a retry of the winner's purchase.
      const recorded = digest === null ? record : record.pipe(
        Effect.catchAllCause((cause) =>
          Cause.isInterruptedOnly(cause) ? Effect.failCause(cause) :
          Effect.flatMap(ledger.findByPaymentId(requirement.network, payer, digest!), Option.match({
            onNone: () => Effect.failCause(cause),
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
        // Whatever the answer, only the chain can say the money did not move. A settle answer that names a
        // transaction, or says `settlement_pending`, is no refusal at all: the transfer was broadcast and may land.
        // A refusal naming neither can hide a payment that moves all the same: anyone who saw the authorization
        // can submit it (first, so the facilitator's own transfer fails, or later, until it expires). The chain
        // decides, and only on final evidence of the very transfer this sale was signed for.
        const onChain = yield* facilitator.status(pending)
        if (onChain._tag === "Settled") {
          const moved = { ...settlement, success: true, transaction: onChain.transaction, errorReason: null }
          return { settled: yield* settlements.markSettled(pending, moved), settlement: moved } as const
        }
        // What the buyer signed can never move now (spent otherwise, cancelled, failed on chain): failed, with why.
        if (onChain._tag === "Failed") {
          yield* fail(onChain.reason)
          return yield* new SettlementFailed({ reason: onChain.reason, network: settlement.network, payer: settlement.payer, detail: settlementFailedDetail(onChain.reason) })
        }
        // Broadcast, or on chain but not final: its fate is being decided, so the sale stays pending (the buyer's
        // retry and the reconciler finish it).
        if (onChain._tag === "NotFinal" || settleInFlight(settlement)) return yield* settlementUnknown
        // Refused, and nothing on chain so far (or nobody can tell): the buyer is told why, nothing is delivered,
        // and the sale stays pending, so that a transfer landing before the authorization expires still finds
        // its sale (the reconciler fails it once `settleBy` has passed with nothing moved).
        const reason = settlement.errorReason ?? "settlement_failed"
        yield* settlements.noteRefusal(pending, reason)
        return yield* new SettlementFailed({ reason, network: settlement.network, payer: settlement.payer, detail: settleRefusedDetail(reason, pending.settleBy) })
      }
      return { settled: yield* settlements.markSettled(pending, settlement), settlement } as const
    }))
    if ("replay" in outcome) {
      if (!sameId(outcome.replay)) return yield* alreadyPresented(outcome.replay)
      // The same id: this request is the buyer's own retry, and the payment was checked for the terms.
      if (outcome.replay.checkoutId !== q.checkout.id) return yield* idConflict
      return yield* (latest ? latestOf(outcome.replay, client) : recovered(outcome.replay, q.listing))
    }
    // The listing this purchase was quoted from is the sale's own (the sale was recorded from it).
    return yield* goodsOf(outcome.settled, outcome.settlement, q.listing, token)
  })

  return pay
}
