import { Data, Effect } from "effect"

/**
 * The three-state contract of every patchable field: absent keeps the saved value, a non-empty string
 * replaces it, `""` clears it.
 */
export type Patch<A> = Data.TaggedEnum<{
  Keep: {}
  Set: { readonly value: A }
  Clear: {}
}>
interface PatchDefinition extends Data.TaggedEnum.WithGenerics<1> {
  readonly taggedEnum: Patch<this["A"]>
}
/** Constructors (`Keep`, `Set`, `Clear`) and matchers of `Patch`. */
export const Patch = Data.taggedEnum<PatchDefinition>()

/** Reads a field of a request: `undefined` (absent) keeps, `""` clears, anything else sets. */
export const fromField = (input: string | undefined): Patch<string> =>
  input === undefined ? Patch.Keep() : input === "" ? Patch.Clear() : Patch.Set({ value: input })

/** The value after applying a patch to a saved value (`null` when cleared). */
export const apply = <A>(patch: Patch<A>, saved: A | null): A | null => {
  switch (patch._tag) {
    case "Keep":
      return saved
    case "Set":
      return patch.value
    case "Clear":
      return null
  }
}

/** Validates or normalises the value of a `Set`, leaving `Keep` and `Clear` untouched. */
export const traverse = <A, B, E, R>(
  patch: Patch<A>,
  f: (a: A) => Effect.Effect<B, E, R>
): Effect.Effect<Patch<B>, E, R> =>
  Patch.$match(patch, {
    Keep: () => Effect.succeed(Patch.Keep<B>()),
    Clear: () => Effect.succeed(Patch.Clear<B>()),
    Set: ({ value }) => Effect.map(f(value), (b) => Patch.Set({ value: b }))
  })

/** Whether the patch leaves the saved value as it is. */
export const isKeep = <A>(patch: Patch<A>): boolean => patch._tag === "Keep"
