import { Effect } from "effect"
import { RateLimited } from "../../Errors.js"
import type { SaleId } from "../../Ids.js"
import type { RateLimiter } from "../../../ports/RateLimiter.js"

/**
 * Re-downloads of one sale's goods (by its receipt link or by its paying wallet) an hour. A buyer needs one
 * download and a few more for a broken one or a second machine; ten leaves room for that and for a script that
 * retries, while one receipt shared around cannot become a free mirror (archives are kept on the server, so
 * this protects its bandwidth more than the code host's quota).
 */
export const REDOWNLOADS_PER_RECEIPT_PER_HOUR = 10

/**
 * Re-downloads one client address may make an hour, over all its receipts: three receipts' worth at the
 * per-receipt limit, so a buyer of several listings (or a small office behind one address) is not held up, and
 * an address holding many receipts cannot turn them into a stream of downloads.
 */
export const REDOWNLOADS_PER_CLIENT_PER_HOUR = 30

/**
 * Provenance requests (`<receipt link>/provenance`) of one sale an hour, over its receipts (its own and its
 * updates'). A budget of its own, apart from the downloads': a provenance is read from the ledger and costs no
 * download, and a verifier that checks each download must not halve the buyer's downloads. Three for each
 * download the sale may make.
 */
export const PROVENANCE_PER_RECEIPT_PER_HOUR = 30

/** Provenance requests one client address may make an hour, over all its receipts. */
export const PROVENANCE_PER_CLIENT_PER_HOUR = 60

const HOUR_MS = 60 * 60 * 1000

/**
 * Spends one re-download of sale `id`: the sale's hourly budget first, then the client's when the caller knows it
 * (a receipt link, a wallet's proof; the buyer's payment-identifier retry is already limited per client as a
 * payment attempt). Checked before anything is asked of the code host, so a refusal (429 with Retry-After) costs
 * nothing but the count. The receipt's budget first: a link requested past its own limit is refused before it
 * costs the client anything, so hammering one receipt does not lock its client out of its other purchases.
 */
export const spendRedownload = (limiter: RateLimiter["Type"], id: SaleId, client: string | null) =>
  Effect.gen(function*() {
    yield* limiter.consume(`redownload:sale:${id}`, REDOWNLOADS_PER_RECEIPT_PER_HOUR, HOUR_MS).pipe(
      Effect.mapError((e) => new RateLimited({ retryAfterSeconds: e.retryAfterSeconds, detail: `This purchase was downloaded ${REDOWNLOADS_PER_RECEIPT_PER_HOUR} times in the last hour; try again later.` }))
    )
    if (client === null) return
    yield* limiter.consume(`redownload:client:${client}`, REDOWNLOADS_PER_CLIENT_PER_HOUR, HOUR_MS).pipe(
      Effect.mapError((e) => new RateLimited({ retryAfterSeconds: e.retryAfterSeconds, detail: `Too many re-downloads from this address (${REDOWNLOADS_PER_CLIENT_PER_HOUR} an hour); try again later.` }))
    )
  })

/** Spends one provenance request of sale `id` by `client`: the sale's budget, then the client's (429 with Retry-After). */
export const spendProvenance = (limiter: RateLimiter["Type"], id: SaleId, client: string) =>
  Effect.gen(function*() {
    yield* limiter.consume(`provenance:sale:${id}`, PROVENANCE_PER_RECEIPT_PER_HOUR, HOUR_MS).pipe(
      Effect.mapError((e) => new RateLimited({ retryAfterSeconds: e.retryAfterSeconds, detail: `This purchase's provenance was asked for ${PROVENANCE_PER_RECEIPT_PER_HOUR} times in the last hour; try again later.` }))
    )
    yield* limiter.consume(`provenance:client:${client}`, PROVENANCE_PER_CLIENT_PER_HOUR, HOUR_MS).pipe(
      Effect.mapError((e) => new RateLimited({ retryAfterSeconds: e.retryAfterSeconds, detail: `Too many provenance requests from this address (${PROVENANCE_PER_CLIENT_PER_HOUR} an hour); try again later.` }))
    )
  })
