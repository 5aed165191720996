#!/usr/bin/env node
// Buys one repository on a repomarket test checkout (the test twin: simulated USDC, nothing real moves) with the
// official x402 client and a fresh wallet, and saves the archive. Copy it anywhere: it needs only
// `npm install @x402/core @x402/evm @x402/fetch viem` (in this repository they are installed already).
//
//   node examples/buy.mjs <test_checkout_url> [directory]
//
// The test checkout URL is the `test_checkout_url` of a listing (`POST /repos` answers it, and so does
// `curl -H 'accept: application/json' <server>/r/<owner>/<repo>`). It pays test checkouts only (their URL ends
// in /test): a fresh wallet holds no real USDC, and this script is not the place to put a funded key.
import { writeFile } from "node:fs/promises"
import { join, resolve } from "node:path"
import { x402Client } from "@x402/core/client"
import { ExactEvmScheme } from "@x402/evm/exact/client"
import { wrapFetchWithPayment } from "@x402/fetch"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"

const [url, directory = "."] = process.argv.slice(2)
const fail = (message) => {
  console.error(`buy: ${message}`)
  process.exit(1)
}
if (url === undefined || !/^https?:\/\/[^/]+\/checkout\/[^/?#]+\/test$/.test(url)) {
  fail("give the test checkout URL, <server>/checkout/<id>/test (this script pays test checkouts only)")
}
const fromBase64Json = (value) => JSON.parse(Buffer.from(value ?? "", "base64").toString("utf8"))
const dollars = (atomic) => `${atomic / 1_000_000n}.${String(atomic % 1_000_000n).padStart(6, "0").slice(0, 2)}`

try {
  // 1. The quote: a checkout answers 402 with what it takes, per chain, in its PAYMENT-REQUIRED header.
  const quote = await fetch(url)
  if (quote.status !== 402) fail(`expected 402 from ${url}, got ${quote.status}: ${await quote.text()}`)
  const required = fromBase64Json(quote.headers.get("payment-required"))
  const offer = required.accepts.find((a) => a.network.startsWith("eip155:"))
  if (offer === undefined) fail("this listing takes no Base payment (the script pays on Base Sepolia)")
  console.log(`1. quote    ${quote.status}: ${dollars(BigInt(offer.amount))} USDC on ${offer.network} to ${offer.payTo}`)

  // 2. A fresh wallet signs the USDC transfer (EIP-3009: no gas, nothing sent by the wallet); the test twin's
  //    simulated ledger funds every payer. The client caps payments at $1 unless told otherwise.
  const buyer = privateKeyToAccount(generatePrivateKey())
  const client = new x402Client().register("eip155:*", new ExactEvmScheme(buyer))
  client.setSpendControls({ maxAmountPerPayment: `$${dollars(BigInt(offer.amount))}` })
  console.log(`2. pay      wallet ${buyer.address} signs a transfer of simulated USDC`)
  const paid = await wrapFetchWithPayment(fetch, client)(url)
  if (paid.status !== 200) fail(`payment refused: ${paid.status} ${await paid.text()}`)
  const receipt = fromBase64Json(paid.headers.get("payment-response"))
  const receiptLink = /<([^>]+)>;\s*rel="receipt"/.exec(paid.headers.get("link") ?? "")?.[1]
  console.log(`3. settled  transaction ${receipt.transaction} on ${receipt.network}`)

  // 3. The goods: a .tar.gz named by the server (Content-Disposition), saved as it arrives.
  const name = /filename="([^"/\\]+)"/.exec(paid.headers.get("content-disposition") ?? "")?.[1] ?? "repository.tar.gz"
  const path = resolve(join(directory, name))
  const bytes = new Uint8Array(await paid.arrayBuffer())
  await writeFile(path, bytes)
  console.log(`4. saved    ${path} (${bytes.byteLength} bytes of ${paid.headers.get("content-type")})`)
  if (receiptLink !== undefined) console.log(`   receipt  ${receiptLink} downloads it again for 7 days`)
} catch (error) {
  fail(error instanceof Error ? error.message : String(error))
}
