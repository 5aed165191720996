import { HttpClient, HttpClientRequest, type HttpClientResponse, HttpServer } from "@effect/platform"
import { NodeHttpClient } from "@effect/platform-node"
import { ConfigProvider, Effect, Layer, Option } from "effect"
import { ChainsLive } from "../../adapters/chains/ChainsLive.js"
import { ReceiptSignerTest } from "../../adapters/crypto/ReceiptSignerEd25519.js"
import { SecretBoxTest } from "../../adapters/crypto/SecretBoxAesGcm.js"
import { CodeHostIdentityMemory } from "../../adapters/memory/CodeHostIdentityMemory.js"
import { CodeHostMemory, type FakeRepo } from "../../adapters/memory/CodeHostMemory.js"
import { MailerMemory, SentMail } from "../../adapters/memory/MailerMemory.js"
import { RateLimiterMemory } from "../../adapters/memory/RateLimiterMemory.js"
import { WebhookSenderHttp } from "../../adapters/webhook/WebhookSenderHttp.js"
import { HttpLive, type StoragePorts } from "../../app/AppLayer.js"
import { StorageMemory } from "../../adapters/memory/StorageMemory.js"
import { FrontDoorLive } from "../../app/FrontDoor.js"
import { NodeServerWithFrontDoor } from "../../hosts/node/FrontDoorServer.js"
import { PublicOrigin } from "../../ports/PublicOrigin.js"
import { PaymentFacilitatorLive } from "../../adapters/x402/PaymentFacilitatorLive.js"
import { PackagerTarGz } from "../../adapters/packaging/PackagerTarGz.js"
import { WalletProofSiwx } from "../../adapters/x402/WalletProofSiwx.js"

export const BASE_URL = "http://repomarket.test"

/** Repos the fake code host serves in HTTP tests. */
export const PUBLIC_REPO: FakeRepo = {
  owner: "Octo-Org",
  name: "Widget",
  description: "A widget library",
  language: "TypeScript",
  stars: 42,
  topics: ["library"],
  license: "MIT",
  files: { "README.md": "# Widget\n\nHello <script>alert(1)</script>\n", "src/index.ts": "export {}\n" }
}
export const SECOND_REPO: FakeRepo = { owner: "Octo-Org", name: "Gadget", files: { "README.md": "# Gadget" } }
export const FREE_REPO: FakeRepo = { owner: "Octo-Org", name: "free-thing", topics: ["cli"], description: "free" }
export const PRIVATE_TOKEN = ["github", "pat", "test", "only", "0123456789"].join("_")
export const PRIVATE_REPO: FakeRepo = {
  owner: "octo-org",
  name: "secret-sauce",
  isPrivate: true,
  token: PRIVATE_TOKEN,
  files: { "README.md": "# Secret" }
}
export const DEFAULT_REPOS = [PUBLIC_REPO, SECOND_REPO, FREE_REPO, PRIVATE_REPO]

/** Valid addresses (real USDC contract and mint addresses, used here only as well-formed strings). */
export const BASE_WALLET = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"
export const BASE_WALLET_2 = "0x036CbD53842c5426634e7929541eC2318f3dCF7e"
export const SOLANA_WALLET = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"
export const SOLANA_WALLET_2 = "4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU"

/** Ports for HTTP tests: memory storage (or the given storage), fake code host, captured mail. */
export interface TestAppOptions {
  readonly repos?: ReadonlyArray<FakeRepo>
  readonly storage?: Layer.Layer<StoragePorts, unknown>
  /**
   * Settings for config-driven adapters, e.g. `X402_FACILITATOR_URL` for the live checkout, or
   * `WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true"` for webhook receivers on loopback. Unset: the defaults (the
   * webhook sender refuses private and loopback targets).
   */
  readonly config?: Readonly<Record<string, string>>
}

/**
 * Settings every test app starts with unless the test gives its own: the chain readers are off, so no test
 * ever reaches a public RPC endpoint (a test that needs one points it at msw or a loopback server).
 */
export const OFFLINE_SETTINGS: Readonly<Record<string, string>> = { BASE_RPC_URL: "off", SOLANA_RPC_URL: "off" }

export const testPorts = (options: TestAppOptions = {}) => {
  const config = Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries({ ...OFFLINE_SETTINGS, ...options.config }))))
  return Layer.mergeAll(
    options.storage ?? StorageMemory,
    CodeHostMemory(options.repos ?? DEFAULT_REPOS),
    // No OAuth app: the code-host connection answers 503 not_configured, as a server without one does.
    CodeHostIdentityMemory(),
    ChainsLive,
    SecretBoxTest,
    MailerMemory,
    RateLimiterMemory,
    WebhookSenderHttp.pipe(Layer.provide(config)),
    Layer.succeed(PublicOrigin, { baseUrl: BASE_URL }),
    ReceiptSignerTest.pipe(Layer.provide(Layer.succeed(PublicOrigin, { baseUrl: BASE_URL }))),
    PaymentFacilitatorLive.pipe(Layer.provide(config)),
    PackagerTarGz,
    WalletProofSiwx
  )
}

/**
 * The whole HTTP application served as `npm start` serves it: a real Node server on a random loopback port,
 * whose front door answers remembered repo-page JSON and 402 challenges (`responseCacheMs`, default 2000 as
 * `RESPONSE_CACHE_MS`; 0 turns it off), with an HttpClient pointed at it.
 *
 * For a fresh app per describe block, use `layer(TestApp())` (the `layer` export of @effect/vitest), not
 * `it.layer`: @effect/vitest 0.30 writes each layer's methods onto the shared `it`, so a second `it.layer`
 * in the same file becomes a layer nested in the first, sharing its memo map — the same clock, mail,
 * limiter and server, while `CodeHostMemoryControl` then controls a code host the server does not use.
 */
export const TestApp = (options: TestAppOptions & { readonly responseCacheMs?: number } = {}) =>
  HttpLive.pipe(
    // The app's own settings (e.g. PUBLIC_PAGES_PER_MINUTE, SOLANA_RPC_URL for the blockhash endpoint) come
    // from the same map as the adapters', offline unless the test says otherwise.
    Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries({ ...OFFLINE_SETTINGS, ...options.config }))))),
    Layer.provideMerge(testPorts(options)),
    Layer.provideMerge(ServedAsNpmStart(options.responseCacheMs))
  )

/**
 * The serving half of `TestApp`: a real Node server on a random loopback port behind the front door (as
 * `npm start` serves), and an HttpClient pointed at it. For harnesses that assemble their own ports.
 */
export const ServedAsNpmStart = (responseCacheMs?: number) => {
  const cacheConfig = Layer.setConfigProvider(
    ConfigProvider.fromMap(new Map(responseCacheMs === undefined ? [] : [["RESPONSE_CACHE_MS", String(responseCacheMs)]]))
  )
  return HttpServer.layerTestClient.pipe(
    Layer.provide(NodeHttpClient.layerWithoutAgent),
    Layer.provide(NodeHttpClient.makeAgentLayer({ keepAlive: false })),
    Layer.provideMerge(NodeServerWithFrontDoor({ port: 0, host: "127.0.0.1" })),
    Layer.provideMerge(FrontDoorLive.pipe(Layer.provide(cacheConfig)))
  )
}

export interface Reply {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  readonly text: string
  readonly json: any
}

const read = (res: HttpClientResponse.HttpClientResponse) =>
  Effect.map(res.text, (text): Reply => {
    let json: unknown = undefined
    try {
      json = text === "" ? undefined : JSON.parse(text)
    } catch {
      json = undefined
    }
    return { status: res.status, headers: res.headers, text, json }
  })

/** A raw request: status, headers and body as sent, so tests see exactly what a client would. */
export const call = (
  method: "GET" | "POST" | "PATCH" | "DELETE" | "PUT",
  path: string,
  options: { body?: unknown; raw?: string; token?: string; headers?: Record<string, string> } = {}
) =>
  Effect.gen(function*() {
    const client = yield* HttpClient.HttpClient
    let req = HttpClientRequest.make(method)(path)
    if (options.token !== undefined) req = HttpClientRequest.bearerToken(req, options.token)
    if (options.headers) req = HttpClientRequest.setHeaders(req, options.headers)
    if (options.raw !== undefined) {
      req = HttpClientRequest.bodyText(req, options.raw, options.headers?.["content-type"] ?? "application/json")
    } else if (options.body !== undefined) {
      req = yield* HttpClientRequest.bodyJson(req, options.body)
    }
    return yield* Effect.flatMap(client.execute(req), read).pipe(Effect.scoped)
  }).pipe(Effect.orDie)

/** Signs in through the emailed link; returns the session token. */
export const signIn = (email: string) =>
  Effect.gen(function*() {
    const sent = yield* call("POST", "/auth/magic-link", { body: { email } })
    if (sent.status !== 202) throw new Error(`magic link: ${sent.status} ${sent.text}`)
    const mail = Option.getOrThrow(yield* Effect.flatMap(SentMail, (m) => m.last))
    const token = /token=([A-Za-z0-9_%-]+)/.exec(mail.text)![1]!
    const verified = yield* call("POST", "/auth/verify", { body: { token: decodeURIComponent(token) } })
    if (verified.status !== 200) throw new Error(`verify: ${verified.status} ${verified.text}`)
    return verified.json.access_token as string
  })

/** Signs in and creates an API key; returns both credentials. */
export const signInWithKey = (email: string) =>
  Effect.gen(function*() {
    const session = yield* signIn(email)
    const created = yield* call("POST", "/my/keys", { token: session })
    if (created.status !== 201) throw new Error(`create key: ${created.status} ${created.text}`)
    return { session, key: created.json.key as string, keyId: created.json.id as string }
  })

/** The checkout id at the end of a checkout URL. */
export const checkoutIdOf = (url: string) => new URL(url).pathname.split("/")[2]!
