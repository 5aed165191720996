import { Effect, Layer, Redacted } from "effect"
import { CodeHostIdentity, CodeHostIdentityError, identityNotConfigured } from "../../ports/CodeHostIdentity.js"


/** What the memory code-host identity knows beyond owners controlling their own repos. */
export interface IdentityMemoryOptions {
  /** Logins with admin rights on repos they do not own, by `owner/name` (case-insensitive). */
  readonly admins?: Readonly<Record<string, ReadonlyArray<string>>>
}

/**
 * A fake code-host identity for tests. Without `codes` it behaves like a server with no OAuth app; with them,
 * each code (once) proves its login, and the authorize URL is `https://github.test/authorize?state=...`.
 * A login controls the repos it owns and those `admins` grants it.
 */
export const CodeHostIdentityMemory = (codes?: Readonly<Record<string, string>>, options: IdentityMemoryOptions = {}) =>
  Layer.sync(CodeHostIdentity, () => {
    if (codes === undefined) {
      return identityNotConfigured("No OAuth app is configured.")
    }
    const unused = new Map(Object.entries(codes))
    const tokens = new Map<string, string>()
    const admins = new Map(Object.entries(options.admins ?? {}).map(([repo, logins]) => [repo.toLowerCase(), logins.map((l) => l.toLowerCase())]))
    return {
      configured: true,
      authorizeOrigin: "https://github.test",
      authorizeUrl: (state) => Effect.succeed(`https://github.test/authorize?state=${encodeURIComponent(state)}`),
      exchange: (code) =>
        Effect.suspend(() => {
          const login = unused.get(Redacted.value(code))
          if (login === undefined) {
            return Effect.fail(new CodeHostIdentityError({ reason: "code_rejected", message: "The code was refused." }))
          }
          unused.delete(Redacted.value(code))
          const token = `memory_token_${tokens.size + 1}`
          tokens.set(token, login)
          return Effect.succeed({ login, token: Redacted.make(token) })
        }),
      controls: (token, repo) =>
        Effect.sync(() => {
          const login = tokens.get(Redacted.value(token))?.toLowerCase()
          if (login === undefined) return false
          return login === repo.owner.toLowerCase() || (admins.get(`${repo.owner}/${repo.name}`.toLowerCase()) ?? []).includes(login)
        })
    }
  })
