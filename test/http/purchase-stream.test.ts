import { createHash } from "node:crypto"
import { afterAll, beforeAll, expect, layer } from "@effect/vitest"
import { Effect, Layer, Stream } from "effect"
import { http, HttpResponse } from "msw"
import { setupServer } from "msw/node"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { CodeHostMemory } from "../../adapters/memory/CodeHostMemory.js"
import { CodeHost } from "../../ports/CodeHost.js"
import { BASE_WALLET, DEFAULT_REPOS } from "../support/app.js"
import { acceptedOf, challenge, onlySale, payWith, PurchaseApp, REAL_TIME, sell, signEvm } from "../support/purchase.js"

/*
 * The goods are streamed: the buyer gets the headers and the first bytes of the archive while the code host
 * has not yet produced the rest. A server that buffered the archive could not answer before the gate opens.
 * (The first live 402 had the code host cut the commit's archive, so the digest is known ahead of the bytes;
 * the delivery itself still streams what the code host sends, checked against that digest.)
 * (Memory use for a 1 GiB archive through the GitHub adapter is measured by bench/archive-stream.ts.)
 */

const FACILITATOR = "https://facilitator.test"
const TX = "0x1111111111111111111111111111111111111111111111111111111111111111"
const facilitator = setupServer(
  http.post(`${FACILITATOR}/verify`, () => HttpResponse.json({ isValid: true })),
  http.post(`${FACILITATOR}/settle`, () => HttpResponse.json({ success: true, transaction: TX, network: "eip155:8453" }))
)
beforeAll(() => facilitator.listen({ onUnhandledRequest: "bypass" }))
afterAll(() => facilitator.close())

let open: () => void = () => {}
const gate = new Promise<void>((resolve) => (open = resolve))
let emitted = 0

/** The in-memory code host, except that its archive stops after the first chunk until the gate opens. */
const GatedCodeHost = Layer.effect(
  CodeHost,
  Effect.map(CodeHost, (host) => ({
    ...host,
    archive: (...args: Parameters<typeof host.archive>) =>
      host.archive(...args).pipe(
        Stream.zipWithIndex,
        Stream.mapEffect(([chunk, i]) => (i === 0 ? Effect.succeed(chunk) : Effect.as(Effect.promise(() => gate), chunk))),
        Stream.tap(() => Effect.sync(() => emitted++))
      )
  }))
).pipe(Layer.provide(CodeHostMemory(DEFAULT_REPOS)))

const StreamApp = PurchaseApp({ config: { X402_FACILITATOR_URL: FACILITATOR } }, GatedCodeHost)

/** A promise that gives up after `ms`. */
const within = <A>(ms: number, promise: Promise<A>) =>
  Promise.race([promise, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms))])

layer(StreamApp, REAL_TIME)("the paid archive is streamed", (it) => {
  it.effect("headers and the first chunk reach the buyer before the code host has produced the rest", () =>
    Effect.gen(function*() {
      const seller = yield* sell("stream@example.com", { price_usd: "0.75", wallet_base: BASE_WALLET })
      const { required } = yield* challenge(seller.live)
      const signature = yield* signEvm(privateKeyToAccount(generatePrivateKey()), required, acceptedOf(required, "eip155:8453"))

      const res = yield* Effect.promise(() => within(5_000, Effect.runPromise(payWith(seller.live, signature))))
      expect(res.status).toBe(200)
      expect(res.headers.get("content-type")).toBe("application/gzip")
      // Streamed, yet its length is known ahead: the bytes are checked against the digest that names it.
      const length = Number(res.headers.get("content-length"))
      // The 402 had the commit's archive cut (the code host's own cut, not this gated download): even the first
      // delivery names its digest ahead of its bytes.
      const digest = res.headers.get("repr-digest")
      expect(digest).toMatch(/^sha-256=:[A-Za-z0-9+/]{43}=:$/)
      const reader = res.body!.getReader()
      const first = yield* Effect.promise(() => within(5_000, reader.read()))
      expect(new TextDecoder().decode(first.value)).toBe("0123456 README.md\n# Widget\n\nHello <script>alert(1)</script>\n\n")
      // The sale was settled before any byte left, and the rest of the archive is still held by the gate.
      expect(yield* onlySale(seller.accountId)).toMatchObject({ status: "settled", livemode: true, transaction: TX })
      expect(emitted).toBe(1)

      open()
      let rest = ""
      for (let r = yield* Effect.promise(() => reader.read()); !r.done; r = yield* Effect.promise(() => reader.read())) {
        rest += new TextDecoder().decode(r.value)
      }
      expect(rest).toBe("0123456 src/index.ts\nexport {}\n\n")
      const whole = Buffer.concat([Buffer.from(first.value!), Buffer.from(rest, "utf8")])
      expect(digest).toBe(`sha-256=:${createHash("sha256").update(whole).digest("base64")}:`)
      expect(length).toBe(whole.length)
    }))
})
