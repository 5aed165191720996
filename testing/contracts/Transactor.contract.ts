import { describe, expect } from "@effect/vitest"
import { Cause, Data, Effect, Exit, Option } from "effect"
import { AccountStore } from "../../ports/AccountStore.js"
import { ListingStore } from "../../ports/ListingStore.js"
import { SaleLedger } from "../../ports/SaleLedger.js"
import { Transactor } from "../../ports/Transactor.js"
import { aListing, anAccount, aSale } from "../Fixtures.js"
import type { Backend, ContractIt } from "./Backend.js"

class RuleRefused extends Data.TaggedError("RuleRefused")<{ readonly reason: string }> {}

/** The Transactor port's guarantees; rollback only where the adapter has it (SQL). */
export const TransactorContract = (it: ContractIt<Transactor | ListingStore | AccountStore | SaleLedger>, backend: Backend) =>
  describe("Transactor", () => {
    it.effect("commits a rule's writes and returns its result", () =>
      Effect.gen(function*() {
        const tx = yield* Transactor
        const listings = yield* ListingStore
        const accounts = yield* AccountStore
        const account = anAccount()
        const listing = aListing({ accountId: account.id })
        const result = yield* tx.withTransaction(Effect.gen(function*() {
          yield* accounts.insertOrGet(account)
          yield* listings.insert(listing)
          return "done" as const
        }))
        expect(result).toBe("done")
        expect(yield* listings.findById(listing.id)).toStrictEqual(Option.some(listing))
        expect(yield* accounts.findById(account.id)).toStrictEqual(Option.some(account))
      }))

    it.effect("passes a rule's own failure on unchanged", () =>
      Effect.gen(function*() {
        const tx = yield* Transactor
        const error = yield* Effect.flip(tx.withTransaction(Effect.fail(new RuleRefused({ reason: "no" }))))
        expect(error).toBeInstanceOf(RuleRefused)
        expect(error instanceof RuleRefused && error.reason).toBe("no")
      }))

    it.effect("runs nested rules as part of the outer one", () =>
      Effect.gen(function*() {
        const tx = yield* Transactor
        const ledger = yield* SaleLedger
        const sale = aSale()
        const inner = yield* tx.withTransaction(tx.withTransaction(ledger.recordPending(sale)))
        expect(inner.created).toBe(true)
        expect(yield* ledger.findById(sale.id)).toStrictEqual(Option.some(sale))
      }))

    it.effect.skipIf(!backend.rollsBack)("rolls every write back when the rule fails (SQL only)", () =>
      Effect.gen(function*() {
        const tx = yield* Transactor
        const listings = yield* ListingStore
        const accounts = yield* AccountStore
        const ledger = yield* SaleLedger
        const account = anAccount()
        const listing = aListing({ accountId: account.id })
        const sale = aSale({ accountId: account.id })
        const error = yield* Effect.flip(tx.withTransaction(Effect.gen(function*() {
          yield* accounts.insertOrGet(account)
          yield* listings.insert(listing)
          yield* ledger.recordPending(sale)
          return yield* new RuleRefused({ reason: "late check" })
        })))
        expect(error._tag).toBe("RuleRefused")
        expect(yield* accounts.findById(account.id)).toStrictEqual(Option.none())
        expect(yield* listings.findById(listing.id)).toStrictEqual(Option.none())
        expect(yield* ledger.findByPaymentKey(sale.paymentKey)).toStrictEqual(Option.none())
      }))

    it.effect.skipIf(!backend.rollsBack)("rolls back on a defect too, and the defect goes on (SQL only)", () =>
      Effect.gen(function*() {
        const tx = yield* Transactor
        const listings = yield* ListingStore
        const listing = aListing()
        const exit = yield* Effect.exit(tx.withTransaction(
          Effect.zipRight(listings.insert(listing), Effect.die(new Error("boom")))
        ))
        const defect = Exit.isFailure(exit) && Cause.isDie(exit.cause) ? Cause.squash(exit.cause) : undefined
        expect(defect).toBeInstanceOf(Error)
        expect((defect as Error).message).toBe("boom")
        expect(yield* listings.findById(listing.id)).toStrictEqual(Option.none())
      }))

    it.effect.skipIf(!backend.rollsBack)("rolls back only the inner rule when its failure is caught (SQL only)", () =>
      Effect.gen(function*() {
        const tx = yield* Transactor
        const listings = yield* ListingStore
        const kept = aListing()
        const dropped = aListing()
        yield* tx.withTransaction(Effect.gen(function*() {
          yield* listings.insert(kept)
          yield* Effect.either(tx.withTransaction(
            Effect.zipRight(listings.insert(dropped), Effect.fail(new RuleRefused({ reason: "inner" })))
          ))
        }))
        expect(yield* listings.findById(kept.id)).toStrictEqual(Option.some(kept))
        expect(yield* listings.findById(dropped.id)).toStrictEqual(Option.none())
      }))
  })
