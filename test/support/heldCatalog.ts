import { expect } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { StorageMemory } from "../../adapters/memory/StorageMemory.js"
import { ListingCatalog } from "../../ports/ListingCatalog.js"

/**
 * Memory storage whose catalog holds every search at `hold` until the test opens it, to fill the catalog's slots:
 * `entered` counts the searches that reached the catalog (a test may set it back to 0). Give `storage` to
 * `TestApp({ storage })`, and end the test with `Effect.ensuring(hold.open)`.
 */
export const heldCatalog = () => {
  const hold = Effect.runSync(Effect.makeLatch(false))
  let entered = 0
  const catalog = Layer.effect(
    ListingCatalog,
    Effect.map(ListingCatalog, (inner) => ({
      ...inner,
      search: (query) => Effect.sync(() => entered++).pipe(Effect.zipRight(hold.await), Effect.zipRight(inner.search(query)))
    }))
  ).pipe(Layer.provide(StorageMemory))
  return {
    hold,
    storage: Layer.merge(StorageMemory, catalog),
    get entered() {
      return entered
    },
    set entered(n: number) {
      entered = n
    }
  }
}

/** Waits in real time (the app's clock may be the test clock). */
export const realSleep = (ms: number) => Effect.promise(() => new Promise((resolve) => setTimeout(resolve, ms)))

/** Polls in real time, at most 5 s, until `done`; fails the test if it never is. */
export const waitUntil = (done: () => boolean) =>
  Effect.gen(function*() {
    for (let i = 0; i < 500 && !done(); i++) yield* realSleep(10)
    expect(done()).toBe(true)
  })
