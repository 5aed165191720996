/*
 * What the checkout puts on the wire (codec/Wire.ts): the 402 in v2 and v1 shapes and the settlement
 * receipt header. The amounts and addresses here are what a buyer's client pays, so each field is pinned.
 */
import { describe, expect, it } from "@effect/vitest"
import { PAYMENT_IDENTIFIER } from "@x402/extensions/payment-identifier"
import { CHECKOUT_DISCOVERY } from "../../../codec/BazaarDiscovery.js"
import {
  CHECKOUT_EXTENSIONS,
  encodeHeader,
  GOODS_MIME_TYPE,
  paymentRequiredV1Body,
  paymentRequiredV2,
  paymentResponseHeader,
  requirementV1,
  requirementV2
} from "../../../codec/Wire.js"
import { baseSepolia, DESCRIPTION, RESOURCE, SOLANA_FEE_PAYER, SOLANA_PAYTO, solanaMainnet } from "../x402/fixtures.js"

const options = { resource: RESOURCE, description: DESCRIPTION }
const decode = (header: string) => JSON.parse(Buffer.from(header, "base64").toString("utf8"))

describe("requirementV2 / requirementV1", () => {
  it("v2: the amount as a decimal string, the CAIP-2 network, extra copied", () => {
    const wire = requirementV2(solanaMainnet)
    expect(wire).toEqual({
      scheme: "exact",
      network: "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp",
      asset: "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v",
      amount: "12340000",
      payTo: SOLANA_PAYTO,
      maxTimeoutSeconds: 300,
      extra: { feePayer: SOLANA_FEE_PAYER }
    })
    expect(wire.extra).not.toBe(solanaMainnet.extra)
  })

  it("v1: maxAmountRequired, the v1 network name, the goods' type; resource and description its own unless given", () => {
    expect(requirementV1(baseSepolia)).toEqual({
      scheme: "exact",
      network: "base-sepolia",
      maxAmountRequired: "10000",
      resource: baseSepolia.resource,
      description: baseSepolia.description,
      mimeType: "application/gzip",
      payTo: baseSepolia.payTo,
      maxTimeoutSeconds: 300,
      asset: baseSepolia.asset,
      extra: { name: "USDC", version: "2" }
    })
    expect(requirementV1(baseSepolia, { resource: "https://x.example/c", description: "other" }))
      .toMatchObject({ resource: "https://x.example/c", description: "other" })
    expect(requirementV1(baseSepolia).extra).not.toBe(baseSepolia.extra)
    expect(GOODS_MIME_TYPE).toBe("application/gzip")
  })
})

describe("paymentRequiredV2", () => {
  it("the default error names PAYMENT-SIGNATURE; no extensions key unless extensions are given", () => {
    const required = paymentRequiredV2([baseSepolia], options)
    expect(required.error).toBe("PAYMENT-SIGNATURE header is required")
    expect(required.resource).toEqual({ url: RESOURCE, description: DESCRIPTION, mimeType: "application/gzip" })
    expect("extensions" in required).toBe(false)
    expect(paymentRequiredV2([baseSepolia], { ...options, error: "insufficient_funds" }).error).toBe("insufficient_funds")
  })

  it("declares the checkout's extensions when given: payment-identifier (optional) and bazaar", () => {
    const required = paymentRequiredV2([baseSepolia, solanaMainnet], { ...options, extensions: CHECKOUT_EXTENSIONS })
    expect(required.extensions).toEqual(CHECKOUT_EXTENSIONS)
    expect(required.accepts).toEqual([requirementV2(baseSepolia), requirementV2(solanaMainnet)])
    expect(CHECKOUT_EXTENSIONS[PAYMENT_IDENTIFIER]).toMatchObject({ info: { required: false } })
    expect(CHECKOUT_EXTENSIONS["bazaar"]).toBe(CHECKOUT_DISCOVERY)
  })
})

describe("the extensions a 402 declares (offer-receipt's signed offers ride in both versions)", () => {
  const offers = { "offer-receipt": { info: { offers: [{ format: "jws", signature: "a.b.c" }] } } }

  it("v2 carries the v1 extensions too, and merges them with its own; with neither, no extensions key", () => {
    expect(paymentRequiredV2([baseSepolia], { ...options, v1Extensions: offers }).extensions).toEqual(offers)
    expect(paymentRequiredV2([baseSepolia], { ...options, extensions: CHECKOUT_EXTENSIONS, v1Extensions: offers }).extensions)
      .toEqual({ ...CHECKOUT_EXTENSIONS, ...offers })
    expect("extensions" in paymentRequiredV2([baseSepolia], options)).toBe(false)
  })

  it("v1 carries only the v1 extensions, and has no extensions key without them", () => {
    expect(paymentRequiredV1Body([baseSepolia], { ...options, v1Extensions: offers }).extensions).toEqual(offers)
    expect("extensions" in paymentRequiredV1Body([baseSepolia], { ...options, extensions: CHECKOUT_EXTENSIONS })).toBe(false)
  })

  it("the settlement header carries the extensions given (the signed receipt), and none otherwise", () => {
    const settled = { success: true, transaction: "0xabc", network: "eip155:8453", payer: "0x857b06519E91e3A54538791bDbb0E22373e36b66", errorReason: null }
    const receipt = { "offer-receipt": { info: { receipt: { format: "jws", signature: "r.s.t" } } } }
    for (const version of [1, 2] as const) {
      expect(decode(paymentResponseHeader(settled, version, receipt).value).extensions).toEqual(receipt)
      expect("extensions" in decode(paymentResponseHeader(settled, version).value)).toBe(false)
    }
  })
})

describe("paymentRequiredV1Body", () => {
  it("the default error names X-PAYMENT; the detail only when given; entries with the options' resource", () => {
    const body = paymentRequiredV1Body([baseSepolia], { resource: "https://m.example/c/1", description: "d" })
    expect(body).toEqual({
      x402Version: 1,
      error: "X-PAYMENT header is required",
      accepts: [requirementV1(baseSepolia, { resource: "https://m.example/c/1", description: "d" })]
    })
    expect("detail" in body).toBe(false)
    const refused = paymentRequiredV1Body([baseSepolia], { ...options, error: "invalid_payment", detail: "Sign for 0.01 USDC." })
    expect(refused).toMatchObject({ error: "invalid_payment", detail: "Sign for 0.01 USDC." })
  })
})

describe("encodeHeader", () => {
  it("is base64 of the UTF-8 JSON", () => {
    expect(encodeHeader({ a: "é" })).toBe(Buffer.from(`{"a":"é"}`, "utf8").toString("base64"))
    expect(encodeHeader({ a: "é" })).toBe("eyJhIjoiw6kifQ==")
  })
})

describe("paymentResponseHeader", () => {
  const settled = {
    success: true,
    transaction: "0xabc",
    network: "eip155:8453",
    payer: "0x857b06519E91e3A54538791bDbb0E22373e36b66",
    errorReason: null
  }

  it("v2: PAYMENT-RESPONSE with the CAIP-2 network and no errorReason key on success", () => {
    const header = paymentResponseHeader(settled, 2)
    expect(header.name).toBe("PAYMENT-RESPONSE")
    expect(decode(header.value)).toEqual({ success: true, transaction: "0xabc", network: "eip155:8453", payer: settled.payer })
  })

  it("v1: X-PAYMENT-RESPONSE with the v1 network name; a network without one stays as it is", () => {
    const header = paymentResponseHeader(settled, 1)
    expect(header.name).toBe("X-PAYMENT-RESPONSE")
    expect(decode(header.value)).toMatchObject({ network: "base" })
    expect(decode(paymentResponseHeader({ ...settled, network: "eip155:137" }, 1).value)).toMatchObject({ network: "eip155:137" })
  })

  it("a failed settlement carries an empty transaction and its errorReason", () => {
    const failed = { ...settled, success: false, transaction: null, errorReason: "insufficient_funds" }
    expect(decode(paymentResponseHeader(failed, 2).value)).toEqual({
      success: false,
      transaction: "",
      network: "eip155:8453",
      payer: settled.payer,
      errorReason: "insufficient_funds"
    })
  })
})
