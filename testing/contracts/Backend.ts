import type { Vitest } from "@effect/vitest"

/**
 * What the contract suites need to know about the adapter under test: its name (in the suite titles) and the
 * two guarantees not every store can give, whose tests are skipped where the store does not claim them.
 */
export interface Backend {
  /** Shown in the suite title, e.g. `storage contracts [postgres]`. */
  readonly name: string
  /** The Transactor rolls every write of a failed transaction back (SQL does; the memory one only serialises). */
  readonly rollsBack: boolean
  /**
   * Outbox claimers proceed in parallel while another holds its claim (`FOR UPDATE SKIP LOCKED`); false for
   * stores that run every transaction one at a time (PGlite: one session).
   */
  readonly concurrentClaims: boolean
}

/** The `it` of a shared-layer block (`layer(...)` from `@effect/vitest`, live clock) providing `R`. */
export type ContractIt<R> = Vitest.MethodsNonLive<R, true>
