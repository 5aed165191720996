import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit } from "effect"
import { FieldProblem, InvalidInput } from "../../domain/Errors.js"
import { AtomicAmount } from "../../domain/Money.js"
import { Address, type Chain } from "../../domain/Wallet.js"
import { FieldErrors, pricePatch, updatesDaysPatch, walletPatches } from "../../domain/rules/Fields.js"
import { Patch } from "../../domain/rules/ThreeState.js"
import { InvalidAddress } from "../../ports/Chains.js"

/** A Chains port's `normalize` that accepts addresses starting with `ok`, normalised to upper case, and refuses the rest. */
const normalized: Array<[Chain, string]> = []
const fakeNormalize = (chain: Chain, raw: string) => {
  normalized.push([chain, raw])
  return raw.startsWith("ok")
    ? Effect.succeed(Address.make(`${chain}:${raw.toUpperCase()}`))
    : Effect.fail(new InvalidAddress({ chain, message: `is not a ${chain} address` }))
}

const problems = (errors: FieldErrors) => errors.problems.map((p) => [p.field, p.message])

describe("request field validation", () => {
  describe("collecting problems", () => {
    it.effect("a request with no problem passes", () =>
      Effect.gen(function*() {
        const errors = new FieldErrors()
        expect(errors.problems).toEqual([])
        expect(yield* Effect.exit(errors.check)).toEqual(Exit.void)
      }))

    it.effect("one problem fails the request naming the field and what is wrong with it", () =>
      Effect.gen(function*() {
        const errors = new FieldErrors()
        errors.add("tagline", "is too long")
        const failure = yield* Effect.flip(errors.check)
        expect(failure).toBeInstanceOf(InvalidInput)
        expect(failure.detail).toBe("tagline is too long")
        expect(failure.errors).toEqual([new FieldProblem({ field: "tagline", message: "is too long" })])
      }))

    it.effect("every problem is reported at once, in the order found, so one 400 names all bad fields", () =>
      Effect.gen(function*() {
        const errors = new FieldErrors()
        errors.add("price_usd", "must be at least 0.01")
        errors.add("wallet_base", "is not a base address")
        expect(problems(errors)).toEqual([["price_usd", "must be at least 0.01"], ["wallet_base", "is not a base address"]])
        const failure = yield* Effect.flip(errors.check)
        expect(failure.detail).toBe("Several fields are invalid.")
        expect(failure.errors.map((p) => p.field)).toEqual(["price_usd", "wallet_base"])
      }))
  })

  describe("price_usd", () => {
    it("absent keeps the saved price and empty clears it, with no problem", () => {
      const errors = new FieldErrors()
      expect(pricePatch(errors, undefined)).toEqual(Patch.Keep())
      expect(pricePatch(errors, "")).toEqual(Patch.Clear())
      expect(errors.problems).toEqual([])
    })

    it.each([
      ["0.01", 10_000n],
      ["12.34", 12_340_000n],
      ["100000.00", 100_000_000_000n]
    ])("a valid price %j sets the price in atomic units", (input, atomic) => {
      const errors = new FieldErrors()
      expect(pricePatch(errors, input)).toEqual(Patch.Set({ value: AtomicAmount.make(atomic) }))
      expect(errors.problems).toEqual([])
    })

    it.each([
      ["12", "must be a decimal with two places, like \"12.00\""],
      ["12.3", "must be a decimal with two places, like \"12.00\""],
      ["$5.00", "must be a decimal with two places, like \"12.00\""],
      ["0.00", "must be at least 0.01"],
      ["100000.01", "must be at most 100000.00"]
    ])("an invalid price %j is reported on price_usd (%s) and keeps the saved price", (input, message) => {
      const errors = new FieldErrors()
      expect(pricePatch(errors, input)).toEqual(Patch.Keep())
      expect(problems(errors)).toEqual([["price_usd", message]])
    })
  })

  describe("updates_days", () => {
    it("absent keeps the saved window and null clears it (back to 0), with no problem", () => {
      const errors = new FieldErrors()
      expect(updatesDaysPatch(errors, undefined)).toEqual(Patch.Keep())
      expect(updatesDaysPatch(errors, null)).toEqual(Patch.Clear())
      expect(errors.problems).toEqual([])
    })

    it.each([0, 1, 30, 3650])("a whole number of days %j from 0 to 3650 sets the window", (days) => {
      const errors = new FieldErrors()
      expect(updatesDaysPatch(errors, days)).toEqual(Patch.Set({ value: days }))
      expect(errors.problems).toEqual([])
    })

    it.each([-1, 3651, 1.5, -0.5, Number.NaN, Number.POSITIVE_INFINITY, "30" as unknown as number, true as unknown as number])(
      "%j is reported on updates_days and keeps the saved window",
      (days) => {
        const errors = new FieldErrors()
        expect(updatesDaysPatch(errors, days)).toEqual(Patch.Keep())
        expect(problems(errors)).toEqual([["updates_days", "must be a whole number of days from 0 to 3650"]])
      }
    )
  })

  describe("payout wallets", () => {
    it.effect("absent wallets are kept and empty ones cleared, without asking the chain rules", () =>
      Effect.gen(function*() {
        normalized.length = 0
        const errors = new FieldErrors()
        expect(yield* walletPatches(errors, {}, fakeNormalize)).toEqual({ base: Patch.Keep(), solana: Patch.Keep() })
        expect(yield* walletPatches(errors, { wallet_base: "", wallet_solana: "" }, fakeNormalize)).toEqual({
          base: Patch.Clear(),
          solana: Patch.Clear()
        })
        expect(errors.problems).toEqual([])
        expect(normalized).toEqual([])
      }))

    it.effect("each address is normalised by the rules of its own chain", () =>
      Effect.gen(function*() {
        normalized.length = 0
        const errors = new FieldErrors()
        const patches = yield* walletPatches(errors, { wallet_base: "ok0xabc", wallet_solana: "okSoL" }, fakeNormalize)
        expect(patches).toEqual({
          base: Patch.Set({ value: Address.make("base:OK0XABC") }),
          solana: Patch.Set({ value: Address.make("solana:OKSOL") })
        })
        expect(normalized).toEqual([["base", "ok0xabc"], ["solana", "okSoL"]])
        expect(errors.problems).toEqual([])
      }))

    it.effect("an invalid address is reported on its own chain's field with the chain's message, and keeps the saved one", () =>
      Effect.gen(function*() {
        const errors = new FieldErrors()
        const patches = yield* walletPatches(errors, { wallet_base: "nope", wallet_solana: "okSoL" }, fakeNormalize)
        expect(patches).toEqual({ base: Patch.Keep(), solana: Patch.Set({ value: Address.make("solana:OKSOL") }) })
        expect(problems(errors)).toEqual([["wallet_base", "is not a base address"]])

        const other = new FieldErrors()
        expect(yield* walletPatches(other, { wallet_base: "ok1", wallet_solana: "nope" }, fakeNormalize)).toEqual({
          base: Patch.Set({ value: Address.make("base:OK1") }),
          solana: Patch.Keep()
        })
        expect(problems(other)).toEqual([["wallet_solana", "is not a solana address"]])
      }))

    it.effect("both invalid addresses are reported, base first, together with earlier problems", () =>
      Effect.gen(function*() {
        const errors = new FieldErrors()
        pricePatch(errors, "0.00")
        yield* walletPatches(errors, { wallet_base: "x", wallet_solana: "y" }, fakeNormalize)
        expect(problems(errors)).toEqual([
          ["price_usd", "must be at least 0.01"],
          ["wallet_base", "is not a base address"],
          ["wallet_solana", "is not a solana address"]
        ])
        const failure = yield* Effect.flip(errors.check)
        expect(failure.errors).toHaveLength(3)
      }))
  })
})
