import { HttpApiBuilder, HttpRouter, HttpServerResponse } from "@effect/platform"
import { Effect, Schema } from "effect"
import { Purchases } from "../../domain/usecases/Purchases.js"
import { clientAddress } from "../handlers/ClientAddress.js"
import { problemResponse } from "../Guard.js"
import * as P from "../Problem.js"
import { storageAsDefect } from "../Unavailable.js"

/** The media type of a DSSE envelope (JSON). */
export const DSSE_MEDIA_TYPE = "application/vnd.dsse.envelope.v1+json"

/**
 * `GET /downloads/<token>/provenance`: the signed provenance (in-toto Statement v1 in a DSSE envelope) of the
 * archive a receipt link delivers, as the ledger recorded it (nothing is downloaded); 404 problem+json for an
 * unknown link or an archive not recorded yet; 429 with Retry-After past the sale's or the client's provenance
 * budget (see `spendProvenance`).
 */
export const ProvenanceRoutesLive = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function*() {
    const purchases = yield* storageAsDefect(Purchases)
    yield* router.get(
      "/downloads/:token/provenance",
      Effect.gen(function*() {
        const { token } = yield* HttpRouter.params
        return yield* purchases.provenance(token ?? "", yield* clientAddress).pipe(
          Effect.map((envelope) => HttpServerResponse.unsafeJson(envelope, { contentType: DSSE_MEDIA_TYPE, headers: { "cache-control": "private, no-store" } })),
          Effect.catchTags({
            NotFound: (e) => Effect.succeed(problemResponse(Schema.encodeSync(P.NotFound)(e), { "cache-control": "no-store" })),
            RateLimited: (e) =>
              Effect.succeed(problemResponse(Schema.encodeSync(P.RateLimited)(e), { "cache-control": "no-store", "retry-after": String(e.retryAfterSeconds) }))
          })
        )
      })
    )
  })
)
