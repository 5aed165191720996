/**
 * A child process for restart tests: opens the storage the host would (DatabaseLive, so the embedded PGlite
 * under DATA_DIR when DATABASE_URL is unset), writes an account, a listing, a revoked and an active API key
 * and a settled sale, prints `READY <json of what it wrote>`, and waits to be killed.
 */
import { Effect, Layer, Option } from "effect"
import { DatabaseLive } from "../../adapters/sql/DatabaseLive.js"
import { StorageSql } from "../../adapters/sql/SqlLive.js"
import { Sale } from "../../domain/Sale.js"
import { AccountStore } from "../../ports/AccountStore.js"
import { CredentialStore } from "../../ports/CredentialStore.js"
import { ListingStore } from "../../ports/ListingStore.js"
import { SaleLedger } from "../../ports/SaleLedger.js"
import { aListing, anAccount, anApiKey, aSale, at } from "./fixtures.js"

const program = Effect.gen(function*() {
  const account = anAccount()
  const listing = aListing({ accountId: account.id })
  const revoked = anApiKey(account.id)
  const active = anApiKey(account.id)
  const sale = aSale({ accountId: account.id, listingId: listing.id })
  yield* (yield* AccountStore).insertOrGet(account)
  yield* (yield* ListingStore).insert(listing)
  const credentials = yield* CredentialStore
  yield* credentials.putApiKey(revoked)
  yield* credentials.putApiKey(active)
  yield* credentials.revokeApiKey(account.id, revoked.id, at("2024-03-02T00:00:00.000Z"))
  const ledger = yield* SaleLedger
  yield* ledger.recordPending(sale)
  yield* ledger.settle(new Sale({ ...sale, status: "settled", transaction: "0xfeed", settledAt: at("2024-03-02T00:00:01.000Z") }), Option.none())
  process.stdout.write(`READY ${JSON.stringify({ accountId: account.id, listingId: listing.id, revoked: revoked.digest, active: active.digest, saleId: sale.id })}\n`)
  return yield* Effect.never
})

Effect.runFork(program.pipe(Effect.provide(StorageSql.pipe(Layer.provide(DatabaseLive)))))
