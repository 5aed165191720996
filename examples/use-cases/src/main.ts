/**
 * repomarket's core with no HTTP at all: the use cases (`UseCasesLive`) over memory adapters (`memoryPorts`). A
 * seller lists a repo, a buyer reads the quote and pays the test twin with the official x402 client, and the
 * archive streams out: the same Listings and Purchases the HTTP app, the Lambda handlers and the MCP server call,
 * with every money rule they enforce.
 */
import { x402Client } from "@x402/core/client"
import type { PaymentRequired } from "@x402/core/types"
import { ExactEvmScheme } from "@x402/evm/exact/client"
import { Chunk, Effect, Either, Layer, Stream } from "effect"
import { formatUsd, Listings, Purchases, UseCasesLive } from "repomarket"
import { decodePaymentHeader, paymentRequiredV2 } from "repomarket/adapters/x402"
import { memoryPorts } from "repomarket/testing"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"

// The seeded code host stands in for GitHub; nothing here listens on a port or opens a database.
const ports = memoryPorts({
  baseUrl: "https://market.example",
  repos: [{ owner: "octo-org", name: "widget", description: "A widget library", files: { "README.md": "# Widget\n" } }]
})
const client = "127.0.0.1" // the caller's address, which the per-client limits count

const program = Effect.gen(function*() {
  const listings = yield* Listings
  const purchases = yield* Purchases

  // 1. A seller lists the repo anonymously (no account): the wallet named is where the money goes.
  const listing = yield* listings.create(
    { host_url: "https://github.com/octo-org/widget", price_usd: "0.50", wallet_base: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913" },
    null,
    client
  )
  console.log(`listed: ${listing.repo.slug}, checkout ${listing.checkoutId}`)

  // 2. The quote of the test twin (livemode false), as the x402 402 a client reads off the wire.
  const quote = yield* purchases.quote(listing.checkoutId, false)
  const offer: PaymentRequired = JSON.parse(JSON.stringify(paymentRequiredV2(quote.requirements, { resource: quote.resource, description: listing.repo.slug })))
  const first = offer.accepts[0]
  if (first === undefined) throw new Error("no payment requirement")
  console.log(`quote: ${formatUsd(BigInt(first.amount))} USD on ${first.network} to ${first.payTo}`)

  // 3. A buyer signs a payment with a fresh key (the twin's simulated ledger funds every payer), sent as the
  //    PAYMENT-SIGNATURE header would carry it; the purchase checks it, settles it and hands over the goods.
  const payer = new x402Client().register("eip155:*", new ExactEvmScheme(privateKeyToAccount(generatePrivateKey())))
  const payload = yield* Effect.promise(() => payer.createPaymentPayload(offer))
  const payment = decodePaymentHeader({ "payment-signature": Buffer.from(JSON.stringify(payload)).toString("base64") })
  if (Either.isLeft(payment)) throw new Error(`unreadable payment: ${payment.left}`)
  const goods = yield* purchases.pay(listing.checkoutId, false, payment.right, client)
  const chunks = yield* Stream.runCollect(goods.body)
  const bytes = Chunk.reduce(chunks, 0, (n, chunk) => n + chunk.byteLength)
  console.log(`bought: ${goods.filename}, ${bytes} bytes, transaction ${goods.settlement.transaction}`)
})

await Effect.runPromise(program.pipe(Effect.provide(UseCasesLive.pipe(Layer.provideMerge(ports)))))
