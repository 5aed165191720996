import { Effect, Layer, Option } from "effect"
import { ApiKey, type MagicLinkToken, type Session } from "../../domain/Credentials.js"
import type { ApiKeyId, SessionId, TokenDigest } from "../../domain/Ids.js"
import { CredentialStore } from "../../ports/CredentialStore.js"

/** The CredentialStore in memory, for tests and embedding. */
export const CredentialStoreMemory = Layer.sync(CredentialStore, () => {
  const magic = new Map<TokenDigest, MagicLinkToken>()
  const sessions = new Map<SessionId, Session>()
  const keys = new Map<ApiKeyId, ApiKey>()
  return {
    putMagicToken: (token) => Effect.sync(() => void magic.set(token.digest, token)),
    takeMagicToken: (digest, now) =>
      Effect.sync(() => {
        const token = magic.get(digest)
        magic.delete(digest)
        return token && token.expiresAt > now ? Option.some(token) : Option.none()
      }),
    putSession: (session) => Effect.sync(() => void sessions.set(session.id, session)),
    findSession: (digest) =>
      Effect.sync(() => Option.fromNullable([...sessions.values()].find((s) => s.digest === digest))),
    deleteSession: (id) => Effect.sync(() => void sessions.delete(id)),
    putApiKey: (key) => Effect.sync(() => void keys.set(key.id, key)),
    findApiKey: (digest) => Effect.sync(() => Option.fromNullable([...keys.values()].find((k) => k.digest === digest))),
    listApiKeys: (accountId) =>
      Effect.sync(() =>
        [...keys.values()]
          .filter((k) => k.accountId === accountId)
          .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime())
      ),
    revokeApiKey: (accountId, id, at) =>
      Effect.sync(() => {
        const key = keys.get(id)
        if (!key || key.accountId !== accountId || key.revokedAt !== null) return false
        keys.set(id, new ApiKey({ ...key, revokedAt: at }))
        return true
      }),
    touchApiKey: (id, at) =>
      Effect.sync(() => {
        const key = keys.get(id)
        if (key) keys.set(id, new ApiKey({ ...key, lastUsedAt: at }))
      })
  }
})
