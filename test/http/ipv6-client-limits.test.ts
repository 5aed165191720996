/*
 * Per-client limits count an IPv6 client by its /64: whoever holds one address of a /64 holds all 2^64 of
 * them, and a limit per address would let it take a fresh one for every try. An IPv4 address written as
 * IPv6 counts with that IPv4 address. Driven through the Node host behind a trusted proxy (TRUSTED_PROXIES),
 * the forwarded client address being what a balancer would append to X-Forwarded-For.
 */
import { describe, expect, it, layer } from "@effect/vitest"
import { Effect } from "effect"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { clientKey } from "../../app/handlers/ClientAddress.js"
import { BASE_WALLET, TestApp } from "../support/app.js"
import {
  acceptedOf,
  challenge,
  expectNoGoods,
  expectProblemResponse,
  get,
  paymentSignature,
  REAL_TIME,
  sell,
  signEvmByHand
} from "../support/purchase.js"

const SEPOLIA = "eip155:84532"
/** The test checkout's payment-attempt limit (domain/usecases/Purchases.ts: PAYMENT_ATTEMPTS_PER_MINUTE). */
const PER_MINUTE = 60

const BehindBalancer = () => TestApp({ config: { TRUSTED_PROXIES: "127.0.0.1, ::1" } })

/** A payment whose signature is junk: refused by the service itself (402), and counted as an attempt. */
const junkPayment = Effect.gen(function*() {
  const seller = yield* sell("ipv6-limits@example.com", { price_usd: "0.75", wallet_base: BASE_WALLET })
  const { required } = yield* challenge(seller.test)
  const accepted = acceptedOf(required, SEPOLIA)
  const payload = { ...(yield* signEvmByHand(privateKeyToAccount(generatePrivateKey()), accepted)), signature: `0x${"44".repeat(65)}` }
  const header = Buffer.from(JSON.stringify(paymentSignature(required, accepted, payload)), "utf8").toString("base64")
  /** Presents the junk payment as the client the balancer names; answers the status (429 checked as a problem). */
  return (client: string) =>
    Effect.gen(function*() {
      const res = yield* get(seller.test, { "payment-signature": header, "x-forwarded-for": client })
      if (res.status === 429) yield* expectProblemResponse(res, 429, "rate_limited")
      else yield* expectNoGoods(res)
      return res.status
    })
})

describe("per-client limits: an IPv6 client is counted by its /64", () => {
  layer(BehindBalancer(), REAL_TIME)((it) => {
    it.effect("150 junk payments from one /64, each from a new address, are 429 after 60; another /64 is unaffected", () =>
      Effect.gen(function*() {
        const pay = yield* junkPayment
        const statuses: Array<number> = []
        for (let i = 0; i < 150; i++) {
          // A new interface identifier each time, in the spellings a client or balancer might use.
          const host = ((i * 7919 + 1) & 0xffff).toString(16)
          const spellings = [`2001:db8:1:2::${host}`, `2001:DB8:1:2:0:0:0:${host}`, `2001:0db8:0001:0002:${host}:1:2:3`]
          statuses.push(yield* pay(spellings[i % spellings.length]!))
        }
        expect(statuses.slice(0, PER_MINUTE)).toEqual(Array(PER_MINUTE).fill(402))
        expect(statuses.slice(PER_MINUTE)).toEqual(Array(150 - PER_MINUTE).fill(429))
        // The next /64 over (2001:db8:1:3::/64) is someone else.
        expect(yield* pay("2001:db8:1:3::1")).toBe(402)
        expect(yield* pay("2001:db8:1:3:ffff:ffff:ffff:ffff")).toBe(402)
      }))
  })

  layer(BehindBalancer(), REAL_TIME)((it) => {
    it.effect("an IPv4 address written as IPv6 (::ffff:…, dotted or hex) counts with that IPv4 address", () =>
      Effect.gen(function*() {
        const pay = yield* junkPayment
        // 198.51.100.9 is c633:6409 in hex.
        const spellings = ["198.51.100.9", "::ffff:c633:6409", "::FFFF:198.51.100.9", "0:0:0:0:0:ffff:c633:6409"]
        const statuses: Array<number> = []
        for (let i = 0; i < PER_MINUTE; i++) statuses.push(yield* pay(spellings[i % spellings.length]!))
        expect(statuses).toEqual(Array(PER_MINUTE).fill(402))
        for (const spelling of spellings) expect(yield* pay(spelling), spelling).toBe(429)
        // Its neighbour is another client.
        expect(yield* pay("::ffff:c633:640a")).toBe(402)
      }))
  })
})

describe("clientKey", () => {
  it("keys IPv4 as it is, IPv6 by its /64 in one spelling, IPv4-mapped IPv6 as IPv4, anything else unchanged", () => {
    const cases: ReadonlyArray<readonly [string, string]> = [
      ["203.0.113.7", "203.0.113.7"],
      ["2001:db8:1:2::1", "2001:db8:1:2::/64"],
      ["2001:DB8:1:2:AAAA:BBBB:CCCC:DDDD", "2001:db8:1:2::/64"],
      ["2001:0db8:0001:0002:0000:0000:0000:0001", "2001:db8:1:2::/64"],
      ["2001:db8:1:2::1.2.3.4", "2001:db8:1:2::/64"],
      ["2001:db8:0:0:1::", "2001:db8::/64"],
      ["2001:db8::", "2001:db8::/64"],
      ["2001:db8:0:1::", "2001:db8:0:1::/64"],
      ["0:0:0:1::5", "0:0:0:1::/64"],
      ["[2001:db8:1:2::1]", "2001:db8:1:2::/64"],
      ["fe80::1%eth0", "fe80::/64"],
      ["FE80::abcd%25", "fe80::/64"],
      ["::1", "::/64"],
      ["::", "::/64"],
      ["::ffff:198.51.100.9", "198.51.100.9"],
      ["::FFFF:198.51.100.9", "198.51.100.9"],
      ["::ffff:c633:6409", "198.51.100.9"],
      ["0:0:0:0:0:ffff:c633:6409", "198.51.100.9"],
      ["0000:0000:0000:0000:0000:FFFF:C633:6409", "198.51.100.9"],
      ["[::ffff:10.0.0.1]", "10.0.0.1"],
      // Not IPv4-mapped: the IPv4-compatible and NAT64 forms are IPv6 like any other.
      ["::198.51.100.9", "::/64"],
      ["64:ff9b::198.51.100.9", "64:ff9b::/64"],
      ["unknown", "unknown"],
      ["01.2.3.4", "01.2.3.4"],
      ["2001:db8::g", "2001:db8::g"],
      ["", ""]
    ]
    for (const [address, key] of cases) expect(clientKey(address), address).toBe(key)
  })
})
