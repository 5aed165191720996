import { Effect, Option, type Redacted, Stream } from "effect"
import { RepoRef } from "../../model/Ids.js"
import type { Listing } from "../../model/Listing.js"
import type { Sale } from "../../model/Sale.js"
import { receiptToken } from "../../model/rules/Receipt.js"
import { testGoodsFiles } from "../../model/rules/TestGoods.js"
import type { CodeHostError } from "../../ports/CodeHost.js"
import type { PurchaseDeps } from "./Deps.js"
import type { Goods } from "./Types.js"

/** The bytes a settled sale buys, and the settlement a sale already on the ledger is answered with. */
export const makeGoods = ({ baseUrl, box, host, packager, store, tokens }: PurchaseDeps) => {
  /**
   * The bytes a settled sale buys: the pinned commit's archive, or for the test twin a manifest and a note.
   * `held` is the sale's listing when the caller already read it in this request (a purchase), and `heldToken`
   * that listing's token when the caller opened it already; otherwise they are read here.
   */
  const goodsOf = Effect.fn("Purchases.goods")(function*(
    sale: Sale,
    settlement: Goods["settlement"],
    held?: Listing,
    heldToken?: Option.Option<Redacted.Redacted<string>>
  ) {
    const listing = held ?? Option.getOrNull(yield* store.findById(sale.listingId))
    const [owner, name] = sale.repo.split("/") as [string, string]
    const sha = sale.commitSha ?? "unknown"
    const filename = `${owner}-${name}-${sha.slice(0, 7)}.tar.gz`
    const receipt = `${baseUrl}/downloads/${receiptToken(sale.id, box.mac)}`
    const token = listing === null ? Option.none() : heldToken !== undefined ? heldToken : yield* tokens.tokenOf(listing)
    // Both kinds of goods ask the code host only when their body is first pulled: a failure there comes
    // after the sale settled, and the host answers it with the receipt link (goods owed, not lost).
    const body: Stream.Stream<Uint8Array, CodeHostError> = sale.livemode
      ? host.archive(listing?.repo ?? new RepoRef({ owner, name }), sha, token)
      : Stream.unwrap(Effect.gen(function*() {
        const info = yield* host.repo({ owner, name }, token)
        // The tree of the commit paid for, not of today's head: the manifest names the pinned commit.
        const pinned = sale.commitSha === null ? info : { ...info, headSha: sale.commitSha }
        const tree = yield* host.tree(pinned, token)
        return packager.tarGz(testGoodsFiles(sale, tree, `${owner}-${name}-${sha.slice(0, 7)}`))
      }))
    return { sale, settlement, filename, body, receipt } satisfies Goods
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
