import { Effect, Layer, Option } from "effect"
import { FacilitatorError, PaymentFacilitator } from "../../ports/PaymentFacilitator.js"
import { chainStatusFromConfig } from "./ChainStatus.js"
import { facilitatorHttpFromConfig } from "./FacilitatorHttp.js"
import { makeFacilitatorSimulated } from "./FacilitatorSimulated.js"

/**
 * Live payments through the facilitator at `X402_FACILITATOR_URL` (none when unset: live checkouts answer
 * 503), their status read from the chains (`BASE_RPC_URL`, `SOLANA_RPC_URL`), test payments through the
 * simulated facilitator. Build once per process: the simulated ledger and
 * its Solana fee payer live in it.
 */
export const PaymentFacilitatorLive = Layer.effect(
  PaymentFacilitator,
  Effect.gen(function*() {
    const live = yield* facilitatorHttpFromConfig
    // Read even without a facilitator, so a malformed setting fails start-up whatever else is set.
    const chainStatus = yield* chainStatusFromConfig
    const simulated = yield* makeFacilitatorSimulated
    const noFeePayer = new FacilitatorError({ reason: "bad_response", message: "the facilitator names no Solana fee payer" })
    return {
      live: Option.map(live, (l) => ({ ...l.facilitator, status: chainStatus })),
      test: simulated.facilitator,
      extra: (chain, livemode) => {
        if (!livemode) return Effect.succeed(simulated.extra(chain))
        if (chain === "base") return Effect.succeed({})
        return Option.match(live, {
          onNone: () => Effect.fail(new FacilitatorError({ reason: "unreachable", message: "no live facilitator" })),
          onSome: (l) =>
            Effect.flatMap(l.solanaFeePayer, Option.match({
              onNone: () => Effect.fail(noFeePayer),
              onSome: (feePayer) => Effect.succeed({ feePayer })
            }))
        })
      }
    }
  })
)
