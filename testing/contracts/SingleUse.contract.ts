import { describe, expect } from "@effect/vitest"
import { Effect } from "effect"
import { SingleUse } from "../../ports/SingleUse.js"
import { unique } from "../Fixtures.js"
import type { Backend, ContractIt } from "./Backend.js"

const inMinutes = (m: number) => new Date(Date.now() + m * 60_000)

/** The SingleUse port's guarantees, for any adapter. */
export const SingleUseContract = (it: ContractIt<SingleUse>, _backend: Backend) =>
  describe("SingleUse", () => {
    it.effect("spends a value once; a second spend is refused until it expires", () =>
      Effect.gen(function*() {
        const once = yield* SingleUse
        const digest = `d_${unique()}`
        expect(yield* once.spend("oauth-state", digest, inMinutes(10))).toBe(true)
        expect(yield* once.spend("oauth-state", digest, inMinutes(10))).toBe(false)
        // Another purpose is another value.
        expect(yield* once.spend("siwx-nonce", digest, inMinutes(10))).toBe(true)
      }))

    it.effect("of many concurrent spends of one value exactly one wins", () =>
      Effect.gen(function*() {
        const once = yield* SingleUse
        const digest = `d_${unique()}`
        const results = yield* Effect.all(Array.from({ length: 12 }, () => once.spend("race", digest, inMinutes(5))), {
          concurrency: "unbounded"
        })
        expect(results.filter((r) => r)).toHaveLength(1)
      }))

    it.effect("an expired entry no longer blocks its value", () =>
      Effect.gen(function*() {
        const once = yield* SingleUse
        const digest = `d_${unique()}`
        expect(yield* once.spend("short", digest, new Date(Date.now() - 1_000))).toBe(true)
        expect(yield* once.spend("short", digest, inMinutes(1))).toBe(true)
        expect(yield* once.spend("short", digest, inMinutes(1))).toBe(false)
      }))
  })
