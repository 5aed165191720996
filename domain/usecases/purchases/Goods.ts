import { Chunk, Effect, Either, Option, type Redacted, Stream } from "effect"
import type { Delivery } from "../../Delivery.js"
import { RepoRef } from "../../Ids.js"
import type { Listing } from "../../Listing.js"
import { Sale } from "../../Sale.js"
import { receiptToken } from "../../rules/Receipt.js"
import { testGoodsFiles } from "../../rules/TestGoods.js"
import { type CodeHostError, wholeArchive } from "../../../ports/CodeHost.js"
import type { PurchaseDeps } from "./Deps.js"
import { makeSaleDelivery } from "./SaleReceipt.js"
import type { Goods } from "./Types.js"

/** The bytes a settled sale buys, and the settlement a sale already on the ledger is answered with. */
/** The parts of a small archive, as one array of bytes. */
const joined = (parts: Chunk.Chunk<Uint8Array>): Uint8Array => {
  const all = Chunk.toReadonlyArray(parts)
  const bytes = new Uint8Array(all.reduce((n, part) => n + part.length, 0))
  let at = 0
  for (const part of all) {
    bytes.set(part, at)
    at += part.length
  }
  return bytes
}

/** The download's file name of a sale's goods (or of its update delivery `update`): `<owner>-<repo>-<sha7>.tar.gz`. */
export const filenameOf = (sale: Sale, update?: Delivery | null): string => {
  const [owner, name] = sale.repo.split("/") as [string, string]
  return `${owner}-${name}-${(update?.commitSha ?? sale.commitSha ?? "unknown").slice(0, 7)}.tar.gz`
}

export const makeGoods = ({ baseUrl, box, cuts, host, ledger, packager, signer, store, tokens }: PurchaseDeps) => {
  const deliveryOf = makeSaleDelivery(host, signer, baseUrl)
  /**
   * The bytes a settled sale buys: the pinned commit's archive, or for the test twin a manifest and a note.
   * `held` is the sale's listing when the caller already read it in this request (a purchase), and `heldToken`
   * that listing's token when the caller opened it already; otherwise they are read here. With `update`, the
   * goods of that update delivery instead: its commit, its own receipt link and its own signed receipt.
   */
  const goodsOf = Effect.fn("Purchases.goods")(function*(
    sale: Sale,
    settlement: Goods["settlement"],
    held?: Listing,
    heldToken?: Option.Option<Redacted.Redacted<string>>,
    update?: Delivery
  ) {
    const listing = held ?? Option.getOrNull(yield* store.findById(sale.listingId))
    const [owner, name] = sale.repo.split("/") as [string, string]
    // What is cut: the sale's commit, or the update's (the test twin's manifest names the commit it is of).
    const cut = update === undefined ? sale : new Sale({ ...sale, commitSha: update.commitSha })
    const sha = cut.commitSha ?? "unknown"
    const filename = filenameOf(sale, update)
    const receipt = `${baseUrl}/downloads/${receiptToken(update?.id ?? sale.id, box.mac)}`
    const token = listing === null ? Option.none() : heldToken !== undefined ? heldToken : yield* tokens.tokenOf(listing)
    const ref = listing?.repo ?? new RepoRef({ owner, name })
    // The live archive: its commit's first archive is cut whole first when none was (see ArchiveCuts), so every
    // delivery names its digest; then the archive streams (from where the adapter kept it) when its body is
    // pulled, checked against that digest. A code host failure, cutting or streaming, comes after the sale
    // settled: it becomes the body's failure, which the host answers with the receipt link (goods owed, not
    // lost). The test twin's few bytes are made here, whole, so their digest is known at once.
    const { body, digest } = sale.livemode
      ? Either.match(yield* Effect.either(cuts.digestFor(ref, sha, token)), {
        onLeft: (e) => ({ body: Stream.fail<CodeHostError>(e), digest: null }),
        onRight: (known) => ({ body: host.archive(ref, sha, token), digest: Option.getOrNull(known) })
      })
      : Either.match(
        yield* Effect.either(Effect.gen(function*() {
          const info = yield* host.repo({ owner, name }, token)
          // The tree of the commit paid for, not of today's head: the manifest names the pinned commit.
          const pinned = cut.commitSha === null ? info : { ...info, headSha: cut.commitSha }
          const tree = yield* host.tree(pinned, token)
          return joined(yield* Stream.runCollect(packager.tarGz(testGoodsFiles(cut, tree, `${owner}-${name}-${sha.slice(0, 7)}`))))
        })),
        {
          onLeft: (e) => ({ body: Stream.fail<CodeHostError>(e), digest: null }),
          onRight: (bytes) => ({ body: wholeArchive(bytes), digest: signer.digest(bytes) })
        }
      )
    // What this receipt delivers, on the ledger once its digest is known: its provenance is read from there, never
    // by downloading. A ledger that cannot take it now does not hold back goods already paid for: the next
    // download records it.
    if (digest !== null) {
      yield* ledger.recordDigest({ saleId: sale.id, deliveryId: update?.id ?? null, digest }).pipe(
        Effect.catchTag("StorageError", () => Effect.logWarning(`The archive delivered for sale ${sale.id} could not be recorded now; its provenance waits for the next download`))
      )
    }
    const signedReceipt = (yield* deliveryOf(sale, { archive: digest, update })).receipt
    return { sale, settlement, filename, body, receipt, digest, signedReceipt, update: update ?? null } satisfies Goods
  })

  /** The settlement of a sale already settled, as the ledger holds it. */
  const settlementOf = (sale: Sale): Goods["settlement"] => ({
    success: true,
    transaction: sale.transaction,
    network: sale.network,
    payer: sale.payer,
    errorReason: null
  })

  return { goodsOf, settlementOf } as const
}
