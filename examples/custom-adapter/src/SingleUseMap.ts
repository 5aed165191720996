/**
 * A SingleUse store of our own (repomarket's port for one-time values: OAuth states, sign-in nonces): a Map of
 * `purpose:digest` to expiry, swept as it goes. Stands for whatever you would back it with (Redis `SET NX PX`,
 * DynamoDB conditional writes): the contract suite below is what it has to satisfy.
 */
import { Effect, Layer } from "effect"
import { SingleUse } from "repomarket"

export const makeSingleUseMap = () => {
  const spent = new Map<string, number>()
  return SingleUse.of({
    // Synchronous check-and-set: of concurrent spends (one event loop) exactly one sees the key absent.
    spend: (purpose, digest, expiresAt) =>
      Effect.sync(() => {
        const key = `${purpose}:${digest}`
        const now = Date.now()
        const until = spent.get(key)
        if (until !== undefined && until > now) return false
        spent.set(key, expiresAt.getTime())
        return true
      })
  })
}

/** The adapter as a layer, one store per layer build. */
export const SingleUseMap = Layer.sync(SingleUse, makeSingleUseMap)
