import type { Stream } from "effect"
import type { Checkout } from "../../Checkout.js"
import type { Delivery } from "../../Delivery.js"
import type { Listing } from "../../Listing.js"
import type { ArchiveDigest, Pin } from "../../ReceiptClaims.js"
import type { Sale } from "../../Sale.js"
import type { CodeHostError } from "../../../ports/CodeHost.js"
import type { PaymentRequirement, Settlement } from "../../../ports/PaymentFacilitator.js"

/** What a checkout offers right now: its terms, the commit a payment delivers, and the signed offers. */
export interface Quote {
  /** The checkout, current. */
  readonly checkout: Checkout
  /** The listing it sells. */
  readonly listing: Listing
  /** Real money (true) or the test twin (false). */
  readonly livemode: boolean
  /** One x402 payment requirement per chain the listing pays out on. */
  readonly requirements: ReadonlyArray<PaymentRequirement>
  /** Absolute URL of the checkout (the x402 resource). */
  readonly resource: string
  /** Absolute URL of the repo page. */
  readonly page: string
  /** The commit a payment now delivers and, once cut, its archive. */
  readonly pin: Pin
  /** The signed offer (JWS, x402 `offer-receipt`) of each requirement, in the same order. */
  readonly offers: ReadonlyArray<string>
}

/** Paid goods: the archive of the pinned commit, or the test twin's small tar.gz. */
export interface Goods {
  /** The settled sale. */
  readonly sale: Sale
  /** Always names the payer (x402 v1 requires it in the receipt), even when the facilitator left it out. */
  readonly settlement: Settlement & { readonly payer: string }
  /** The download's file name. */
  readonly filename: string
  /** The archive's bytes, streamed from the code host. */
  readonly body: Stream.Stream<Uint8Array, CodeHostError>
  /** Absolute URL that re-downloads the same commit for 7 days. */
  readonly receipt: string
  /** The archive's SHA-256 and size, when known before its bytes go out (see `CodeHost.archiveDigest`). */
  readonly digest: ArchiveDigest | null
  /** The signed receipt (JWS, x402 `offer-receipt`); null for a sale recorded before commits were pinned. */
  readonly signedReceipt: string | null
  /** The update delivery these goods are (a newer commit within the sale's update window); null for the purchase's own commit. */
  readonly update: Delivery | null
}
