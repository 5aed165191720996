import { Effect, Layer, Redacted } from "effect"
import { CodeHostIdentity, CodeHostIdentityError } from "../../ports/CodeHostIdentity.js"

const notConfigured = new CodeHostIdentityError({ reason: "not_configured", message: "No OAuth app is configured." })

/**
 * A fake code-host identity for tests. Without `codes` it behaves like a server with no OAuth app; with them,
 * each code (once) proves its login, and the authorize URL is `https://github.test/authorize?state=...`.
 */
export const CodeHostIdentityMemory = (codes?: Readonly<Record<string, string>>) =>
  Layer.sync(CodeHostIdentity, () => {
    if (codes === undefined) {
      return { configured: false, authorizeUrl: () => Effect.fail(notConfigured), exchange: () => Effect.fail(notConfigured) }
    }
    const unused = new Map(Object.entries(codes))
    return {
      configured: true,
      authorizeUrl: (state) => Effect.succeed(`https://github.test/authorize?state=${encodeURIComponent(state)}`),
      exchange: (code) =>
        Effect.suspend(() => {
          const login = unused.get(Redacted.value(code))
          if (login === undefined) {
            return Effect.fail(new CodeHostIdentityError({ reason: "code_rejected", message: "The code was refused." }))
          }
          unused.delete(Redacted.value(code))
          return Effect.succeed(login)
        })
    }
  })
