import { Effect, Option, Redacted } from "effect"
import { type Checkout, checkoutPath, testCheckoutPath } from "../Checkout.js"
import { InvalidInput, NotFound, RateLimited, WalletProofRefused } from "../Errors.js"
import type { CheckoutId, SaleId } from "../Ids.js"
import type { Sale } from "../Sale.js"
import type { Chain } from "../Wallet.js"
import { mintSiwxNonce, openSiwxNonce, SIWX_CHALLENGE_TTL_MS } from "../rules/SiwxNonce.js"
import { now } from "../rules/Clock.js"
import { Chains } from "../../ports/Chains.js"
import { ListingStore } from "../../ports/ListingStore.js"
import { PublicOrigin } from "../../ports/PublicOrigin.js"
import { RateLimiter } from "../../ports/RateLimiter.js"
import { SaleLedger } from "../../ports/SaleLedger.js"
import { SecretBox } from "../../ports/SecretBox.js"
import { SingleUse } from "../../ports/SingleUse.js"
import type { SiwxChallenge } from "../Payment.js"
import { WalletProof } from "../../ports/WalletProof.js"
import { Purchases } from "./Purchases.js"
import { spendRedownload } from "./purchases/ReceiptBudgets.js"

/** The header a wallet's proof arrives in (x402 Sign-In-With-X). */
export const SIWX_HEADER = "SIGN-IN-WITH-X"

export type { SiwxChallenge } from "../Payment.js"

/** What a returning wallet is asked to sign. */
export const SIWX_STATEMENT = "Sign in to re-download what this wallet bought"

export {
  PROVENANCE_PER_CLIENT_PER_HOUR,
  PROVENANCE_PER_RECEIPT_PER_HOUR,
  REDOWNLOADS_PER_CLIENT_PER_HOUR,
  REDOWNLOADS_PER_RECEIPT_PER_HOUR
} from "./purchases/ReceiptBudgets.js"

/** Downloads of one sale's goods running at once: a retry beside a stalled one, not a parallel mirror. */
export const CONCURRENT_DOWNLOADS_PER_RECEIPT = 2

/** What a re-download refused for running beside others asks the client to wait (seconds). */
export const CONCURRENT_RETRY_AFTER_SECONDS = 15

/**
 * Re-download with the paying wallet (DECISIONS.md, Checkout: the buyer recovers with what only the buyer
 * holds). Every 402 carries a challenge; a wallet that signs it and has a settled sale of the checkout's
 * listing gets that sale's goods again — the commit it paid for, on the checkout it paid on or any later one of
 * the same listing, also after a reprice or a takedown. No payment, no new sale, nothing settles.
 */
export class Redownloads extends Effect.Service<Redownloads>()("repomarket/Redownloads", {
  effect: Effect.gen(function*() {
    const store = yield* ListingStore
    const ledger = yield* SaleLedger
    const chains = yield* Chains
    const box = yield* SecretBox
    const singleUse = yield* SingleUse
    const proofs = yield* WalletProof
    const purchases = yield* Purchases
    const limiter = yield* RateLimiter
    const { baseUrl } = yield* PublicOrigin
    const domain = new URL(baseUrl).host

    /** Downloads of each sale running in this process (a count per sale id; absent is none). */
    const running = new Map<string, number>()

    /**
     * A slot among sale `id`'s concurrent downloads, held until the caller's scope closes (for HTTP: until the
     * response has been sent); refused (429 with Retry-After) when all are taken.
     */
    const slot = (id: SaleId) =>
      Effect.acquireRelease(
        Effect.suspend(() => {
          const now = running.get(id) ?? 0
          if (now >= CONCURRENT_DOWNLOADS_PER_RECEIPT) {
            return Effect.fail(new RateLimited({
              retryAfterSeconds: CONCURRENT_RETRY_AFTER_SECONDS,
              detail: `This purchase is already downloading ${now} times at once; wait for one to finish.`
            }))
          }
          running.set(id, now + 1)
          return Effect.void
        }),
        () =>
          Effect.sync(() => {
            const left = (running.get(id) ?? 1) - 1
            if (left <= 0) running.delete(id)
            else running.set(id, left)
          })
      )

    /**
     * Admits one re-download of a settled sale's goods for `client`, before its goods are made (so before the
     * code host is asked): a slot among the sale's concurrent downloads, then the receipt's and the client's
     * hourly budgets, in that order (`spendRedownload`). Refusals are 429 with Retry-After and cost no code-host
     * call. The purchase itself never comes here; the buyer's payment-identifier retry asking for updates is
     * counted against the sale's and the client's budgets by `Purchases.deliverLatest`.
     */
    const admitSale = Effect.fn("Redownloads.admit")(function*(id: SaleId, client: string) {
      yield* slot(id)
      yield* spendRedownload(limiter, id, client)
    })

    /**
     * The listing's current commit for a settled sale (an update within its window, or its own commit when the
     * head has not moved): refused with the reason before any budget is spent or the code host is asked, then
     * given a download slot and counted as a re-download of the sale (updates share its budgets; the count is
     * `deliverLatest`'s, before it asks the code host), then delivered.
     */
    const latestOf = Effect.fn("Redownloads.latest")(function*(sale: Sale, client: string) {
      const listing = yield* purchases.updateEligible(sale)
      yield* slot(sale.id)
      return yield* purchases.deliverLatest(sale, listing, client)
    })

    /** `GET /downloads/<token>/latest`: by any receipt link of the sale (the purchase's or an update's). */
    const latestByReceipt = Effect.fn("Redownloads.latestByReceipt")(function*(token: string, client: string) {
      return yield* latestOf((yield* purchases.receipted(token)).sale, client)
    })

    /** `GET /downloads/<token>`: the receipt's goods again, within the re-download limits (admitted before they are made). */
    const byReceipt = Effect.fn("Redownloads.byReceipt")(function*(token: string, client: string) {
      return yield* purchases.download(token, ({ sale }) => admitSale(sale.id, client))
    })

    const terms = (checkout: Checkout, livemode: boolean) => ({
      uri: baseUrl + (livemode ? checkoutPath(checkout.id) : testCheckoutPath(checkout.id)),
      networks: checkout.chains.map((chain) => ({ chain, network: chains.facts(chain, livemode).network }))
    })

    /** A fresh challenge for a checkout: stateless (see SiwxNonce), so nothing is stored to issue it. */
    const challenge = Effect.fn("Redownloads.challenge")(function*(checkout: Checkout, livemode: boolean) {
      const { networks, uri } = terms(checkout, livemode)
      // Whole seconds: the nonce carries the issue time in seconds, and the signed message must match it.
      const issuedAt = new Date(Math.floor((yield* now).getTime() / 1000) * 1000)
      const nonce = mintSiwxNonce(box.randomBytes(8), issuedAt, uri, box.mac)
      return {
        domain,
        uri,
        statement: SIWX_STATEMENT,
        nonce,
        issuedAt,
        expiresAt: new Date(issuedAt.getTime() + SIWX_CHALLENGE_TTL_MS),
        networks
      } satisfies SiwxChallenge
    })

    /** A challenge for any known checkout, current or not (a voided one still re-downloads what it sold). */
    const challengeFor = Effect.fn("Redownloads.challengeFor")(function*(id: string, livemode: boolean) {
      const found = yield* store.findCheckoutWithListing(id as CheckoutId)
      return Option.isNone(found) ? Option.none() : Option.some(yield* challenge(found.value.checkout, livemode))
    })

    const refused = (reason: string, detail: string) => new WalletProofRefused({ reason, detail })

    /**
     * A request carrying a wallet's proof and no payment. Looked up by (listing, payer) before any check that
     * the checkout is current: a wallet re-downloads what it paid for whatever became of the checkout.
     */
    const redeem = Effect.fn("Redownloads.redeem")(function*(id: string, livemode: boolean, proof: string, client: string, latest = false) {
      const found = yield* store.findCheckoutWithListing(id as CheckoutId)
      if (Option.isNone(found)) return yield* new NotFound({ detail: "No such checkout." })
      const { checkout } = found.value
      const { networks, uri } = terms(checkout, livemode)
      const wallet = yield* proofs.verify(proof, { domain, uri, networks: networks.map((n) => n.network) }).pipe(
        Effect.mapError((e) => e.reason === "malformed" ? InvalidInput.forField(SIWX_HEADER, e.message) : refused(e.reason, e.message))
      )
      const issued = openSiwxNonce(wallet.nonce, uri, box.verifyMac)
      if (issued === null) return yield* refused("invalid_siwx_nonce", "The nonce was not issued by this checkout; sign the challenge of a fresh 402.")
      if (wallet.issuedAt.getTime() !== issued.issuedAt.getTime()) {
        return yield* refused("invalid_siwx_issued_at", "The signed issuedAt is not the challenge's.")
      }
      if (wallet.expiresAt !== null && wallet.expiresAt.getTime() > issued.expiresAt.getTime()) {
        return yield* refused("invalid_siwx_expiration_time", "The signed expirationTime is later than the challenge's.")
      }
      if ((yield* now).getTime() >= issued.expiresAt.getTime()) {
        return yield* refused("invalid_siwx_expired", "The challenge has expired; sign the challenge of a fresh 402.")
      }
      const chain = networks.find((n) => n.network === wallet.network)!.chain
      // One redemption per nonce and wallet: a captured header cannot be replayed. (The front door may hand
      // the same 402, so the same nonce, to several wallets within a moment; each may redeem it once.)
      const who = chain === "base" ? wallet.address.toLowerCase() : wallet.address
      const digest = box.digest(Redacted.make(`${wallet.nonce}:${wallet.network}:${who}`))
      if (!(yield* singleUse.spend("siwx-nonce", digest, issued.expiresAt))) {
        return yield* refused("invalid_siwx_nonce", "This signed challenge was already used; sign the challenge of a fresh 402.")
      }
      const sale = yield* ledger.findSettledByPayer({ listingId: checkout.listingId, livemode, chain, payer: wallet.address })
      if (Option.isNone(sale)) {
        return yield* refused(
          "siwx_no_purchase",
          `The wallet ${wallet.address} has no settled ${livemode ? "" : "test "}purchase of this listing on ${wallet.network}; pay to buy it.`
        )
      }
      const s = sale.value
      if (latest) return yield* latestOf(s, client)
      yield* admitSale(s.id, client)
      return yield* purchases.goods(s, { success: true, transaction: s.transaction, network: s.network, payer: s.payer, errorReason: null })
    })

    return { challenge, challengeFor, redeem, byReceipt, latestByReceipt } as const
  })
}) {}
