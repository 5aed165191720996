import { Effect, Option, Schedule, type Stream } from "effect"
import { type Checkout, checkoutPath, repoPagePath, testCheckoutPath } from "../Checkout.js"
import {
  CheckoutGone,
  NotFound,
  NotSelling,
  PaymentRejected,
  PaymentsUnavailable,
  ReceiptExpired,
  SettlementFailed,
  SettlementPending
} from "../Errors.js"
import { type CheckoutId, type EventId, IdPrefix, RepoRef, type SaleId } from "../Ids.js"
import type { Listing } from "../Listing.js"
import { Sale } from "../Sale.js"
import { WebhookEvent } from "../WebhookEvent.js"
import { parseReceipt, receiptExpired, receiptToken } from "../rules/Receipt.js"
import { matchRequirement, requirementsOf } from "../rules/Requirements.js"
import { saleSettledBody } from "../rules/SaleEvent.js"
import { isSelling } from "../rules/Selling.js"
import { newId, now } from "../rules/Tokens.js"
import { AccountStore } from "../../ports/AccountStore.js"
import { Chains } from "../../ports/Chains.js"
import { CodeHost, type CodeHostError } from "../../ports/CodeHost.js"
import { ListingStore } from "../../ports/ListingStore.js"
import { Packager } from "../../ports/Packager.js"
import {
  type Facilitator,
  PaymentFacilitator,
  type PaymentRequirement,
  type Settlement,
  type SubmittedPayment
} from "../../ports/PaymentFacilitator.js"
import { PublicOrigin } from "../../ports/PublicOrigin.js"
import { SaleLedger } from "../../ports/SaleLedger.js"
import { SecretBox } from "../../ports/SecretBox.js"
import { cannotDeliver } from "./HostErrors.js"
import { testGoodsFiles } from "../rules/TestGoods.js"
import { Listings } from "./Listings.js"
import { Settlements } from "./Settlements.js"

/** What a checkout offers right now. */
export interface Quote {
  readonly checkout: Checkout
  readonly listing: Listing
  readonly livemode: boolean
  readonly requirements: ReadonlyArray<PaymentRequirement>
  /** Absolute URL of the checkout (the x402 resource). */
  readonly resource: string
  /** Absolute URL of the repo page. */
  readonly page: string
}

/** Paid goods: the archive of the pinned commit, or the test twin's small tar.gz. */
export interface Goods {
  readonly sale: Sale
  /** Always names the payer (x402 v1 requires it in the receipt), even when the facilitator left it out. */
  readonly settlement: Settlement & { readonly payer: string }
  readonly filename: string
  readonly body: Stream.Stream<Uint8Array, CodeHostError>
  /** Absolute URL that re-downloads the same commit for 7 days. */
  readonly receipt: string
}

/**
 * How long the same payment, presented again, still gets its goods. A settled payment's data becomes public
 * on chain, so replays cannot be an open-ended key to the goods: after this window the buyer uses the
 * receipt link, which only the buyer was given.
 */
export const REPLAY_WINDOW_MS = 10 * 60 * 1000

/** How long a second copy of a payment waits for a settle in flight before asking the chain (and answering 503). */
const SETTLING_WAIT = Schedule.intersect(Schedule.spaced("100 millis"), Schedule.recurUpTo("5 seconds"))

export class Purchases extends Effect.Service<Purchases>()("usecases/Purchases", {
  effect: Effect.gen(function*() {
    const store = yield* ListingStore
    const accounts = yield* AccountStore
    const ledger = yield* SaleLedger
    const facilitators = yield* PaymentFacilitator
    const chains = yield* Chains
    const host = yield* CodeHost
    const packager = yield* Packager
    const box = yield* SecretBox
    const listings = yield* Listings
    const settlements = yield* Settlements
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
      let body: Stream.Stream<Uint8Array, CodeHostError>
      if (sale.livemode) {
        body = host.archive(listing?.repo ?? new RepoRef({ owner, name }), sha, token)
      } else {
        const info = yield* host.repo({ owner, name }, token).pipe(Effect.mapError(cannotDeliver))
        // The tree of the commit paid for, not of today's head: the manifest names the pinned commit.
        const pinned = sale.commitSha === null ? info : { ...info, headSha: sale.commitSha }
        const tree = yield* host.tree(pinned, token).pipe(Effect.mapError(cannotDeliver))
        body = packager.tarGz(testGoodsFiles(sale, tree, `${owner}-${name}-${sha.slice(0, 7)}`))
      }
      return { sale, settlement, filename, body, receipt } satisfies Goods
    })

    const settlementOf = (sale: Sale): Goods["settlement"] => ({
      success: true,
      transaction: sale.transaction,
      network: sale.network,
      payer: sale.payer,
      errorReason: null
    })

    /** A payment already on the ledger: its goods again, its failure again, or (while it settles) a short wait. */
    const replay = Effect.fnUntraced(function*(existing: Sale) {
      let sale = existing
      if (sale.status === "pending") {
        const pending = sale
        sale = yield* Effect.flatten(ledger.findById(pending.id)).pipe(
          Effect.orDie,
          Effect.filterOrFail((s) => s.status !== "pending", () => "still_pending" as const),
          Effect.retry(SETTLING_WAIT),
          Effect.orElseSucceed(() => pending)
        )
        if (sale.status === "pending") sale = yield* settlements.resolve(sale)
        if (sale.status === "pending") return yield* settlementUnknown
      }
      if (sale.status === "settled" && sale.settledAt !== null && (yield* now).getTime() - sale.settledAt.getTime() > REPLAY_WINDOW_MS) {
        return yield* new PaymentRejected({ reason: "payment_already_used", detail: "This payment was already used; download it again with the receipt link (Link rel=\"receipt\") of the first response." })
      }
      if (sale.status === "failed") {
        return yield* new SettlementFailed({ reason: sale.failureReason ?? "settlement_failed", network: sale.network, payer: sale.payer, detail: "This payment failed to settle earlier; it cannot be used again." })
      }
      return yield* goodsOf(sale, settlementOf(sale))
    })

    /**
     * A purchase, in the order DECISIONS.md fixes: verify → pin the commit the code host will deliver →
     * record the sale as pending (durable before any byte leaves) → settle → mark settled → goods. A payment
     * already on the ledger never settles twice: it gets its first outcome again.
     */
    const pay = Effect.fn("Purchases.pay")(function*(id: string, livemode: boolean, payment: SubmittedPayment) {
      const q = yield* quote(id, livemode)
      const facilitator = yield* facilitatorFor(livemode)
      const onNetwork = q.requirements.find((r) => r.network === payment.network)
      if (onNetwork === undefined) {
        return yield* new PaymentRejected({ reason: "network_mismatch", detail: `This checkout does not take payments on ${payment.network}.` })
      }
      const identity = yield* chains.paymentIdentity(onNetwork.chain, payment.payload).pipe(
        Effect.mapError((e) => new PaymentRejected({ reason: "invalid_payload", detail: e.message }))
      )
      const paymentKey = `${payment.network}:${identity.key}`
      const known = yield* ledger.findByPaymentKey(paymentKey)
      if (Option.isSome(known)) return yield* replay(known.value)

      const requirement = yield* Option.match(matchRequirement(payment, q.requirements), {
        onNone: () => Effect.fail(new PaymentRejected({ reason: "requirements_mismatch", detail: "The payment was made for other terms (price, address, asset or network); pay one of the current requirements." })),
        onSome: Effect.succeed
      })
      const verification = yield* facilitator.verify(payment, requirement).pipe(Effect.mapError(unavailable("verify the payment")))
      if (!verification.valid) {
        return yield* new PaymentRejected({ reason: verification.invalidReason ?? "invalid_payment", detail: "The payment did not verify." })
      }

      // Pin the commit and make sure the code host can still serve it, before anyone is charged.
      const token = yield* listings.tokenOf(q.listing)
      const info = yield* host.repo(q.listing.repo, token).pipe(Effect.mapError(cannotDeliver))
      const at = yield* now
      const saleId = yield* newId<SaleId>(IdPrefix.sale).pipe(Effect.provideService(SecretBox, box))
      // From the pending record to the recorded outcome nothing may stop half-way: a buyer who disconnects
      // interrupts the request, which would leave a payment charged but its sale pending for ever.
      const outcome = yield* Effect.uninterruptible(Effect.gen(function*() {
        const { sale: pending, created } = yield* ledger.recordPending(new Sale({
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
          payer: verification.payer ?? identity.payer,
          commitSha: info.headSha,
          transaction: null,
          status: "pending",
          failureReason: null,
          createdAt: at,
          settledAt: null,
          // A Solana transaction names no expiry: its blockhash ages out within minutes, well inside the
          // requirement's own time limit, so that limit bounds it.
          settleBy: identity.settleBy ?? new Date(at.getTime() + requirement.maxTimeoutSeconds * 1000)
        }))
        // Another copy of this payment got there first: it alone settles.
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
          yield* fail(settlement.errorReason ?? "settlement_failed")
          return yield* new SettlementFailed({ reason: settlement.errorReason ?? "settlement_failed", network: settlement.network, payer: settlement.payer, detail: "The payment could not be settled; nothing was delivered." })
        }
        return { settled: yield* settlements.markSettled(pending, settlement), settlement } as const
      }))
      if ("replay" in outcome) return yield* replay(outcome.replay)
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
