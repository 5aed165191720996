import { Effect } from "effect"
import { repoPagePath } from "../../Checkout.js"
import { Chains } from "../../../ports/Chains.js"
import { CodeHost } from "../../../ports/CodeHost.js"
import { ListingStore } from "../../../ports/ListingStore.js"
import { Packager } from "../../../ports/Packager.js"
import { PaymentFacilitator } from "../../../ports/PaymentFacilitator.js"
import { PublicOrigin } from "../../../ports/PublicOrigin.js"
import { RateLimiter } from "../../../ports/RateLimiter.js"
import { ReceiptSigner } from "../../../ports/ReceiptSigner.js"
import { SaleLedger } from "../../../ports/SaleLedger.js"
import { SecretBox } from "../../../ports/SecretBox.js"
import { ArchiveCuts } from "../ArchiveCuts.js"
import { HostTokens } from "../HostTokens.js"
import { Settlements } from "../Settlements.js"

/** What the purchase operations are written against: the ports and use cases, read once when Purchases is built. */
export const purchaseDeps = Effect.gen(function*() {
  const { baseUrl } = yield* PublicOrigin
  return {
    store: yield* ListingStore,
    ledger: yield* SaleLedger,
    facilitators: yield* PaymentFacilitator,
    chains: yield* Chains,
    host: yield* CodeHost,
    /** Each commit's archive digest, the archive cut first when none was (one cut per commit at a time). */
    cuts: yield* ArchiveCuts,
    packager: yield* Packager,
    box: yield* SecretBox,
    tokens: yield* HostTokens,
    settlements: yield* Settlements,
    limiter: yield* RateLimiter,
    signer: yield* ReceiptSigner,
    baseUrl,
    /** The absolute URL of a repository's page. */
    pageOf: (repo: { readonly owner: string; readonly name: string }) => `${baseUrl}${repoPagePath(repo)}`
  } as const
})

/** The purchase operations' dependencies. */
export type PurchaseDeps = Effect.Effect.Success<typeof purchaseDeps>
