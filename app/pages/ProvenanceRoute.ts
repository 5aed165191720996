import { HttpApiBuilder, HttpRouter, HttpServerResponse } from "@effect/platform"
import { Effect, Schema } from "effect"
import { Purchases } from "../../usecases/Purchases.js"
import { problemResponse } from "../Guard.js"
import * as P from "../Problem.js"
import { storageAsDefect } from "../Unavailable.js"

/** The media type of a DSSE envelope (JSON). */
export const DSSE_MEDIA_TYPE = "application/vnd.dsse.envelope.v1+json"

/**
 * `GET /downloads/<token>/provenance`: the signed provenance (in-toto Statement v1 in a DSSE envelope) of the
 * archive a receipt link delivers; 404 problem+json for an unknown link or an archive not cut yet.
 */
export const ProvenanceRoutesLive = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function*() {
    const purchases = yield* storageAsDefect(Purchases)
    yield* router.get(
      "/downloads/:token/provenance",
      Effect.gen(function*() {
        const { token } = yield* HttpRouter.params
        return yield* purchases.provenance(token ?? "").pipe(
          Effect.map((envelope) => HttpServerResponse.unsafeJson(envelope, { contentType: DSSE_MEDIA_TYPE, headers: { "cache-control": "private, no-store" } })),
          Effect.catchTag("NotFound", (e) => Effect.succeed(problemResponse(Schema.encodeSync(P.NotFound)(e), { "cache-control": "no-store" })))
        )
      })
    )
  })
)
