/*
 * On Lambda the client is the event's requestContext.http.sourceIp; an IPv6 client is counted by its /64
 * there too (a fresh address of its /64 for each try does not escape a limit), and an IPv4 address written
 * as IPv6 counts with that IPv4 address. The limit used: sign-in links, 20 an hour per client.
 */
import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { REAL_TIME } from "../support/purchase.js"
import { expectProblemResult, httpEvent, invoke, LambdaTest } from "./support.js"

const PER_HOUR = 20
let n = 0
const ask = (sourceIp: string) =>
  invoke(httpEvent("POST", "/auth/magic-link", { json: { email: `ipv6-${n++}@example.com` }, sourceIp }))

describe("Lambda handler: an IPv6 sourceIp is counted by its /64", () => {
  layer(LambdaTest(), REAL_TIME)((it) => {
    it.effect("sign-in links from one /64, each from a new sourceIp, are 429 after 20; another /64 is not limited", () =>
      Effect.gen(function*() {
        for (let i = 0; i < PER_HOUR; i++) {
          const sent = yield* ask(`2001:db8:aa:bb:${(i + 1).toString(16)}::${(i * 31 + 7).toString(16)}`)
          expect(sent.statusCode, sent.body).toBe(202)
        }
        const refused = expectProblemResult(yield* ask("2001:db8:aa:bb:ffff:ffff:ffff:fffe"), 429, "rate_limited")
        expect(refused.detail).toBeTruthy()
        expectProblemResult(yield* ask("2001:DB8:AA:BB::1"), 429, "rate_limited")
        const other = yield* ask("2001:db8:aa:bc::1")
        expect(other.statusCode, other.body).toBe(202)
      }))
  })

  layer(LambdaTest(), REAL_TIME)((it) => {
    it.effect("a sourceIp of ::ffff:198.51.100.7 counts with 198.51.100.7", () =>
      Effect.gen(function*() {
        for (let i = 0; i < PER_HOUR; i++) {
          const sent = yield* ask(i % 2 === 0 ? "198.51.100.7" : "::ffff:198.51.100.7")
          expect(sent.statusCode, sent.body).toBe(202)
        }
        expectProblemResult(yield* ask("::ffff:c633:6407"), 429, "rate_limited")
        expectProblemResult(yield* ask("198.51.100.7"), 429, "rate_limited")
      }))
  })
})
