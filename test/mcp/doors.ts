/*
 * The two doors a buyer can pay through, behind one interface, so the purchase attack tests run unchanged
 * against both: HTTP (PAYMENT-SIGNATURE on the checkout URL) and MCP (buy_repo over Streamable HTTP with the
 * payment in `_meta["x402/payment"]`, through the official MCP TypeScript client).
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { expect } from "@effect/vitest"
import { x402Client } from "@x402/core/client"
import { ExactEvmScheme } from "@x402/evm/exact/client"
import { Effect } from "effect"
import { fetch as undiciFetch } from "undici"
import type { PrivateKeyAccount } from "viem/accounts"
import { bytesOf, challenge, local, origin, payWith, unb64 } from "../support/purchase.js"

/** What a door answered to a payment, in door-neutral terms. */
export interface Answer {
  /** Goods delivered, x402 payment-required (a refusal with fresh terms), or an RFC 9457 problem. */
  readonly kind: "goods" | "payment_required" | "problem"
  /** payment_required: the x402 `error` (the refusal's reason). */
  readonly error?: string | undefined
  /** payment_required: the fresh `accepts`. */
  readonly accepts?: ReadonlyArray<unknown> | undefined
  /** problem: its status and code. */
  readonly status?: number | undefined
  readonly code?: string | undefined
  /** goods: the receipt link, the settlement object and the archive's bytes. */
  readonly receipt?: string | undefined
  readonly settlement?: any | undefined
  readonly bytes?: Buffer | undefined
  /** Everything the answer carried, as text: a refusal must not hold a receipt link. */
  readonly everything: string
}

/** A way to buy: ask the terms of a checkout, and present a payment object there. */
export interface Door {
  readonly name: "http" | "mcp"
  /** The PaymentRequired (v2) the checkout answers without payment. */
  readonly offer: (checkoutUrl: string) => Effect.Effect<any, never, any>
  /** `payment` presented at `checkoutUrl` (an absolute URL on BASE_URL, as the listing gives it). */
  readonly pay: (checkoutUrl: string, payment: unknown) => Effect.Effect<Answer, never, any>
}

/**
 * The official client's Streamable HTTP transport to the test server's `/mcp`. It fetches with undici's own
 * `fetch`: the live suites' facilitator is msw, which intercepts `globalThis.fetch`, and under its interception
 * the body of a 202 (the answer to `notifications/initialized`) never ends when the client cancels it.
 */
export const mcpTransport = (o: string) =>
  new StreamableHTTPClientTransport(new URL(`${o}/mcp`), { fetch: undiciFetch as unknown as typeof fetch })

/** A tools/call through a fresh official MCP client connected to the test server's `/mcp`. */
export const callTool = (name: string, args: Record<string, unknown>, meta?: Record<string, unknown>) =>
  Effect.flatMap(origin, (o) =>
    Effect.promise(async () => {
      const client = new Client({ name: "repomarket-tests", version: "1.0.0" })
      await client.connect(mcpTransport(o))
      try {
        return (await client.callTool({ name, arguments: args, ...(meta === undefined ? {} : { _meta: meta }) })) as any
      } finally {
        await client.close()
      }
    }))

/**
 * buy_repo paid as an x402 MCP client pays: the payment-required answer, then the same call with the official
 * x402 client's payment for it in `_meta["x402/payment"]` (asking for the archive to be embedded).
 */
export const payThroughMcp = (checkoutUrl: string, buyer: PrivateKeyAccount) =>
  Effect.gen(function*() {
    const required = (yield* callTool("buy_repo", { checkout_url: checkoutUrl })).structuredContent
    const payment = yield* Effect.promise(() => new x402Client().register("eip155:*", new ExactEvmScheme(buyer)).createPaymentPayload(required))
    const paid = yield* callTool("buy_repo", { checkout_url: checkoutUrl, include_archive: true }, { "x402/payment": payment })
    return { required, payment, paid }
  })

/** The embedded archive of a tool result, if any. */
export const embeddedArchive = (result: any): Buffer | undefined => {
  const resource = (result.content as Array<any>).find((c) => c.type === "resource")
  return resource === undefined ? undefined : Buffer.from(resource.resource.blob, "base64")
}

export const httpDoor: Door = {
  name: "http",
  offer: (url) => Effect.map(Effect.flatMap(local(url), challenge), (c) => c.required),
  pay: (url, payment) =>
    Effect.gen(function*() {
      const res = yield* payWith(yield* local(url), payment)
      const bytes = yield* bytesOf(res)
      const headers = [...res.headers.entries()].map(([k, v]) => `${k}: ${v}`).join("\n")
      const everything = `${headers}\n${bytes.toString("utf8")}`
      if (res.status === 200) {
        const link = /^<([^>]+)>; rel="receipt"$/.exec(res.headers.get("link") ?? "")
        return { kind: "goods", receipt: link?.[1], settlement: unb64(res.headers.get("payment-response")), bytes, everything } satisfies Answer
      }
      if (res.status === 402) {
        const required = unb64(res.headers.get("payment-required"))
        return { kind: "payment_required", error: required.error, accepts: required.accepts, everything } satisfies Answer
      }
      const problem = JSON.parse(bytes.toString("utf8"))
      return { kind: "problem", status: problem.status, code: problem.code, everything } satisfies Answer
    })
}

export const mcpDoor: Door = {
  name: "mcp",
  offer: (url) =>
    Effect.map(callTool("buy_repo", { checkout_url: url }), (result) => {
      expect(result.isError, JSON.stringify(result)).toBe(true)
      return result.structuredContent
    }),
  pay: (url, payment) =>
    Effect.map(callTool("buy_repo", { checkout_url: url, include_archive: true }, { "x402/payment": payment }), (result): Answer => {
      const everything = JSON.stringify(result)
      const s = result.structuredContent ?? {}
      if (result.isError !== true) {
        return { kind: "goods", receipt: s.receipt, settlement: result._meta?.["x402/payment-response"], bytes: embeddedArchive(result), everything }
      }
      if (s.x402Version === 2) return { kind: "payment_required", error: s.error, accepts: s.accepts, everything }
      return { kind: "problem", status: s.status, code: s.code, everything }
    })
}
