/*
 * The facilitator client against a real loopback HTTP server (not msw, which has no sockets to reuse): what
 * happens when a kept-alive connection is reset under a request.
 */
import { createServer, type Server } from "node:http"
import type { AddressInfo, Socket } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import { makeFacilitatorHttp } from "../../../adapters/x402/FacilitatorHttp.js"
import { decodePaymentHeader } from "../../../codec/Wire.js"
import type { SubmittedPayment } from "../../../ports/PaymentFacilitator.js"
import { b64, baseSepolia, specPayloadV2 } from "./fixtures.js"

const PAYER = "0x857b06519E91e3A54538791bDbb0E22373e36b66"
const TX = "0x1234567890abcdef1234567890abcdef1234567890abcdef1234567890abcdef"
const payment: SubmittedPayment = Either.getOrThrow(decodePaymentHeader({ "payment-signature": b64(specPayloadV2()) }))

/** Every request's path, in order; and whether the second request on a connection resets it unanswered. */
const seen: Array<string> = []
let resetSecondOnConnection = false
const perSocket = new WeakMap<Socket, number>()
let server: Server
let url = ""
let connections = 0

beforeAll(async () => {
  server = createServer((req, res) => {
    const n = (perSocket.get(req.socket) ?? 0) + 1
    perSocket.set(req.socket, n)
    seen.push(req.url ?? "")
    // As a server that closed the idle connection just as the request arrived.
    if (resetSecondOnConnection && n === 2) return void req.socket.resetAndDestroy()
    req.resume()
    req.on("end", () => {
      res.setHeader("content-type", "application/json")
      res.end(JSON.stringify(req.url === "/x402/verify"
        ? { isValid: true, payer: PAYER }
        : { success: true, transaction: TX, network: "eip155:84532", payer: PAYER }))
    })
  })
  server.on("connection", () => connections++)
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/x402`
})
afterAll(() => new Promise<void>((resolve) => {
  server.closeAllConnections()
  server.close(() => resolve())
}))

/** A new client, with the server's record cleared and its resetting of second requests on or off. */
const freshFacilitator = (resetSecond: boolean) => {
  seen.length = 0
  resetSecondOnConnection = resetSecond
  return Effect.map(makeFacilitatorHttp(url), (f) => f.facilitator)
}

describe("FacilitatorHttp on a kept-alive connection that is reset", () => {
  it.effect("a verify is sent once more on a new connection and answered", () =>
    Effect.gen(function*() {
      const facilitator = yield* freshFacilitator(true)
      expect((yield* facilitator.verify(payment, baseSepolia)).valid).toBe(true)
      // The second verify goes out on the kept-alive connection, which the server resets: sent again.
      expect((yield* facilitator.verify(payment, baseSepolia)).valid).toBe(true)
      expect(seen).toEqual(["/x402/verify", "/x402/verify", "/x402/verify"])
    }))

  it.effect("the resend takes a connection of its own, not another pooled one that may be as dead", () =>
    Effect.gen(function*() {
      const facilitator = yield* freshFacilitator(true)
      // Two at once: two kept-alive connections in the pool, each to be reset at its next request.
      yield* Effect.all([facilitator.verify(payment, baseSepolia), facilitator.verify(payment, baseSepolia)], { concurrency: 2 })
      const before = connections
      expect((yield* facilitator.verify(payment, baseSepolia)).valid).toBe(true)
      expect(seen).toHaveLength(4)
      expect(connections - before).toBe(1)
    }))

  it.effect("a settle is never sent twice: no answer, so the sale stays pending", () =>
    Effect.gen(function*() {
      const facilitator = yield* freshFacilitator(true)
      expect((yield* facilitator.settle(payment, baseSepolia)).transaction).toBe(TX)
      const e = yield* Effect.flip(facilitator.settle(payment, baseSepolia))
      expect(e).toMatchObject({ _tag: "FacilitatorError", reason: "unreachable" })
      expect(seen).toEqual(["/x402/settle", "/x402/settle"])
    }))

  it.effect("without a reset, one connection carries every call", () =>
    Effect.gen(function*() {
      const before = connections
      const facilitator = yield* freshFacilitator(false)
      for (let i = 0; i < 3; i++) expect((yield* facilitator.verify(payment, baseSepolia)).valid).toBe(true)
      expect((yield* facilitator.settle(payment, baseSepolia)).success).toBe(true)
      expect(seen).toEqual(["/x402/verify", "/x402/verify", "/x402/verify", "/x402/settle"])
      expect(connections - before).toBe(1)
    }))
})
