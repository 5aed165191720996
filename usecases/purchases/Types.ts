import type { Stream } from "effect"
import type { Checkout } from "../../model/Checkout.js"
import type { Listing } from "../../model/Listing.js"
import type { Sale } from "../../model/Sale.js"
import type { CodeHostError } from "../../ports/CodeHost.js"
import type { PaymentRequirement, Settlement } from "../../ports/PaymentFacilitator.js"

/** What a checkout offers right now. */
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
}
