import { Context, type Effect } from "effect"

/**
 * Whether the host can serve: its database answers (within 2 s). Hosts without one (memory) are always ready.
 * Never fails: a database that does not answer is `false`.
 */
export class HealthCheck extends Context.Tag("repomarket/HealthCheck")<HealthCheck, {
  readonly databaseReachable: Effect.Effect<boolean>
}>() {}
