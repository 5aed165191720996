import { Effect, Either, Option, Redacted } from "effect"
import { Account } from "../Account.js"
import { ApiKey, MAGIC_LINK_TTL_MS, MagicLinkToken, Principal, Session, SESSION_TTL_MS } from "../Credentials.js"
import { Forbidden, InvalidInput, MailUnavailable, NotFound, RateLimited, Unauthenticated } from "../Errors.js"
import { type AccountId, type ApiKeyId, IdPrefix, type SessionId } from "../Ids.js"
import { noWallets } from "../Wallet.js"
import { API_KEY_PREFIX, apiKeyLast4, isWellFormedApiKey } from "../rules/ApiKeyFormat.js"
import { normalizeEmail } from "../rules/Email.js"
import { now } from "../rules/Clock.js"
import { newApiKey, newId, newSecret } from "./Minting.js"
import { AccountStore } from "../../ports/AccountStore.js"
import { CredentialStore } from "../../ports/CredentialStore.js"
import { type MailDelivery, Mailer } from "../../ports/Mailer.js"
import { PublicOrigin } from "../../ports/PublicOrigin.js"
import { type LimitExceeded, RateLimiter } from "../../ports/RateLimiter.js"
import { SecretBox } from "../../ports/SecretBox.js"

const HOUR_MS = 60 * 60 * 1000
/** Limits decided in DECISIONS.md (the per-email one as amended for issue 12, see `requestMagicLink`). */
export const LIMITS = {
  /** Links mailed per email per `MAGIC_LINK_TTL_MS` (a link's lifetime), whoever asks. */
  magicLinkPerEmail: 5,
  magicLinkPerClient: 20,
  managementPerMinute: 600
} as const

/** Touching `last_used_at` on every call would write on every request; once a minute is precise enough. */
const KEY_TOUCH_INTERVAL_MS = 60_000

const rateLimited = (what: string) => (e: LimitExceeded) =>
  new RateLimited({ retryAfterSeconds: e.retryAfterSeconds, detail: `Too many ${what}; try again later.` })

/** A session issued by `Auth.verify`. */
export interface IssuedSession {
  /** The session's bearer token; shown once, only its digest is stored. */
  readonly accessToken: Redacted.Redacted<string>
  /** When the session ends. */
  readonly expiresAt: Date
  /** The account signed in (created on its email's first verify). */
  readonly account: Account
}

/**
 * Sign-in and credentials: magic links mailed and exchanged for sessions, bearer credentials resolved to a
 * principal, API keys created, listed and revoked, sign-out.
 */
export class Auth extends Effect.Service<Auth>()("repomarket/Auth", {
  effect: Effect.gen(function*() {
    const credentials = yield* CredentialStore
    const accounts = yield* AccountStore
    const box = yield* SecretBox
    const mailer = yield* Mailer
    const limiter = yield* RateLimiter
    const origin = yield* PublicOrigin
    const withBox = Effect.provideService(SecretBox, box)

    /**
     * Emails a single-use sign-in link. Answers the same whether or not an account exists.
     *
     * Two limits, for two different harms. A client address may ask 20 times an hour (429): that is about
     * the caller. An email gets at most 5 links per 15 minutes, whoever asks (so a victim's mailbox gets at
     * most 20 an hour however many addresses an attacker uses); past that the request succeeds silently and
     * mails nothing. It never answers 429, so a stranger cannot lock the owner out: the window is a link's
     * lifetime, so whenever a request mails nothing, the links mailed in the window are all still valid.
     */
    const requestMagicLink = Effect.fn("Auth.requestMagicLink")(function*(rawEmail: string, client: string) {
      const email = yield* Either.match(normalizeEmail(rawEmail), {
        onLeft: (message) => Effect.fail(InvalidInput.forField("email", message)),
        onRight: Effect.succeed
      })
      yield* limiter.consume(`magic-link:client:${client}`, LIMITS.magicLinkPerClient, HOUR_MS).pipe(
        Effect.mapError(rateLimited("sign-in requests from this address"))
      )
      const mailable = yield* limiter.consume(`magic-link:email:${email}`, LIMITS.magicLinkPerEmail, MAGIC_LINK_TTL_MS).pipe(
        Effect.as(true),
        Effect.catchTag("LimitExceeded", () =>
          Effect.as(Effect.logInfo("Sign-in link not mailed: this email's recent links are all still valid"), false))
      )
      if (!mailable) return
      const token = yield* withBox(newSecret())
      const at = yield* now
      yield* credentials.putMagicToken(
        new MagicLinkToken({
          digest: box.digest(token),
          email,
          createdAt: at,
          expiresAt: new Date(at.getTime() + MAGIC_LINK_TTL_MS)
        })
      )
      const link = `${origin.baseUrl}/auth/verify?token=${encodeURIComponent(Redacted.value(token))}`
      yield* mailer.send({
        to: email,
        subject: "Your repomarket sign-in link",
        text: `Sign in to repomarket by opening this link within 15 minutes:\n\n${link}\n\n` +
          "If you did not ask for it, ignore this mail: nothing happens until the link is used."
      }).pipe(
        Effect.tapError((e) => Effect.logError("Sign-in mail failed", e.message)),
        Effect.mapError(() => new MailUnavailable({ detail: "The sign-in link could not be sent; try again shortly." }))
      )
    })

    /** Exchanges a magic-link token for a session. The first verify of an email creates its account. */
    const verify = Effect.fn("Auth.verify")(function*(token: Redacted.Redacted<string>) {
      const value = Redacted.value(token)
      if (value.length === 0 || value.length > 256) return yield* InvalidInput.forField("token", "must be the token from the emailed link")
      const at = yield* now
      const magic = yield* credentials.takeMagicToken(box.digest(token), at)
      if (Option.isNone(magic)) {
        return yield* new Unauthenticated({ detail: "The sign-in link is invalid, used or expired; ask for a new one." })
      }
      const fresh = new Account({
        id: yield* withBox(newId<AccountId>(IdPrefix.account)),
        email: magic.value.email,
        storefrontTagline: null,
        webhookUrl: null,
        webhookSecret: null,
        wallets: noWallets,
        hostLogin: null,
        createdAt: at
      })
      const account = yield* accounts.insertOrGet(fresh)
      const accessToken = yield* withBox(newSecret())
      const expiresAt = new Date(at.getTime() + SESSION_TTL_MS)
      yield* credentials.putSession(
        new Session({
          id: yield* withBox(newId<SessionId>(IdPrefix.session)),
          digest: box.digest(accessToken),
          accountId: account.id,
          createdAt: at,
          expiresAt
        })
      )
      return { accessToken, expiresAt, account } satisfies IssuedSession
    })

    /** Resolves a bearer credential (session or API key) to a principal, and applies the per-credential limit. */
    const authenticate = Effect.fn("Auth.authenticate")(function*(bearer: Redacted.Redacted<string>) {
      const value = Redacted.value(bearer)
      const at = yield* now
      const denied = new Unauthenticated({ detail: "The credential is missing, unknown, expired or revoked." })
      let principal: Principal
      if (value.startsWith(API_KEY_PREFIX)) {
        if (!isWellFormedApiKey(value)) return yield* denied
        const key = yield* credentials.findApiKey(box.digest(bearer))
        if (Option.isNone(key) || key.value.revokedAt !== null) return yield* denied
        if (key.value.lastUsedAt === null || at.getTime() - key.value.lastUsedAt.getTime() > KEY_TOUCH_INTERVAL_MS) {
          yield* credentials.touchApiKey(key.value.id, at)
        }
        principal = new Principal({ accountId: key.value.accountId, via: "api_key", credentialId: key.value.id })
      } else {
        if (value.length === 0 || value.length > 256) return yield* denied
        const session = yield* credentials.findSession(box.digest(bearer))
        if (Option.isNone(session) || session.value.expiresAt <= at) return yield* denied
        principal = new Principal({ accountId: session.value.accountId, via: "session", credentialId: session.value.id })
      }
      yield* limiter.consume(`management:${principal.credentialId}`, LIMITS.managementPerMinute, 60_000).pipe(
        Effect.mapError(rateLimited("requests with this credential"))
      )
      return principal
    })

    /** Creates an API key. Sessions only: a leaked key cannot mint more keys. */
    const createApiKey = Effect.fn("Auth.createApiKey")(function*(principal: Principal) {
      if (principal.via !== "session") {
        return yield* new Forbidden({ detail: "API keys can only be created with a session from a sign-in link." })
      }
      const key = yield* withBox(newApiKey)
      const record = new ApiKey({
        id: yield* withBox(newId<ApiKeyId>(IdPrefix.apiKey)),
        digest: box.digest(key),
        accountId: principal.accountId,
        last4: apiKeyLast4(Redacted.value(key)),
        createdAt: yield* now,
        lastUsedAt: null,
        revokedAt: null
      })
      yield* credentials.putApiKey(record)
      return { record, key }
    })

    /** The account's active keys. */
    const listApiKeys = (principal: Principal) =>
      Effect.map(credentials.listApiKeys(principal.accountId), (keys) => keys.filter((k) => k.revokedAt === null))

    /** Revokes a key at once: the next request with it is refused. */
    const revokeApiKey = Effect.fn("Auth.revokeApiKey")(function*(principal: Principal, id: string) {
      const revoked = yield* credentials.revokeApiKey(principal.accountId, id as ApiKeyId, yield* now)
      if (!revoked) return yield* new NotFound({ detail: "No active API key with that id on this account." })
    })

    const signOut = (principal: Principal) =>
      principal.via === "session" ? credentials.deleteSession(principal.credentialId as SessionId) : Effect.void

    /**
     * Where sign-in links go: `"email"` to the address asked for, or `"log"` — written to the server's log and
     * mailed to no one (no SMTP server is set), so whoever asks must be told to look there (or ask the operator).
     */
    const linkDelivery: MailDelivery = mailer.delivery ?? "email"

    return { requestMagicLink, linkDelivery, verify, authenticate, createApiKey, listApiKeys, revokeApiKey, signOut } as const
  })
}) {}
