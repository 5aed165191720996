/*
 * A buyer for the child-process server: the official v2 client (@x402/fetch + @x402/evm) over a fetch that
 * remembers the PAYMENT-SIGNATURE it sent, so the test can present the same payment again later. The client
 * sends an x402 payment-identifier id with each payment (what lets the buyer recover a purchase: the bare payment
 * presented again is refused, as every part of it is public on chain once settled).
 */
import { expect } from "@effect/vitest"
import { x402Client } from "@x402/core/client"
import type { PaymentPayload } from "@x402/core/types"
import { ExactEvmScheme } from "@x402/evm/exact/client"
import { appendPaymentIdentifierToExtensions } from "@x402/extensions/payment-identifier"
import { wrapFetchWithPayment } from "@x402/fetch"
import { Effect } from "effect"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"

export const unb64 = (value: string | null): any => JSON.parse(Buffer.from(value ?? "", "base64").toString("utf8"))

/** Pays `url` with a fresh buyer; whatever the answer, returns it with its bytes and the signature sent (if any). */
export const pay = (url: string) =>
  Effect.promise(async () => {
    const buyer = privateKeyToAccount(generatePrivateKey())
    const sent: Array<string> = []
    const recording: typeof fetch = (input, init) => {
      const signature = input instanceof Request ? input.headers.get("payment-signature") : null
      if (signature !== null) sent.push(signature)
      return fetch(input, init)
    }
    const client = new x402Client().register("eip155:*", new ExactEvmScheme(buyer)).registerExtension({
      key: "payment-identifier",
      enrichPaymentPayload: async (payload: PaymentPayload) => ({
        ...payload,
        extensions: appendPaymentIdentifierToExtensions(structuredClone(payload.extensions ?? {}))
      })
    })
    const res = await wrapFetchWithPayment(recording, client)(url, { signal: AbortSignal.timeout(30_000) })
    return { res, bytes: Buffer.from(await res.arrayBuffer()), sent, buyer }
  })

/** Pays and expects the goods: 200, gzip, one signature sent, a PAYMENT-RESPONSE receipt. */
export const buy = (url: string) =>
  Effect.map(pay(url), ({ buyer, bytes, res, sent }) => {
    expect(res.status, bytes.toString("utf8").slice(0, 300)).toBe(200)
    expect(res.headers.get("content-type")).toBe("application/gzip")
    expect(sent).toHaveLength(1)
    return { res, bytes, signature: sent[0]!, receipt: unb64(res.headers.get("payment-response")), buyer }
  })

/** Presents a PAYMENT-SIGNATURE (as sent before, with its payment-identifier id) again: the buyer's retry. */
export const presentAgain = (url: string, signature: string) =>
  Effect.promise(async () => {
    const res = await fetch(url, { headers: { "payment-signature": signature }, signal: AbortSignal.timeout(30_000) })
    return { res, bytes: Buffer.from(await res.arrayBuffer()) }
  })
