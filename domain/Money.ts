import { Either, Schema } from "effect"

/**
 * Money is an integer count of USDC atomic units (6 decimals) held as a bigint: `12.34` is `12340000n`.
 * No floating point anywhere in a money path: prices are parsed and printed by string arithmetic.
 */
export const AtomicAmount = Schema.BigIntFromSelf.pipe(Schema.brand("AtomicAmount"))
/** An amount in USDC atomic units (a bigint; 6 decimals). */
export type AtomicAmount = typeof AtomicAmount.Type

/** USDC has 6 decimals: one dollar is 1 000 000 atomic units. */
export const USDC_DECIMALS = 6
const ATOMIC_PER_CENT = 10_000n
/** The accepted form of `price_usd`: up to six digits, a dot, exactly two decimals. */
export const PRICE_PATTERN = /^[0-9]{1,6}\.[0-9]{2}$/
/** The lowest price a listing can ask: 0.01 USDC. */
export const MIN_PRICE = AtomicAmount.make(10_000n) // 0.01
/** The highest price a listing can ask: 100000.00 USDC. */
export const MAX_PRICE = AtomicAmount.make(100_000_000_000n) // 100000.00

/** Why `parsePriceUsd` refused a price. */
export type PriceProblem = "format" | "too_small" | "too_large"

/** The message shown for each `PriceProblem`, next to the `price_usd` field. */
export const priceProblemMessage: Record<PriceProblem, string> = {
  format: "must be a decimal with two places, like \"12.00\"",
  too_small: "must be at least 0.01",
  too_large: "must be at most 100000.00"
}

/** Parses `price_usd` (`^[0-9]{1,6}\.[0-9]{2}$`, 0.01 to 100000.00) into atomic units. */
export const parsePriceUsd = (input: string): Either.Either<AtomicAmount, PriceProblem> => {
  if (!PRICE_PATTERN.test(input)) return Either.left("format")
  const [dollars, cents] = input.split(".") as [string, string]
  const atomic = (BigInt(dollars) * 100n + BigInt(cents)) * ATOMIC_PER_CENT
  if (atomic < MIN_PRICE) return Either.left("too_small")
  if (atomic > MAX_PRICE) return Either.left("too_large")
  return Either.right(AtomicAmount.make(atomic))
}

/** Prints atomic units as US dollars with two places (sub-cent remainders are not expected for prices). */
export const formatUsd = (amount: bigint): string => {
  const negative = amount < 0n
  const abs = negative ? -amount : amount
  const cents = abs / ATOMIC_PER_CENT
  const whole = cents / 100n
  const frac = (cents % 100n).toString().padStart(2, "0")
  return `${negative ? "-" : ""}${whole}.${frac}`
}
