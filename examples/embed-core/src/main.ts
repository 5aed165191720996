/**
 * repomarket embedded in one process, no server and no database: the application as a web-standard handler
 * over memory adapters, a seller listing a repo, a buyer reading the quote (the 402) and paying the test
 * twin with the official x402 client, whose fetch goes straight to the handler.
 */
import { x402Client } from "@x402/core/client"
import { ExactEvmScheme } from "@x402/evm/exact/client"
import { wrapFetchWithPayment } from "@x402/fetch"
import { formatUsd } from "repomarket"
import { makeWebHandler } from "repomarket/http"
import { memoryPorts } from "repomarket/testing"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"

const baseUrl = "http://market.internal"
const handler = makeWebHandler(memoryPorts({
  baseUrl,
  // The seeded code host stands in for GitHub.
  repos: [{ owner: "octo-org", name: "widget", description: "A widget library", files: { "README.md": "# Widget\n" } }]
}))
// Every request of this process goes to the handler: no port, no network.
const inProcess = (input: string | URL | Request, init?: RequestInit): Promise<Response> =>
  handler(input instanceof Request ? input : new Request(new URL(input, baseUrl), init))

try {
  // 1. A seller lists the repo anonymously; the wallet named is where the money goes.
  const listed = await inProcess("/repos", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ host_url: "https://github.com/octo-org/widget", price_usd: "0.50", wallet_base: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913" })
  })
  if (listed.status !== 201) throw new Error(`listing failed: ${listed.status} ${await listed.text()}`)
  const listing = await listed.json() as { checkout_url: string; test_checkout_url: string }
  console.log("listed:", listing.checkout_url)

  // 2. The quote: the test twin's 402 names price, asset and payee per chain.
  const quote = await inProcess(listing.test_checkout_url)
  const required = JSON.parse(Buffer.from(quote.headers.get("payment-required") ?? "", "base64").toString("utf8")) as {
    accepts: ReadonlyArray<{ network: string; amount: string; payTo: string }>
  }
  const offer = required.accepts[0]
  if (quote.status !== 402 || offer === undefined) throw new Error(`no quote: ${quote.status}`)
  console.log(`quote: ${quote.status}, ${formatUsd(BigInt(offer.amount))} USD on ${offer.network} to ${offer.payTo}`)

  // 3. A buyer pays with @x402/fetch and a fresh key (the twin's simulated ledger funds every payer).
  const buyer = privateKeyToAccount(generatePrivateKey())
  const pay = wrapFetchWithPayment(inProcess, new x402Client().register("eip155:*", new ExactEvmScheme(buyer)))
  const paid = await pay(listing.test_checkout_url)
  const goods = new Uint8Array(await paid.arrayBuffer())
  if (paid.status !== 200) throw new Error(`purchase failed: ${paid.status}`)
  const receipt = JSON.parse(Buffer.from(paid.headers.get("payment-response") ?? "", "base64").toString("utf8")) as { transaction: string }
  console.log(`bought: ${paid.status}, ${goods.byteLength} bytes of ${paid.headers.get("content-type")}, transaction ${receipt.transaction}`)
} finally {
  await handler.dispose()
}
