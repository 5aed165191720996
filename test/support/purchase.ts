/*
 * Shared by the purchase tests under test/http/purchase-*.test.ts: a listing to buy, real loopback fetches
 * against the test server (as an x402 client would make them), payments signed by the official x402 client
 * schemes or by hand, and the sale ledger read through its port.
 */
import { HttpServer } from "@effect/platform"
import { expect } from "@effect/vitest"
import type { PaymentRequirements } from "@x402/core/types"
import { authorizationTypes } from "@x402/evm"
import { ExactEvmScheme } from "@x402/evm/exact/client"
import { Clock, ConfigProvider, Context, Duration, Effect, Layer, Logger, Option } from "effect"
import { getAddress, type Hex } from "viem"
import type { PrivateKeyAccount } from "viem/accounts"
import { gunzipSync } from "node:zlib"
import type { AccountId } from "../../domain/Ids.js"
import type { Sale } from "../../domain/Sale.js"
import { HttpLive } from "../../app/AppLayer.js"
import { PaymentFacilitatorLive } from "../../adapters/x402/PaymentFacilitatorLive.js"
import { AccountStore } from "../../ports/AccountStore.js"
import { PaymentFacilitator } from "../../ports/PaymentFacilitator.js"
import { SaleLedger } from "../../ports/SaleLedger.js"
import { BASE_URL, call, ServedAsNpmStart, signInWithKey, type TestAppOptions, testPorts } from "./app.js"

/** Moves the purchase app's clock forward (see `PurchaseApp`). */
export class ClockSkew extends Context.Tag("test/ClockSkew")<ClockSkew, {
  readonly advance: (by: Duration.DurationInput) => Effect.Effect<void>
}>() {}

/**
 * A live clock that `skew` (a `ClockSkew` layer) moves forward: an app set on `clock` (`Layer.setClock`) and
 * merged with `skew` is what `PurchaseApp` and the GitHub tests' `GithubPurchaseApp` run on.
 */
export const skewableClock = () => {
  let skewMs = 0
  const live = Clock.make()
  const clock: Clock.Clock = {
    [Clock.ClockTypeId]: Clock.ClockTypeId,
    unsafeCurrentTimeMillis: () => live.unsafeCurrentTimeMillis() + skewMs,
    unsafeCurrentTimeNanos: () => live.unsafeCurrentTimeNanos() + BigInt(skewMs) * 1_000_000n,
    currentTimeMillis: Effect.sync(() => live.unsafeCurrentTimeMillis() + skewMs),
    currentTimeNanos: Effect.sync(() => live.unsafeCurrentTimeNanos() + BigInt(skewMs) * 1_000_000n),
    sleep: (duration) => live.sleep(duration)
  }
  const skew = Layer.succeed(ClockSkew, { advance: (by) => Effect.sync(() => void (skewMs += Duration.toMillis(by))) })
  return { clock, skew }
}

/**
 * The whole HTTP application as `TestApp` builds it, on a LIVE clock that a test can move forward with
 * `ClockSkew`: signatures stamped from `Date.now()` meet a server at the same time, a settling payment is
 * waited for in real time, and background fibers (the webhook worker polls every 250 ms) sleep for real
 * instead of waking at every TestClock step. Use as `layer(PurchaseApp(), REAL_TIME)`.
 * `overrides` replace ports of `testPorts` (a decorated code host or facilitator).
 */
export const PurchaseApp = <ROut = never>(options: TestAppOptions = {}, overrides?: Layer.Layer<ROut, unknown>) => {
  const { clock, skew } = skewableClock()
  const ports = overrides === undefined ? testPorts(options) : Layer.merge(testPorts(options), overrides)
  return HttpLive.pipe(
    Layer.provideMerge(ports),
    Layer.provideMerge(ServedAsNpmStart()),
    Layer.merge(skew),
    Layer.provide(Layer.setClock(clock)),
    Layer.provide(Logger.remove(Logger.defaultLogger))
  )
}

/** `layer(PurchaseApp(), REAL_TIME)`: no TestClock; the app runs on PurchaseApp's live, skewable clock. */
export const REAL_TIME = { excludeTestServices: true } as const

/** The widget repo as the fake code host serves it (see PUBLIC_REPO): goods are named after its head commit. */
export const WIDGET_FILENAME = "Octo-Org-Widget-0123456.tar.gz"
export const WIDGET_SHA = "0123456789abcdef0123456789abcdef01234567"

/** The test server's own origin, for real fetches over loopback. */
export const origin = Effect.map(HttpServer.HttpServer, (server) => {
  const address = server.address as HttpServer.TcpAddress
  return `http://127.0.0.1:${address.port}`
})

/** An absolute URL the app hands out (on BASE_URL) rewritten to the test server. */
export const local = (url: string) =>
  Effect.map(origin, (o) => {
    expect(url.startsWith(`${BASE_URL}/`), url).toBe(true)
    return o + url.slice(BASE_URL.length)
  })

export const b64 = (value: unknown): string => Buffer.from(JSON.stringify(value), "utf8").toString("base64")
export const unb64 = (value: string | null): any => {
  expect(value, "base64 JSON header").not.toBeNull()
  return JSON.parse(Buffer.from(value!, "base64").toString("utf8"))
}

export interface Selling {
  readonly key: string
  readonly accountId: AccountId
  /** The listing as `POST /repos` answered. */
  readonly listing: any
  /** Live and test checkout URLs on the test server. */
  readonly live: string
  readonly test: string
}

/**
 * Signs up `email`, optionally sets account defaults (`PATCH /my/account`), lists the widget repo with `body`
 * (price, wallets) and returns its checkouts.
 */
export const sell = (email: string, body: Record<string, unknown>, accountDefaults?: Record<string, unknown>) =>
  Effect.gen(function*() {
    const { key } = yield* signInWithKey(email)
    if (accountDefaults !== undefined) {
      const patched = yield* call("PATCH", "/my/account", { token: key, body: accountDefaults })
      expect(patched.status, patched.text).toBe(200)
    }
    const created = yield* call("POST", "/repos", { token: key, body: { host_url: "https://github.com/octo-org/widget", ...body } })
    expect(created.status, created.text).toBe(201)
    const account = Option.getOrThrow(yield* Effect.flatMap(AccountStore, (s) => s.findByEmail(email)))
    return {
      key,
      accountId: account.id,
      listing: created.json,
      live: yield* local(created.json.checkout_url),
      test: yield* local(created.json.test_checkout_url)
    } satisfies Selling
  })

/** A plain fetch, as a client makes it. */
export const get = (url: string, headers: Record<string, string> = {}) => Effect.promise(() => fetch(url, { headers }))

export const bytesOf = (res: Response) => Effect.promise(async () => Buffer.from(await res.arrayBuffer()))

/** The 402 of an unpaid request: the v2 object from PAYMENT-REQUIRED, and the v1 body. */
export const challenge = (url: string) =>
  Effect.gen(function*() {
    const res = yield* get(url)
    const body = yield* Effect.promise(() => res.text())
    expect(res.status, body).toBe(402)
    return { required: unb64(res.headers.get("payment-required")), body: JSON.parse(body) }
  })

/** The files of a tar.gz, path → content (directories left out). */
export const untar = (gz: Uint8Array): Record<string, string> => {
  const tar = gunzipSync(gz)
  const files: Record<string, string> = {}
  const text = (from: number, length: number) => tar.subarray(from, from + length).toString("utf8").replace(/\0.*$/s, "")
  for (let at = 0; at + 512 <= tar.length;) {
    const name = text(at, 100)
    if (name === "") break
    const size = parseInt(text(at + 124, 12), 8)
    const prefix = text(at + 345, 155)
    const path = prefix === "" ? name : `${prefix}/${name}`
    if (tar[at + 156] === "0".charCodeAt(0)) files[path] = tar.subarray(at + 512, at + 512 + size).toString("utf8")
    at += 512 + Math.ceil(size / 512) * 512
  }
  return files
}

/** Asserts a paid (or re-downloaded) response: 200, gzip, the widget's filename; returns its bytes. */
export const expectGoods = (res: Response) =>
  Effect.gen(function*() {
    const bytes = yield* bytesOf(res)
    expect(res.status, bytes.toString("utf8").slice(0, 500)).toBe(200)
    expect(res.headers.get("content-type")).toBe("application/gzip")
    expect(res.headers.get("content-disposition")).toBe(`attachment; filename="${WIDGET_FILENAME}"`)
    return bytes
  })

/** The test twin's goods: a manifest of the tree and a note, never a file of the repo. */
export const expectTestGoods = (bytes: Uint8Array) => {
  const files = untar(bytes)
  const dir = WIDGET_FILENAME.replace(/\.tar\.gz$/, "")
  expect(Object.keys(files).sort()).toEqual([`${dir}/MANIFEST.json`, `${dir}/NOTE.txt`])
  const manifest = JSON.parse(files[`${dir}/MANIFEST.json`]!)
  expect(manifest).toMatchObject({ repo: "Octo-Org/Widget", commit: WIDGET_SHA, truncated: false })
  expect(manifest.entries.map((e: { path: string }) => e.path)).toEqual(["README.md", "src", "src/index.ts"])
  expect(files[`${dir}/NOTE.txt`]).toContain("TEST purchase")
  for (const content of Object.values(files)) {
    expect(content).not.toContain("export {}")
    expect(content).not.toContain("Hello <script>")
  }
  return files
}

/** The `Link: <…>; rel="receipt"` URL of a paid response. */
export const receiptOf = (res: Response): string => {
  const link = res.headers.get("link") ?? ""
  const match = /^<([^>]+)>; rel="receipt"$/.exec(link)
  expect(match, link).not.toBeNull()
  return match![1]!
}

/** Every sale of the account, newest first, through the SaleLedger port. */
export const salesOf = (accountId: AccountId) =>
  Effect.map(Effect.flatMap(SaleLedger, (l) => l.listByAccount(accountId, { limit: 1000 })), (p): ReadonlyArray<Sale> => p.sales)

/** The one sale of the account. */
export const onlySale = (accountId: AccountId) =>
  Effect.map(salesOf(accountId), (sales) => {
    expect(sales).toHaveLength(1)
    return sales[0]!
  })

/** The accepted requirement of a 402, as the official client takes it. */
export const acceptedOf = (required: any, network: string): PaymentRequirements => {
  const accepted = required.accepts.find((a: PaymentRequirements) => a.network === network)
  expect(accepted, `an accepts entry on ${network}`).toBeDefined()
  return accepted
}

/** A v2 PAYMENT-SIGNATURE object around a scheme payload, as @x402/core's client builds it. */
export const paymentSignature = (required: any, accepted: PaymentRequirements, payload: unknown) => ({
  x402Version: 2,
  resource: required.resource,
  accepted,
  payload
})

/** Pays `accepted` with the official @x402/evm exact client scheme; returns the PAYMENT-SIGNATURE object. */
export const signEvm = (buyer: PrivateKeyAccount, required: any, accepted: PaymentRequirements) =>
  Effect.promise(async () => {
    const result = await new ExactEvmScheme(buyer).createPaymentPayload(2, accepted)
    return paymentSignature(required, accepted, result.payload)
  })

export interface AuthorizationTerms {
  readonly to?: string
  readonly value?: bigint
  readonly validAfter?: bigint
  readonly validBefore?: bigint
  /** The EIP-712 domain the buyer signs under (defaults: `accepted`'s network, asset and extra). */
  readonly chainId?: number
  readonly verifyingContract?: string
}

/** An EIP-3009 authorization signed by hand with x402's own types, with terms the official client never picks. */
export const signEvmByHand = (buyer: PrivateKeyAccount, accepted: PaymentRequirements, terms: AuthorizationTerms = {}) =>
  Effect.promise(async () => {
    const now = BigInt(Math.floor(Date.now() / 1000))
    const authorization = {
      from: buyer.address,
      to: getAddress(terms.to ?? accepted.payTo),
      value: terms.value ?? BigInt(accepted.amount),
      validAfter: terms.validAfter ?? 0n,
      validBefore: terms.validBefore ?? now + 600n,
      nonce: `0x${Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("hex")}` as Hex
    }
    const signature = await buyer.signTypedData({
      domain: {
        name: String(accepted.extra?.["name"]),
        version: String(accepted.extra?.["version"]),
        chainId: terms.chainId ?? Number(accepted.network.split(":")[1]),
        verifyingContract: getAddress(terms.verifyingContract ?? accepted.asset)
      },
      types: authorizationTypes,
      primaryType: "TransferWithAuthorization",
      message: authorization
    })
    return {
      signature,
      authorization: {
        ...authorization,
        value: `${authorization.value}`,
        validAfter: `${authorization.validAfter}`,
        validBefore: `${authorization.validBefore}`
      }
    }
  })

/** Sends a payment object in PAYMENT-SIGNATURE (v2). */
export const payWith = (url: string, signature: unknown) => get(url, { "payment-signature": b64(signature) })

/** Asserts an RFC 9457 problem on a fetch response; returns its body. */
export const expectProblemResponse = (res: Response, status: number, code: string) =>
  Effect.promise(async () => {
    const text = await res.text()
    expect({ status: res.status, body: text }).toMatchObject({ status })
    expect(res.headers.get("content-type")).toMatch(/^application\/problem\+json/)
    const problem = JSON.parse(text)
    expect(problem).toMatchObject({ status, code })
    return problem as { code: string; detail: string; page?: string; [k: string]: unknown }
  })

/** A fresh x402 `payment-identifier` id, as @x402/extensions generates them (`pay_` + 32 hex digits). */
export const newPaymentId = () => `pay_${Buffer.from(crypto.getRandomValues(new Uint8Array(16))).toString("hex")}`

/**
 * A v2 PAYMENT-SIGNATURE object carrying the x402 `payment-identifier` extension with `id`, shaped as the
 * official client sends it (the server's declaration echoed, the client's id added to `info`).
 */
export const withPaymentId = <A extends object>(signature: A, id: string): A & { extensions: Record<string, unknown> } => ({
  ...signature,
  extensions: { "payment-identifier": { info: { required: false, id } } }
})

/** The headers that must never come with a refused payment: a receipt link, a settlement receipt. */
export const expectNoGoods = (res: Response) =>
  Effect.gen(function*() {
    const bytes = yield* bytesOf(res)
    expect(res.status, bytes.toString("utf8").slice(0, 300)).not.toBe(200)
    expect(res.headers.get("content-type")).not.toBe("application/gzip")
    expect(res.headers.get("link") ?? "").not.toMatch(/rel="receipt"/)
    expect(res.headers.get("payment-response") ?? "").not.toMatch(/^eyJzdWNjZXNzIjp0cnVl/)
    expect(bytes.toString("utf8")).not.toContain("MANIFEST")
    return { status: res.status, body: bytes.toString("utf8"), headers: res.headers }
  })

/** How often the app asked its test (simulated) facilitator to verify and to settle; see `CountedTestFacilitator`. */
export interface FacilitatorCounts {
  verify: number
  settle: number
  settledAt: number
  verifyDelay: Duration.Duration
  settleDelay: Duration.Duration
}

/**
 * The app's real payment facilitators with the test one counted (and optionally slowed, so copies of a
 * payment overlap a settle). Pass `counts` back to read it; reset it per test with `resetCounts`.
 */
export const CountedTestFacilitator = (counts: FacilitatorCounts) =>
  Layer.effect(
    PaymentFacilitator,
    Effect.map(PaymentFacilitator, (p) => ({
      ...p,
      test: {
        ...p.test,
        verify: (...args: Parameters<typeof p.test.verify>) =>
          Effect.suspend(() => (counts.verify++, Effect.sleep(counts.verifyDelay))).pipe(Effect.zipRight(p.test.verify(...args))),
        settle: (...args: Parameters<typeof p.test.settle>) =>
          Effect.suspend(() => (counts.settle++, Effect.sleep(counts.settleDelay))).pipe(
            Effect.zipRight(p.test.settle(...args)),
            Effect.tap(() => Effect.sync(() => (counts.settledAt = Date.now())))
          )
      }
    }))
  ).pipe(Layer.provide(PaymentFacilitatorLive), Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map()))))

export const newCounts = (): FacilitatorCounts => ({ verify: 0, settle: 0, settledAt: 0, verifyDelay: Duration.zero, settleDelay: Duration.zero })
export const resetCounts = (counts: FacilitatorCounts) => Effect.sync(() => Object.assign(counts, newCounts()))
