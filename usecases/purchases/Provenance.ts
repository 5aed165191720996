import { Effect } from "effect"
import { NotFound } from "../../model/Errors.js"
import { attestedBy, deliveryStatementOf, type DsseEnvelope, IN_TOTO_PAYLOAD_TYPE, pae, toBase64 } from "../../model/Provenance.js"
import type { PurchaseDeps } from "./Deps.js"
import type { makeGoods } from "./Goods.js"
import type { makeUpdates } from "./Updates.js"

/** A delivery not yet attestable: its archive's digest is not known. */
const NOT_CUT = "This commit's archive has not been cut yet, so there is nothing to attest: download it once with the receipt link, then ask again."

/** Provenance of a settled sale's archive, by its receipt token: an in-toto Statement in a signed DSSE envelope. */
export const makeProvenance = (
  { host, signer }: PurchaseDeps,
  { goodsOf, settlementOf }: ReturnType<typeof makeGoods>,
  { receipted }: ReturnType<typeof makeUpdates>
) =>
  /**
   * `GET /downloads/<token>/provenance`: the statement that the archive with this SHA-256 (the subject) is the
   * commit of the repository the sale bought, delivered for its payment at its settlement, signed with the
   * marketplace's key. Unknown, unsettled or not-yet-cut deliveries are 404; nothing is downloaded here.
   */
  Effect.fn("Purchases.provenance")(function*(token: string) {
    const { sale, update } = yield* receipted(token)
    const goods = yield* goodsOf(sale, settlementOf(sale), undefined, undefined, update ?? undefined)
    const [owner, name] = sale.repo.split("/") as [string, string]
    const statement = goods.digest === null
      ? null
      : deliveryStatementOf(sale, goods.digest, goods.filename, `${host.ownerUrl(owner)}/${name}`, update ?? undefined)
    if (statement === null) return yield* new NotFound({ detail: NOT_CUT })
    // The statement names its signer (this origin and the key), so the envelope's unsigned keyid cannot be swapped.
    const payload = new TextEncoder().encode(JSON.stringify(attestedBy(statement, { marketplace: signer.origin, keyid: signer.kid })))
    const { kid, signature } = yield* signer.signBytes(pae(IN_TOTO_PAYLOAD_TYPE, payload))
    return { payloadType: IN_TOTO_PAYLOAD_TYPE, payload: toBase64(payload), signatures: [{ keyid: kid, sig: toBase64(signature) }] } satisfies DsseEnvelope
  })
