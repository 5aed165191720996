import type { Vitest } from "@effect/vitest"

/** The adapters every contract suite runs against. */
export type Backend = "memory" | "pglite" | "postgres"

/** The `it` of a shared-layer block (`layer(...)` from @effect/vitest, live clock) providing `R`. */
export type ContractIt<R> = Vitest.MethodsNonLive<R, true>

/** SQL stores roll a failed transaction back; the memory Transactor only serialises. */
export const rollsBack = (backend: Backend): boolean => backend !== "memory"
