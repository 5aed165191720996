import { Effect, Layer, Option } from "effect"
import { FacilitatorError, PaymentFacilitator } from "../../ports/PaymentFacilitator.js"

/** No facilitator at all: live and test payments both answer "unavailable". For hosts that sell nothing. */
export const PaymentFacilitatorNone = Layer.succeed(PaymentFacilitator, {
  live: Option.none(),
  test: {
    verify: () => Effect.fail(new FacilitatorError({ reason: "unreachable", message: "no facilitator configured" })),
    settle: () => Effect.fail(new FacilitatorError({ reason: "unreachable", message: "no facilitator configured" }))
  },
  extra: () => Effect.fail(new FacilitatorError({ reason: "unreachable", message: "no facilitator configured" }))
})
