/*
 * Shared by test/faults/*.test.ts: live payments signed by the official @x402/evm scheme, fetches bounded in
 * time (a fault must be answered, never waited out), and the ledger read through its port, every status.
 */
import { expect } from "@effect/vitest"
import { x402Client } from "@x402/core/client"
import { ExactEvmScheme } from "@x402/evm/exact/client"
import { wrapFetchWithPayment } from "@x402/fetch"
import { Effect } from "effect"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import type { AccountId } from "../../domain/Ids.js"
import type { Sale } from "../../domain/Sale.js"
import { SaleLedger } from "../../ports/SaleLedger.js"
import { acceptedOf, b64, challenge, expectGoods, newPaymentId, signEvm, withPaymentId } from "../support/purchase.js"

export const BASE = "eip155:8453"
export const BASE_SEPOLIA = "eip155:84532"

export const newBuyer = () => privateKeyToAccount(generatePrivateKey())

/** A live payment for the Base requirement of the checkout's 402, signed by the official client scheme. */
export const livePayment = (checkoutUrl: string, buyer = newBuyer()) =>
  Effect.gen(function*() {
    const { required } = yield* challenge(checkoutUrl)
    const signature = yield* signEvm(buyer, required, acceptedOf(required, BASE))
    return { buyer, signature, nonce: String((signature.payload as any).authorization.nonce) }
  })

/**
 * The same, sent with an x402 `payment-identifier` id as a careful v2 client does: presenting it again is the
 * buyer's retry, which gets the goods of its sale (a payment presented again without its id gets nothing).
 */
export const livePaymentWithId = (checkoutUrl: string, buyer = newBuyer()) =>
  Effect.map(livePayment(checkoutUrl, buyer), (p) => ({ ...p, signature: withPaymentId(p.signature, newPaymentId()), bare: p.signature }))

export interface Answered {
  readonly status: number
  readonly headers: Headers
  readonly body: Buffer
  readonly ms: number
}

/**
 * A GET answered in full (status, headers, body) within `limitMs`, else a test failure naming the URL:
 * during a fault the service must answer, not hang.
 */
export const fetchWithin = (url: string, headers: Record<string, string> = {}, limitMs = 15_000) =>
  Effect.promise(async (): Promise<Answered> => {
    const started = Date.now()
    const res = await fetch(url, { headers, signal: AbortSignal.timeout(limitMs) }).catch((e: unknown) => {
      throw new Error(`no answer from ${url} within ${limitMs} ms: ${String(e)}`)
    })
    const body = Buffer.from(await res.arrayBuffer())
    return { status: res.status, headers: res.headers, body, ms: Date.now() - started }
  })

/** Presents a PAYMENT-SIGNATURE, bounded in time. */
export const presentWithin = (url: string, signature: unknown, limitMs = 15_000) =>
  fetchWithin(url, { "payment-signature": b64(signature) }, limitMs)

/** The body of an answer as a problem+json object, with its status and content type checked. */
export const problemOf = (answer: Answered, status: number | ((s: number) => boolean), code?: string) => {
  const text = answer.body.toString("utf8")
  if (typeof status === "number") expect(answer.status, text).toBe(status)
  else expect(status(answer.status), `status ${answer.status}: ${text}`).toBe(true)
  expect(answer.headers.get("content-type")).toMatch(/^application\/problem\+json/)
  const problem = JSON.parse(text)
  if (code !== undefined) expect(problem.code).toBe(code)
  return problem as { status: number; code: string; detail: string; [k: string]: unknown }
}

/** Every sale of the account through the ledger port, whatever its status, newest first. */
export const ledgerOf = (accountId: AccountId) =>
  Effect.map(Effect.flatMap(SaleLedger, (l) => l.listByAccount(accountId, { limit: 1000 })), (p): ReadonlyArray<Sale> => p.sales)

/** Asserts each payment key appears at most once on the ledger. */
export const expectNoDuplicates = (sales: ReadonlyArray<Sale>) => {
  const keys = sales.map((s) => s.paymentKey)
  expect(new Set(keys).size, `duplicate payment keys in ${JSON.stringify(keys)}`).toBe(keys.length)
}

/** Buys the test twin with the official v2 client (@x402/fetch + @x402/evm); returns the PAYMENT-RESPONSE receipt. */
export const buyTwin = (testCheckoutUrl: string, buyer = newBuyer()) =>
  Effect.gen(function*() {
    const pay = wrapFetchWithPayment(fetch, new x402Client().register("eip155:*", new ExactEvmScheme(buyer)))
    const paid = yield* Effect.promise(() => pay(testCheckoutUrl))
    yield* expectGoods(paid)
    const receipt = JSON.parse(Buffer.from(paid.headers.get("payment-response")!, "base64").toString("utf8"))
    expect(receipt).toMatchObject({ success: true, network: BASE_SEPOLIA, payer: buyer.address })
    return receipt as { transaction: string; payer: string }
  })

/** Polls `check` every 50 ms until it holds, failing after `limitMs`. */
export const eventually = (what: string, check: () => boolean, limitMs = 10_000) =>
  Effect.promise(async () => {
    const until = Date.now() + limitMs
    while (!check()) {
      if (Date.now() > until) throw new Error(`timed out after ${limitMs} ms waiting for ${what}`)
      await new Promise((r) => setTimeout(r, 50))
    }
  })
