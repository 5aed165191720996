import { Effect, Encoding, Option, Redacted } from "effect"
import { Account } from "../Account.js"
import type { Principal } from "../Credentials.js"
import { HostUnavailable, InvalidInput, NotConfigured } from "../Errors.js"
import { type AccountId, SealedSecret } from "../Ids.js"
import { now } from "../rules/Tokens.js"
import { AccountStore } from "../../ports/AccountStore.js"
import { CodeHostIdentity, type CodeHostIdentityError } from "../../ports/CodeHostIdentity.js"
import { SecretBox } from "../../ports/SecretBox.js"
import { Transactor } from "../../ports/Transactor.js"

/** How long a started code-host connection may take to come back. */
export const HOST_CONNECTION_TTL_MS = 10 * 60_000

/** Binds a sealed state to its purpose: a sealed token or webhook secret can never pass as a state. */
const STATE_AAD = "host-connection-state:v1"
/** A sealed state is about 170 characters; anything far longer is not one of ours. */
const MAX_STATE_LENGTH = 1024

interface StatePayload {
  /** The account that started the connection. */
  readonly a: string
  /** Expiry, epoch milliseconds. */
  readonly e: number
  /** Random, so two states never look alike. */
  readonly n: string
}

export interface CallbackInput {
  readonly code?: string | undefined
  readonly state?: string | undefined
  /** Set by the code host instead of `code` when the seller declined. */
  readonly error?: string | undefined
}

const notConfigured = () =>
  new NotConfigured({
    detail: "The code-host connection is off: the operator has not set GITHUB_CLIENT_ID and GITHUB_CLIENT_SECRET."
  })

const badState = () =>
  InvalidInput.forField("state", "is invalid or expired; start the connection again from /auth/host/start")

/**
 * The code-host connection: a seller proves which code-host login is theirs (OAuth web flow), and the
 * verified login is stored on the account. It drives `claimed`, the storefront tagline on `/r/<owner>` and
 * taking over a listing of a repo under that login.
 *
 * The OAuth `state` is stateless: the account id, an expiry and a nonce, sealed with the SecretBox
 * (AES-256-GCM under SECRET_KEYS, bound to its purpose). It cannot be forged or altered, needs no server
 * memory (any instance, or a restarted one, can finish the flow), and expires after ten minutes.
 */
export class HostConnection extends Effect.Service<HostConnection>()("usecases/HostConnection", {
  effect: Effect.gen(function*() {
    const identity = yield* CodeHostIdentity
    const accounts = yield* AccountStore
    const box = yield* SecretBox
    const tx = yield* Transactor

    /** The code host's authorize URL for this account, carrying a fresh sealed state. */
    const start = Effect.fn("HostConnection.start")(function*(principal: Principal) {
      if (!identity.configured) return yield* notConfigured()
      const at = yield* now
      const payload: StatePayload = {
        a: principal.accountId,
        e: at.getTime() + HOST_CONNECTION_TTL_MS,
        n: Encoding.encodeHex(box.randomBytes(16))
      }
      const state = yield* box.seal(Redacted.make(JSON.stringify(payload)), STATE_AAD)
      return yield* identity.authorizeUrl(state).pipe(Effect.mapError(fromIdentity))
    })

    /** The account a state was issued to, if the state is ours, unaltered and unexpired. */
    const accountOfState = Effect.fnUntraced(function*(state: string) {
      if (state.length === 0 || state.length > MAX_STATE_LENGTH) return yield* badState()
      const opened = yield* box.open(SealedSecret.make(state), STATE_AAD).pipe(Effect.mapError(badState))
      let payload: StatePayload
      try {
        payload = JSON.parse(Redacted.value(opened)) as StatePayload
      } catch {
        return yield* badState()
      }
      const at = yield* now
      if (typeof payload.a !== "string" || typeof payload.e !== "number" || payload.e <= at.getTime()) {
        return yield* badState()
      }
      return yield* Effect.flatten(accounts.findById(payload.a as AccountId)).pipe(Effect.mapError(badState))
    })

    /**
     * The callback: checks the state, exchanges the code for the verified login and stores it on the
     * account. A login belongs to one account: a newer proof moves it from any other account.
     */
    const finish = Effect.fn("HostConnection.finish")(function*(input: CallbackInput) {
      if (!identity.configured) return yield* notConfigured()
      if (input.state === undefined) return yield* InvalidInput.forField("state", "is missing; start the connection again")
      const account = yield* accountOfState(input.state)
      if (input.error !== undefined) {
        const reported = /^[a-z_]{1,64}$/.test(input.error) ? ` ("${input.error}")` : ""
        return yield* InvalidInput.forField("code", `was not issued: the code host reported that the connection was declined${reported}`)
      }
      if (input.code === undefined || input.code === "" || input.code.length > 512) {
        return yield* InvalidInput.forField("code", "is missing; start the connection again")
      }
      const login = yield* identity.exchange(Redacted.make(input.code)).pipe(Effect.mapError(fromIdentity))
      return yield* tx.withTransaction(Effect.gen(function*() {
        const holders = yield* accounts.findByHostLogin(login)
        for (const other of holders) {
          if (other.id !== account.id) yield* accounts.update(new Account({ ...other, hostLogin: null }))
        }
        // Re-read inside the transaction so a concurrent settings change is not overwritten.
        const current = Option.getOrElse(yield* accounts.findById(account.id), () => account)
        const connected = new Account({ ...current, hostLogin: login })
        yield* accounts.update(connected)
        return connected
      }))
    })

    return { start, finish } as const
  })
}) {}

const fromIdentity = (e: CodeHostIdentityError) => {
  switch (e.reason) {
    case "not_configured":
      return notConfigured()
    case "code_rejected":
      return InvalidInput.forField("code", "was refused by the code host (expired or already used); start the connection again")
    case "unavailable":
      return new HostUnavailable({
        retryAfterSeconds: e.retryAfterSeconds ?? null,
        detail: "The code host did not complete the connection; try again shortly."
      })
  }
}
