import type { Effect } from "effect"
import { Context } from "effect"

/** Why a follower is told to forget: another host wrote, or announcements may have been missed. */
export type ChangeReason = "change" | "resync"

/**
 * Writes announced between the hosts of one database, so what a host remembers from the database (the front
 * door's answers) is forgotten everywhere when any host writes.
 */
export class ChangeFeed extends Context.Tag("repomarket/ChangeFeed")<ChangeFeed, {
  /**
   * Announces a write. Inside a transaction PostgreSQL delivers it when the transaction commits (and never
   * after a rollback), so no host forgets before the write is visible to it.
   */
  readonly publish: Effect.Effect<void>
  /**
   * Runs until interrupted: `onChange("change")` for every write another host announces, and
   * `onChange("resync")` whenever announcements may have been missed (listening began or began again).
   */
  readonly follow: (onChange: (reason: ChangeReason) => void) => Effect.Effect<never>
}>() {}
