import { Effect, Option } from "effect"
import { NotFound } from "../../Errors.js"
import { attestedBy, deliveryStatementOf, type DsseEnvelope, IN_TOTO_PAYLOAD_TYPE, pae, toBase64 } from "../../Provenance.js"
import type { PurchaseDeps } from "./Deps.js"
import { filenameOf } from "./Goods.js"
import { spendProvenance } from "./ReceiptBudgets.js"
import type { makeUpdates } from "./Updates.js"

/** A delivery not yet attestable: no archive with a known digest is recorded for it. */
const NOT_CUT = "No archive with a known digest has been delivered for this receipt yet, so there is nothing to attest: download it once with the receipt link, then ask again."

/** Provenance of a settled sale's archive, by its receipt token: an in-toto Statement in a signed DSSE envelope. */
export const makeProvenance = (
  { host, ledger, limiter, signer }: PurchaseDeps,
  { receipted }: ReturnType<typeof makeUpdates>
) =>
  /**
   * `GET /downloads/<token>/provenance`: the statement that the archive with this SHA-256 (the subject) is the
   * commit of the repository the sale bought, delivered for its payment at its settlement, signed with the
   * marketplace's key. The archive is the one the ledger recorded when the receipt's goods went out
   * (`SaleLedger.recordDigest`): nothing is downloaded or asked of the code host here. Unknown or unsettled
   * receipts, and receipts with no archive recorded, are 404; past the provenance budget of the sale or of
   * `client` (`spendProvenance`), 429.
   */
  Effect.fn("Purchases.provenance")(function*(token: string, client: string) {
    const { sale, update } = yield* receipted(token)
    yield* spendProvenance(limiter, sale.id, client)
    const digest = Option.getOrNull(yield* ledger.findDigest(update?.id ?? sale.id))
    const [owner, name] = sale.repo.split("/") as [string, string]
    const statement = digest === null
      ? null
      : deliveryStatementOf(sale, digest, filenameOf(sale, update), `${host.ownerUrl(owner)}/${name}`, update ?? undefined)
    if (statement === null) return yield* new NotFound({ detail: NOT_CUT })
    // The statement names its signer (this origin and the key), so the envelope's unsigned keyid cannot be swapped.
    const payload = new TextEncoder().encode(JSON.stringify(attestedBy(statement, { marketplace: signer.origin, keyid: signer.kid })))
    const { kid, signature } = yield* signer.signBytes(pae(IN_TOTO_PAYLOAD_TYPE, payload))
    return { payloadType: IN_TOTO_PAYLOAD_TYPE, payload: toBase64(payload), signatures: [{ keyid: kid, sig: toBase64(signature) }] } satisfies DsseEnvelope
  })
