import { Effect, Either, Schema } from "effect"
import { FieldProblem, InvalidInput } from "../Errors.js"
import { UpdatesDays, updatesDaysProblem } from "../Listing.js"
import { type AtomicAmount, parsePriceUsd, priceProblemMessage } from "../Money.js"
import { type Chain, walletField } from "../Wallet.js"
import type { Address } from "../Wallet.js"
import type { WalletPatches } from "./PayoutResolution.js"
import { fromField, Patch, traverse } from "./ThreeState.js"

/**
 * Validation of request fields, collecting every problem so one 400 names all bad fields. Each check
 * pushes into `problems` and yields a value to use if the request turns out valid.
 */
export class FieldErrors {
  /** Every problem found so far, in order. */
  readonly problems: Array<FieldProblem> = []
  /** Records a problem with a field. */
  add(field: string, message: string): void {
    this.problems.push(new FieldProblem({ field, message }))
  }
  /** Fails with all problems found, if any. */
  get check(): Effect.Effect<void, InvalidInput> {
    return this.problems.length === 0 ? Effect.void : Effect.fail(InvalidInput.forFields(this.problems))
  }
}

/** Reads `price_usd` as a patch; an invalid price is recorded in `errors` and keeps the saved price. */
export const pricePatch = (errors: FieldErrors, input: string | undefined): Patch<AtomicAmount> => {
  const patch = fromField(input)
  if (patch._tag !== "Set") return patch as Patch<never>
  return Either.match(parsePriceUsd(patch.value), {
    onLeft: (problem) => {
      errors.add("price_usd", priceProblemMessage[problem])
      return Patch.Keep<AtomicAmount>()
    },
    onRight: (value) => Patch.Set({ value })
  })
}

const isUpdatesDays = Schema.is(UpdatesDays)

/**
 * Reads `updates_days` as a patch: absent keeps, `null` clears (back to 0, no updates), a whole number of days from
 * 0 to 3650 (`UpdatesDays`) sets; anything else is recorded in `errors` and keeps the saved window.
 */
export const updatesDaysPatch = (errors: FieldErrors, input: number | null | undefined): Patch<number> => {
  if (input === undefined) return Patch.Keep()
  if (input === null) return Patch.Clear()
  if (isUpdatesDays(input)) return Patch.Set({ value: input })
  errors.add("updates_days", updatesDaysProblem)
  return Patch.Keep()
}

const walletPatch = (
  errors: FieldErrors,
  chain: Chain,
  input: string | undefined,
  normalize: Parameters<typeof walletPatches>[2]
) =>
  traverse(fromField(input), (raw) => normalize(chain, raw)).pipe(
    Effect.catchTag("InvalidAddress", (e) => {
      errors.add(walletField(chain), e.message)
      return Effect.succeed(Patch.Keep<Address>())
    })
  )

/**
 * Reads `wallet_base` and `wallet_solana` as patches, normalising each address with `normalize`; an invalid address
 * is recorded in `errors` (with the refusal's message) and keeps the saved one. `normalize` is the Chains port's,
 * passed in by the use case, so this rule needs no service.
 */
export const walletPatches = (
  errors: FieldErrors,
  input: { readonly wallet_base?: string | undefined; readonly wallet_solana?: string | undefined },
  normalize: (
    chain: Chain,
    raw: string
  ) => Effect.Effect<Address, { readonly _tag: "InvalidAddress"; readonly message: string }>
): Effect.Effect<WalletPatches> =>
  Effect.all({
    base: walletPatch(errors, "base", input.wallet_base, normalize),
    solana: walletPatch(errors, "solana", input.wallet_solana, normalize)
  })
