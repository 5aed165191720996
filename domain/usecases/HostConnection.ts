import { Effect, Encoding, Option, Redacted } from "effect"
import { Account, hostTokenAad } from "../Account.js"
import type { Principal } from "../Credentials.js"
import { Forbidden, HostUnavailable, InvalidInput, NotConfigured, NotFound } from "../Errors.js"
import { type AccountId, SealedSecret } from "../Ids.js"
import { now } from "../rules/Clock.js"
import { AccountStore } from "../../ports/AccountStore.js"
import { CodeHostIdentity, type CodeHostIdentityError } from "../../ports/CodeHostIdentity.js"
import { SecretBox } from "../../ports/SecretBox.js"
import { SingleUse } from "../../ports/SingleUse.js"
import { Transactor } from "../../ports/Transactor.js"

/** How long a started code-host connection may take to come back, and then to be confirmed. */
export const HOST_CONNECTION_TTL_MS = 10 * 60_000

/** Purposes bind sealed values and spent digests to this flow: nothing else can pass as one of them. */
const STATE_AAD = "host-connection-state:v2"
const CONFIRMATION_AAD = "host-connection-confirmation:v1"
const STATE_PURPOSE = "host-connection-state"
const CONFIRMATION_PURPOSE = "host-connection-confirmation"
/** A sealed state is about 250 characters, a confirmation about 600; anything far longer is not one of ours. */
const MAX_SEALED_LENGTH = 2048

interface StatePayload {
  /** The account that started the connection. */
  readonly a: string
  /** Expiry, epoch milliseconds. */
  readonly e: number
  /** Digest of the browser nonce (the cookie of the browser that started). */
  readonly b: string
  /** Random: the id spent when the state is used. */
  readonly n: string
}

interface ConfirmationPayload {
  readonly a: string
  readonly e: number
  readonly b: string
  readonly n: string
  /** The login GitHub verified. */
  readonly l: string
  /** The login's token, already sealed for the account and login (hostTokenAad). */
  readonly t: string
}

/** What the code host's OAuth callback brings back in its query. */
export interface CallbackInput {
  /** The authorization code, when the seller agreed. */
  readonly code?: string | undefined
  /** The sealed state `start` issued. */
  readonly state?: string | undefined
  /** Set by the code host instead of `code` when the seller declined. */
  readonly error?: string | undefined
}

/** What the callback found: who to ask, and the sealed confirmation the confirm form posts back. */
export interface PendingConnection {
  /** The code-host login the OAuth flow verified. */
  readonly login: string
  /** The signed-in account it would be connected to. */
  readonly account: Account
  /** The sealed confirmation the confirm form posts back. */
  readonly confirmation: string
}

const notConfigured = () =>
  new NotConfigured({
    detail: "The code-host connection is off: the operator has not set GITHUB_CLIENT_ID and GITHUB_CLIENT_SECRET."
  })

const startAgain = "start the connection again from your dashboard"
const badState = () => InvalidInput.forField("state", `is invalid or expired; ${startAgain}`)
const usedState = () => InvalidInput.forField("state", `has already been used; ${startAgain}`)
const badConfirmation = () => InvalidInput.forField("confirmation", `is invalid, expired or already used; ${startAgain}`)
const notThisBrowser = () =>
  new Forbidden({ detail: `This connection was not started in this browser by this account; nothing was connected. To connect your own login, ${startAgain}.` })

/**
 * The code-host connection: a seller proves which code-host login is theirs (OAuth web flow), and the
 * verified login is stored on the account with its own token (sealed) for later proofs of control. It drives
 * `claimed`, the storefront tagline on `/r/<owner>` and taking over a listing of a repo the login controls.
 *
 * Bound three ways, so a link started by one party can never connect another party's login:
 * - to the browser: `start` returns a random browser nonce that the host keeps in a short-lived cookie; the
 *   sealed state carries its digest, the PKCE verifier is derived from it (so it is never in a URL), and the
 *   callback and the confirmation need that cookie;
 * - to the account: the state names the account that started, and the signed-in session finishing it must be it;
 * - to one use: the state and the confirmation are spent through SingleUse the first time they are used.
 * Nothing is stored until the signed-in person confirms which login goes to which account.
 */
export class HostConnection extends Effect.Service<HostConnection>()("repomarket/HostConnection", {
  effect: Effect.gen(function*() {
    const identity = yield* CodeHostIdentity
    const accounts = yield* AccountStore
    const box = yield* SecretBox
    const singleUse = yield* SingleUse
    const tx = yield* Transactor

    const digestOf = (browserNonce: Redacted.Redacted<string>) => box.digest(browserNonce) as string
    /** The PKCE verifier: an HMAC of the browser nonce under the server key (64 hex characters). */
    const proofKeyOf = (browserNonce: Redacted.Redacted<string>) =>
      Redacted.make(box.mac(`repomarket/host-connection/pkce/v1:${Redacted.value(browserNonce)}`))

    const seal = (payload: object, aad: string) => box.seal(Redacted.make(JSON.stringify(payload)), aad)

    const open = <A>(sealed: string | undefined, aad: string, invalid: () => InvalidInput) =>
      Effect.gen(function*() {
        if (sealed === undefined || sealed.length === 0 || sealed.length > MAX_SEALED_LENGTH) return yield* invalid()
        const opened = yield* box.open(SealedSecret.make(sealed), aad).pipe(Effect.mapError(invalid))
        try {
          return JSON.parse(Redacted.value(opened)) as A
        } catch {
          return yield* invalid()
        }
      })

    /** Expiry, account and browser of a sealed payload, in that order; the first that fails decides. */
    const check = Effect.fnUntraced(function*(
      payload: { readonly a: unknown; readonly e: unknown; readonly b: unknown; readonly n: unknown },
      principal: Principal,
      browserNonce: Redacted.Redacted<string> | undefined,
      invalid: () => InvalidInput
    ) {
      if (typeof payload.a !== "string" || typeof payload.e !== "number" || typeof payload.b !== "string" || typeof payload.n !== "string") {
        return yield* invalid()
      }
      if (payload.e <= (yield* now).getTime()) return yield* invalid()
      if (payload.a !== principal.accountId) return yield* notThisBrowser()
      if (browserNonce === undefined || digestOf(browserNonce) !== payload.b) return yield* notThisBrowser()
      return payload.e
    })

    /** GitHub's authorize URL for a flow started by this signed-in browser, and the nonce that browser keeps. */
    const start = Effect.fn("HostConnection.start")(function*(principal: Principal) {
      if (!identity.configured) return yield* notConfigured()
      const browserNonce = Redacted.make(Encoding.encodeBase64Url(box.randomBytes(32)))
      const payload: StatePayload = {
        a: principal.accountId,
        e: (yield* now).getTime() + HOST_CONNECTION_TTL_MS,
        b: digestOf(browserNonce),
        n: Encoding.encodeHex(box.randomBytes(16))
      }
      const state = yield* seal(payload, STATE_AAD)
      const url = yield* identity.authorizeUrl(state, proofKeyOf(browserNonce)).pipe(Effect.mapError(fromIdentity))
      return { url, browserNonce } as const
    })

    /**
     * The callback, in the browser that started: checks the state (ours, unexpired, this account, this browser),
     * spends it, exchanges the code with the PKCE verifier, and returns what to ask the person to confirm.
     * Nothing is stored.
     */
    const callback = Effect.fn("HostConnection.callback")(function*(
      principal: Principal,
      input: CallbackInput,
      browserNonce: Redacted.Redacted<string> | undefined
    ) {
      if (!identity.configured) return yield* notConfigured()
      if (input.state === undefined) return yield* InvalidInput.forField("state", `is missing; ${startAgain}`)
      const state = yield* open<StatePayload>(input.state, STATE_AAD, badState)
      const expiresAt = yield* check(state, principal, browserNonce, badState)
      if (!(yield* singleUse.spend(STATE_PURPOSE, state.n, new Date(expiresAt)))) return yield* usedState()
      if (input.error !== undefined) {
        const reported = /^[a-z_]{1,64}$/.test(input.error) ? ` ("${input.error}")` : ""
        return yield* InvalidInput.forField("code", `was not issued: the code host reported that the connection was declined${reported}`)
      }
      if (input.code === undefined || input.code === "" || input.code.length > 512) {
        return yield* InvalidInput.forField("code", `is missing; ${startAgain}`)
      }
      const proof = yield* identity.exchange(Redacted.make(input.code), proofKeyOf(browserNonce!)).pipe(Effect.mapError(fromIdentity))
      const account = yield* Effect.flatten(accounts.findById(principal.accountId)).pipe(
        Effect.mapError(() => new NotFound({ detail: "The account behind this session is gone." }))
      )
      const sealedToken = yield* box.seal(proof.token, hostTokenAad(account, proof.login))
      const pending: ConfirmationPayload = {
        a: account.id,
        e: (yield* now).getTime() + HOST_CONNECTION_TTL_MS,
        b: state.b,
        n: Encoding.encodeHex(box.randomBytes(16)),
        l: proof.login,
        t: sealedToken
      }
      return { login: proof.login, account, confirmation: yield* seal(pending, CONFIRMATION_AAD) } satisfies PendingConnection
    })

    /**
     * The person confirmed "connect login X to this account": stores the login and its sealed token. A login
     * belongs to one account: a newer proof moves it (and drops the other account's token).
     */
    const confirm = Effect.fn("HostConnection.confirm")(function*(
      principal: Principal,
      confirmation: string | undefined,
      browserNonce: Redacted.Redacted<string> | undefined
    ) {
      if (!identity.configured) return yield* notConfigured()
      const pending = yield* open<ConfirmationPayload>(confirmation, CONFIRMATION_AAD, badConfirmation)
      const expiresAt = yield* check(pending, principal, browserNonce, badConfirmation)
      if (typeof pending.l !== "string" || typeof pending.t !== "string") return yield* badConfirmation()
      if (!(yield* singleUse.spend(CONFIRMATION_PURPOSE, pending.n, new Date(expiresAt)))) return yield* badConfirmation()
      const login = pending.l
      return yield* tx.withTransaction(Effect.gen(function*() {
        const holders = yield* accounts.findByHostLogin(login)
        for (const other of holders) {
          if (other.id !== pending.a) yield* accounts.update(new Account({ ...other, hostLogin: null, hostToken: null }))
        }
        // Re-read inside the transaction so a concurrent settings change is not overwritten.
        const current = yield* Effect.flatten(accounts.findById(pending.a as AccountId)).pipe(
          Effect.mapError(() => new NotFound({ detail: "The account behind this session is gone." }))
        )
        const connected = new Account({ ...current, hostLogin: login, hostToken: SealedSecret.make(pending.t) })
        yield* accounts.update(connected)
        return connected
      }))
    })

    return { configured: identity.configured, authorizeOrigin: identity.authorizeOrigin, start, callback, confirm } as const
  })
}) {}

/**
 * Whether the account's connected login controls the repo, asked of the code host with the login's own
 * token (admin rights on the repo). False without a connection, or with one made before tokens were kept
 * (connect again), or a token the code host no longer accepts. A code-host outage is a 503, not a "no".
 */
export const controlsThroughConnection = (account: Account, repo: { readonly owner: string; readonly name: string }) =>
  Effect.gen(function*() {
    const identity = yield* CodeHostIdentity
    const box = yield* SecretBox
    if (!identity.configured || account.hostLogin === null || account.hostToken === null) return false
    const token = yield* Effect.option(box.open(account.hostToken, hostTokenAad(account, account.hostLogin)))
    if (Option.isNone(token)) return false
    return yield* identity.controls(token.value, repo).pipe(
      Effect.catchTag("CodeHostIdentityError", (e) =>
        e.reason === "unavailable"
          ? Effect.fail(new HostUnavailable({ retryAfterSeconds: e.retryAfterSeconds ?? null, detail: "The code host did not answer whether you control this repository; try again shortly." }))
          : Effect.succeed(false))
    )
  })

const fromIdentity = (e: CodeHostIdentityError) => {
  switch (e.reason) {
    case "not_configured":
      return notConfigured()
    case "code_rejected":
      return InvalidInput.forField("code", `was refused by the code host (expired or already used); ${startAgain}`)
    case "unavailable":
      return new HostUnavailable({
        retryAfterSeconds: e.retryAfterSeconds ?? null,
        detail: "The code host did not complete the connection; try again shortly."
      })
  }
}
