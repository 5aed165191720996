import { Effect, Option } from "effect"
import { RepoRef } from "../../Ids.js"
import { type ArchiveDigest, type DeliveredUpdate, receiptClaimsOf } from "../../ReceiptClaims.js"
import type { Sale } from "../../Sale.js"
import type { CodeHost } from "../../../ports/CodeHost.js"
import type { ReceiptSigner } from "../../../ports/ReceiptSigner.js"

/** What a settled sale's delivery is vouched for with: the archive (when known) and the signed receipt. */
export interface SaleDelivery {
  /** The delivered archive's SHA-256 and size; null when not known (yet). */
  readonly archive: ArchiveDigest | null
  /** The signed receipt (JWS); null for a sale recorded before commits were pinned. */
  readonly receipt: string | null
}

/**
 * The delivery of a settled sale as its receipt names it. `given.archive` is the archive delivered (the test
 * twin's goods, digested as they were made, or the digest the code host knew before the bytes went out), with
 * `given.update` when that delivery is an update after purchase; without `given`, a live sale's archive is the
 * digest the code host recorded for the pinned commit (null before its first cut), and a test sale's none. Used
 * by the goods themselves and by the `sale.settled` webhook, so both carry the same receipt.
 */
export const makeSaleDelivery = (host: CodeHost["Type"], signer: ReceiptSigner["Type"], baseUrl: string) =>
  (sale: Sale, given?: { readonly archive: ArchiveDigest | null; readonly update?: DeliveredUpdate | undefined }): Effect.Effect<SaleDelivery> =>
    Effect.gen(function*() {
      const [owner, name] = sale.repo.split("/") as [string, string]
      const known = given !== undefined
        ? given.archive
        : sale.livemode && sale.commitSha !== null
        ? Option.getOrNull(yield* host.archiveDigest(new RepoRef({ owner, name }), sale.commitSha))
        : null
      const claims = receiptClaimsOf(sale, baseUrl, known, given?.update)
      return { archive: known, receipt: claims === null ? null : yield* signer.sign(claims) }
    })
