import { describe, expect, it } from "@effect/vitest"
import { x402Client, x402HTTPClient } from "@x402/core/client"
import { decodePaymentRequiredHeader, decodePaymentResponseHeader, encodePaymentRequiredHeader } from "@x402/core/http"
import { PaymentRequiredV1Schema, PaymentRequiredV2Schema } from "@x402/core/schemas"
import { ExactEvmScheme } from "@x402/evm/exact/client"
import { Either, Option } from "effect"
import { privateKeyToAccount } from "viem/accounts"
import { createPaymentHeader } from "x402/client"
import { encodePayment } from "x402/schemes"
import { decodeXPaymentResponse } from "x402/shared"
import { createSigner, PaymentRequirementsSchema } from "x402/types"
import {
  decodePaymentHeader,
  encodeHeader,
  paymentRequiredV1Body,
  paymentRequiredV2,
  paymentResponseHeader
} from "../../../codec/Wire.js"
import { baseSepolia, DESCRIPTION, RESOURCE, SOLANA_FEE_PAYER, SOLANA_PAYTO, solanaMainnet } from "./fixtures.js"

// A throwaway key holding nothing: signing is local, nothing touches a chain.
const BUYER_KEY = "0xac0974bec39a17e36ba4a6b4d7a8d44e0d7d2b4d8d4e7c9c0b2f1d2c3b4a5f6e"
const options = { resource: RESOURCE, description: DESCRIPTION }
const requirements = [baseSepolia, solanaMainnet]

describe("paymentRequiredV2", () => {
  it("lists one accepts entry per requirement, amounts as strings, with the resource and gzip type", () => {
    expect(paymentRequiredV2(requirements, { ...options, error: "pay first" })).toEqual({
      x402Version: 2,
      error: "pay first",
      resource: { url: RESOURCE, description: DESCRIPTION, mimeType: "application/gzip" },
      accepts: [
        {
          scheme: "exact",
          network: "eip155:84532",
          asset: "0x036CbD53842c5426634e7929541eC2318f3dCF7e",
          amount: "10000",
          payTo: baseSepolia.payTo,
          maxTimeoutSeconds: 300,
          extra: { name: "USDC", version: "2" }
        },
        {
          scheme: "exact",
          network: "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp",
          asset: "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v",
          amount: "12340000",
          payTo: SOLANA_PAYTO,
          maxTimeoutSeconds: 300,
          extra: { feePayer: SOLANA_FEE_PAYER }
        }
      ]
    })
  })

  it("encodes byte for byte as @x402/core does, non-ASCII included, and passes its schema", () => {
    const required = paymentRequiredV2(requirements, { ...options, description: "Café — naïve ünïcode ✓" })
    const header = encodeHeader(required)
    expect(header).toBe(encodePaymentRequiredHeader(required as never))
    expect(decodePaymentRequiredHeader(header)).toEqual(required)
    expect(PaymentRequiredV2Schema.safeParse(decodePaymentRequiredHeader(header)).success).toBe(true)
  })
})

describe("paymentRequiredV1Body", () => {
  it("gives the v1 object with maxAmountRequired, v1 network names and no outputSchema", () => {
    const body = paymentRequiredV1Body(requirements, options)
    expect(body.x402Version).toBe(1)
    expect(body.error).toBe("X-PAYMENT header is required")
    expect(body.accepts).toEqual([
      {
        scheme: "exact",
        network: "base-sepolia",
        maxAmountRequired: "10000",
        resource: RESOURCE,
        description: DESCRIPTION,
        mimeType: "application/gzip",
        payTo: baseSepolia.payTo,
        maxTimeoutSeconds: 300,
        asset: baseSepolia.asset,
        extra: { name: "USDC", version: "2" }
      },
      expect.objectContaining({ network: "solana", maxAmountRequired: "12340000", extra: { feePayer: SOLANA_FEE_PAYER } })
    ])
  })

  it("is accepted entry by entry by the x402 v1 schema x402-fetch parses with, and by @x402/core's v1 schema", () => {
    const body = JSON.parse(JSON.stringify(paymentRequiredV1Body(requirements, options)))
    for (const entry of body.accepts) expect(PaymentRequirementsSchema.safeParse(entry).error).toBeUndefined()
    expect(PaymentRequiredV1Schema.safeParse(body).success).toBe(true)
  })
})

describe("decodePaymentHeader with the official clients' own headers", () => {
  it("reads what @x402/fetch's client (x402Client + ExactEvmScheme) signs for our PAYMENT-REQUIRED", async () => {
    const account = privateKeyToAccount(BUYER_KEY)
    const client = new x402Client().register("eip155:*", new ExactEvmScheme(account))
    const offered = decodePaymentRequiredHeader(encodeHeader(paymentRequiredV2([baseSepolia], options)))
    const payload = await client.createPaymentPayload(offered)
    const headers = new x402HTTPClient(client).encodePaymentSignatureHeader(payload)
    const decoded = decodePaymentHeader({ "payment-signature": (headers as Record<string, string>)["PAYMENT-SIGNATURE"] })
    const payment = Either.getOrThrow(decoded)
    expect(payment.x402Version).toBe(2)
    expect(payment.network).toBe("eip155:84532")
    expect(payment.accepted).toEqual(Option.some({
      scheme: "exact",
      network: "eip155:84532",
      asset: baseSepolia.asset,
      amount: "10000",
      payTo: baseSepolia.payTo
    }))
    expect(payment.payload).toMatchObject({ authorization: { from: account.address, to: baseSepolia.payTo, value: "10000" } })
    expect(payment.raw).toEqual(JSON.parse(JSON.stringify(payload)))
  })

  it("reads what x402-fetch's v1 createPaymentHeader signs for our v1 body", async () => {
    const entry = PaymentRequirementsSchema.parse(paymentRequiredV1Body([baseSepolia], options).accepts[0])
    const header = await createPaymentHeader(await createSigner("base-sepolia", BUYER_KEY), 1, entry)
    const payment = Either.getOrThrow(decodePaymentHeader({ "x-payment": header }))
    expect(payment.x402Version).toBe(1)
    expect(payment.scheme).toBe("exact")
    expect(payment.network).toBe("eip155:84532")
    expect(payment.accepted).toEqual(Option.none())
    expect(payment.payload).toMatchObject({ authorization: { from: privateKeyToAccount(BUYER_KEY).address, value: "10000" } })
    expect(payment.raw).toMatchObject({ x402Version: 1, network: "base-sepolia" })
  })

  it("maps each v1 network name to the CAIP-2 id of DECISIONS.md, for x402's own v1 encoding", () => {
    const evm = { signature: `0x${"ab".repeat(65)}`, authorization: { from: baseSepolia.payTo, to: baseSepolia.payTo, value: "1", validAfter: "0", validBefore: "9", nonce: `0x${"00".repeat(32)}` } }
    const svm = { transaction: "AQID" }
    const cases = [
      ["base", "eip155:8453", evm],
      ["base-sepolia", "eip155:84532", evm],
      ["solana", "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp", svm],
      ["solana-devnet", "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1", svm]
    ] as const
    for (const [v1, caip2, payload] of cases) {
      const header = encodePayment({ x402Version: 1, scheme: "exact", network: v1, payload } as never)
      expect(Either.map(decodePaymentHeader({ "x-payment": header }), (p) => p.network), v1).toEqual(Either.right(caip2))
    }
  })

  it("leaves a v1 network we do not sell on unmapped, so it can match no requirement", () => {
    const header = Buffer.from(JSON.stringify({ x402Version: 1, scheme: "exact", network: "avalanche", payload: {} })).toString("base64")
    expect(Either.map(decodePaymentHeader({ "x-payment": header }), (p) => p.network)).toEqual(Either.right("avalanche"))
  })
})

describe("paymentResponseHeader", () => {
  const settled = {
    success: true,
    transaction: "0x1234567890abcdef1234567890abcdef1234567890abcdef1234567890abcdef",
    network: "eip155:84532",
    payer: "0x857b06519E91e3A54538791bDbb0E22373e36b66",
    errorReason: null
  }

  it("is PAYMENT-RESPONSE for v2, read back by @x402/core's decoder with the CAIP-2 network", () => {
    const header = paymentResponseHeader(settled, 2)
    expect(header.name).toBe("PAYMENT-RESPONSE")
    expect(decodePaymentResponseHeader(header.value)).toEqual({
      success: true,
      transaction: settled.transaction,
      network: "eip155:84532",
      payer: settled.payer
    })
  })

  it("is X-PAYMENT-RESPONSE for v1, read back by x402-fetch's decoder with the v1 network name", () => {
    const header = paymentResponseHeader({ ...settled, network: "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1" }, 1)
    expect(header.name).toBe("X-PAYMENT-RESPONSE")
    expect(decodeXPaymentResponse(header.value)).toEqual({
      success: true,
      transaction: settled.transaction,
      network: "solana-devnet",
      payer: settled.payer
    })
  })

  it("carries the reason, an empty transaction and the payer for a failed settlement, in v2 and in v1", () => {
    const failed = { success: false, transaction: null, network: "eip155:8453", payer: settled.payer, errorReason: "insufficient_funds" }
    expect(decodePaymentResponseHeader(paymentResponseHeader(failed, 2).value)).toEqual({
      success: false,
      transaction: "",
      network: "eip155:8453",
      payer: settled.payer,
      errorReason: "insufficient_funds"
    })
    expect(decodeXPaymentResponse(paymentResponseHeader(failed, 1).value)).toEqual({
      success: false,
      transaction: "",
      network: "base",
      payer: settled.payer,
      errorReason: "insufficient_funds"
    })
  })
})
