import { describe, expect, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import fc from "fast-check"
import { apply, fromField, isKeep, Patch, traverse } from "../../domain/rules/ThreeState.js"

/** Any string, including astral characters and lone surrogates (a JSON body can carry both). */
const anyString = fc.oneof(
  fc.string({ unit: "binary" }),
  fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)) })
)
const nonEmpty = anyString.filter((s) => s.length > 0)
const saved = fc.option(anyString, { nil: null })

describe("three-state patch: fromField", () => {
  it("absent keeps, \"\" clears", () => {
    expect(fromField(undefined)).toEqual(Patch.Keep())
    expect(fromField("")).toEqual(Patch.Clear())
  })

  it("any non-empty string sets exactly that string, untrimmed", () => {
    fc.assert(fc.property(nonEmpty, (s) => {
      const patch = fromField(s)
      expect(patch._tag).toBe("Set")
      expect(patch._tag === "Set" && patch.value).toBe(s)
    }))
    // Whitespace is a value, not absence: trimming is each field's own rule, not the patch's.
    expect(fromField(" ")).toEqual(Patch.Set({ value: " " }))
    expect(fromField("\u0000")).toEqual(Patch.Set({ value: "\u0000" }))
  })
})

describe("three-state patch: apply", () => {
  it("absent keeps the saved value, whatever it is", () => {
    fc.assert(fc.property(saved, (s) => {
      expect(apply(fromField(undefined), s)).toBe(s)
    }))
  })

  it("\"\" clears the saved value, whatever it is", () => {
    fc.assert(fc.property(saved, (s) => {
      expect(apply(fromField(""), s)).toBeNull()
    }))
  })

  it("a non-empty string replaces the saved value, whatever it is", () => {
    fc.assert(fc.property(nonEmpty, saved, (next, s) => {
      expect(apply(fromField(next), s)).toBe(next)
    }))
  })

  it("the three cases together: the result is decided by the field alone, except for absence", () => {
    const field = fc.option(anyString, { nil: undefined })
    fc.assert(fc.property(field, saved, (input, s) => {
      const result = apply(fromField(input), s)
      if (input === undefined) expect(result).toBe(s)
      else if (input === "") expect(result).toBeNull()
      else expect(result).toBe(input)
    }))
  })

  it("is generic in the value type and never looks inside it", () => {
    fc.assert(fc.property(fc.anything(), fc.anything(), (value, before) => {
      expect(apply(Patch.Set({ value }), before)).toBe(value)
      expect(apply(Patch.Keep<unknown>(), before)).toBe(before)
      expect(apply(Patch.Clear<unknown>(), before)).toBeNull()
    }))
  })

  it("applying twice is the same as applying once (patches are idempotent)", () => {
    fc.assert(fc.property(fc.option(anyString, { nil: undefined }), saved, (input, s) => {
      const patch = fromField(input)
      expect(apply(patch, apply(patch, s))).toBe(apply(patch, s))
    }))
  })
})

describe("three-state patch: traverse", () => {
  const upper = (s: string) => Effect.succeed(s.toUpperCase())

  it("maps only a Set, and never calls the function for Keep or Clear", () => {
    let calls = 0
    const counted = (s: string) => Effect.sync(() => (calls++, s))
    expect(Effect.runSync(traverse(Patch.Keep<string>(), counted))).toEqual(Patch.Keep())
    expect(Effect.runSync(traverse(Patch.Clear<string>(), counted))).toEqual(Patch.Clear())
    expect(calls).toBe(0)
    fc.assert(fc.property(nonEmpty, (s) => {
      expect(Effect.runSync(traverse(fromField(s), upper))).toEqual(Patch.Set({ value: s.toUpperCase() }))
    }))
  })

  it("a failing validation of a Set fails the whole patch", () => {
    const refuse = (_: string) => Effect.fail("bad" as const)
    expect(Effect.runSync(Effect.either(traverse(fromField("x"), refuse)))).toEqual(Either.left("bad"))
    expect(Effect.runSync(Effect.either(traverse(fromField(""), refuse)))).toEqual(Either.right(Patch.Clear()))
    expect(Effect.runSync(Effect.either(traverse(fromField(undefined), refuse)))).toEqual(Either.right(Patch.Keep()))
  })

  it("isKeep is true for absence only", () => {
    expect(isKeep(fromField(undefined))).toBe(true)
    expect(isKeep(fromField(""))).toBe(false)
    expect(isKeep(fromField("x"))).toBe(false)
  })
})
