import { Context, type Effect } from "effect"
import type { StorageError } from "./StorageError.js"

/**
 * One-time values (an OAuth `state`, a sign-in challenge nonce) spent at most once, across every host that
 * shares the store. Callers pass a digest, never the value itself, and a purpose, so values of different
 * flows can never spend each other. `spend` fails with `StorageError` when the store does.
 */
export class SingleUse extends Context.Tag("repomarket/SingleUse")<SingleUse, {
  /**
   * Spends `digest` under `purpose`: true the first time, false if it was already spent and has not expired.
   * Of any number of concurrent callers with the same value exactly one gets true. Entries past `expiresAt`
   * may be forgotten (the value they stand for is refused on its expiry anyway).
   */
  readonly spend: (purpose: string, digest: string, expiresAt: Date) => Effect.Effect<boolean, StorageError>
}>() {}
