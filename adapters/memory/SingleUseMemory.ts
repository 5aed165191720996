import { Clock, Effect, Layer } from "effect"
import { SingleUse } from "../../ports/SingleUse.js"

/** Spent values in process memory (tests, embedding, a single host). */
export const SingleUseMemory = Layer.sync(SingleUse, () => {
  const spent = new Map<string, number>()
  return {
    // Synchronous check-and-set: no other fiber runs between the lookup and the write.
    spend: (purpose, digest, expiresAt) =>
      Effect.map(Clock.currentTimeMillis, (now) => {
        const key = `${purpose}\u0000${digest}`
        const until = spent.get(key)
        if (until !== undefined && until > now) return false
        if (spent.size > 10_000) for (const [k, v] of spent) if (v <= now) spent.delete(k)
        spent.set(key, expiresAt.getTime())
        return true
      })
  }
})
