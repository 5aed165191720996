import { describe, expect, layer } from "@effect/vitest"
import { Context, Effect, Fiber, Layer } from "effect"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import type { FakeRepo } from "../../adapters/memory/CodeHostMemory.js"
import { StorageMemory } from "../../adapters/memory/StorageMemory.js"
import type { StoragePorts } from "../../app/AppLayer.js"
import { ListingCatalog } from "../../ports/ListingCatalog.js"
import { ListingStore } from "../../ports/ListingStore.js"
import { StorageError } from "../../ports/StorageError.js"
import { BASE_URL, BASE_WALLET, call, DEFAULT_REPOS, signInWithKey, TestApp } from "../support/app.js"
import { callFrom } from "../support/clients.js"
import { heldCatalog, waitUntil } from "../support/heldCatalog.js"
import { origin, PurchaseApp, REAL_TIME, sell } from "../support/purchase.js"
import { callTool, embeddedArchive, payThroughMcp } from "./doors.js"

/*
 * Issue 39, "one MCP request stalls the server": what one POST /mcp may cost. An attacker lists their own public
 * repo (a long README, 5 000 files) and asks for it 100 times in one JSON-RPC batch; before, the answer was
 * every page twice over (text and structuredContent), hundreds of MB held as one string. Now a batch is refused
 * (MCP 2025-06-18 has none; a 2025-03-26 client may send at most 4), a get_repo result carries the page once
 * with a trimmed README and tree and a link to the whole page, the tools share the HTTP door's per-client
 * budget and catalog gate, and a storage failure is the HTTP problem, not a JSON-RPC -32603.
 */

const README = `# Big\n\n${"All work and no play makes a large README. ".repeat(5_000)}\nTHE-END-OF-THE-README\n`
const BIG: FakeRepo = {
  owner: "Mallory",
  name: "Big",
  description: "An attacker's own public repo",
  files: {
    "README.md": README,
    ...Object.fromEntries(Array.from({ length: 5_000 }, (_, i) => [`src/d${i % 50}/file-${i}.ts`, "export {}\n"]))
  }
}
const REPOS = [...DEFAULT_REPOS, BIG]

/** A POST /mcp as any HTTP client (or attacker) sends it: no initialize, no MCP client. */
const mcpPost = (body: unknown, headers: Record<string, string> = {}) =>
  Effect.flatMap(origin, (o) =>
    Effect.promise(async () => {
      const res = await fetch(`${o}/mcp`, {
        method: "POST",
        headers: { accept: "application/json, text/event-stream", "content-type": "application/json", ...headers },
        body: JSON.stringify(body)
      })
      const text = await res.text()
      return { status: res.status, bytes: Buffer.byteLength(text), json: text === "" ? undefined : JSON.parse(text) as any }
    }))

const toolCall = (name: string, args: Record<string, unknown>, id = 1) => ({ jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: args } })

const getRepoCall = (id: number, repo = "mallory/big") => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: { name: "get_repo", arguments: { repo } }
})

const KiB = 1024

/**
 * The attacker's large repo listed for sale, once per app: each test that reads it calls this first (201 the first
 * time, 409 after), so the tests hold in any order.
 */
const bigListed = Effect.gen(function*() {
  const { key } = yield* signInWithKey("big-seller@example.com")
  const listed = yield* call("POST", "/repos", { token: key, body: { host_url: "https://github.com/mallory/big", price_usd: "1.00", wallet_base: BASE_WALLET } })
  expect([201, 409], listed.text).toContain(listed.status)
})

layer(PurchaseApp({ repos: REPOS }), REAL_TIME)("one MCP request costs a bounded amount", (it) => {
  it.effect("a batch of 100 get_repo of a large repo is refused at once, small, whatever the protocol version says", () =>
    Effect.gen(function*() {
      yield* bigListed
      const batch = Array.from({ length: 100 }, (_, i) => getRepoCall(i + 1))
      expect(Buffer.byteLength(JSON.stringify(batch))).toBeLessThan(16 * KiB)

      for (const headers of [{ "mcp-protocol-version": "2025-06-18" }, { "mcp-protocol-version": "2025-11-25" }, { "mcp-protocol-version": "2025-03-26" }, {}]) {
        const answer = yield* mcpPost(batch, headers)
        expect({ status: answer.status, code: answer.json?.error?.code, id: answer.json?.id }).toEqual({ status: 400, code: -32600, id: null })
        expect(answer.bytes).toBeLessThan(KiB)
      }
      // MCP 2025-06-18 and later have no batches at all: even a batch of two is refused.
      const two = yield* mcpPost([getRepoCall(1), getRepoCall(2)], { "mcp-protocol-version": "2025-06-18" })
      expect({ status: two.status, code: two.json?.error?.code }).toEqual({ status: 400, code: -32600 })
      expect(two.json.error.message).toContain("2025-06-18")
    }))

  it.effect("a 2025-03-26 client's batch of 4 get_repo answers each page once, trimmed, the whole answer bounded", () =>
    Effect.gen(function*() {
      yield* bigListed
      const answer = yield* mcpPost([1, 2, 3, 4].map((i) => getRepoCall(i)), { "mcp-protocol-version": "2025-03-26" })
      expect(answer.status).toBe(200)
      expect(answer.json).toHaveLength(4)
      // Four pages of a 200 KiB README and a 5 000-entry tree: a few KiB each, not MB.
      expect(answer.bytes).toBeLessThan(4 * 64 * KiB)
      for (const reply of answer.json) {
        expect(reply.error).toBeUndefined()
        const result = reply.result
        expect(result.isError).not.toBe(true)
        expect(result.structuredContent).toMatchObject({ repo: "Mallory/Big", readme: { truncated: true }, tree: { truncated: true } })
      }
    }))

  it.effect("a get_repo result carries the page once: a README preview without its HTML, part of the tree, a link to the whole page", () =>
    Effect.gen(function*() {
      yield* bigListed
      const result = yield* callTool("get_repo", { repo: "mallory/big" })
      const text = JSON.stringify(result)
      expect(result.isError).not.toBe(true)
      expect(Buffer.byteLength(text)).toBeLessThan(64 * KiB)

      const page = result.structuredContent
      expect(README.startsWith(page.readme.markdown)).toBe(true)
      expect(Buffer.byteLength(page.readme.markdown)).toBeLessThanOrEqual(16 * KiB)
      expect(page.readme).toEqual({ path: "README.md", markdown: page.readme.markdown, truncated: true })
      expect(text).not.toContain("THE-END-OF-THE-README")
      expect(page.tree.truncated).toBe(true)
      expect(page.tree.entries.length).toBeGreaterThan(10)
      expect(page.tree.entries.length).toBeLessThan(5_000)
      // Once: the README's first line appears in the structured content only, not again as text.
      expect(text.split("All work and no play").length - 1).toBe(page.readme.markdown.split("All work and no play").length - 1)

      const pageUrl = `${BASE_URL}/r/Mallory/Big`
      expect(page.page_url).toBe(pageUrl)
      expect(result.content).toContainEqual(expect.objectContaining({ type: "resource_link", uri: pageUrl, mimeType: "application/json" }))
      expect(result.content[0].type).toBe("text")
      expect(result.content[0].text).toContain(pageUrl)
      expect(Buffer.byteLength(result.content[0].text)).toBeLessThan(2 * KiB)

      // The whole page is where the link says.
      const whole = yield* call("GET", "/r/Mallory/Big", { headers: { accept: "application/json" } })
      expect(whole.status).toBe(200)
      expect(whole.json.readme.markdown).toBe(README)
      expect(whole.json.tree.entries.length).toBeGreaterThan(5_000)
    }))

  it.effect("a small repo's page comes whole: README and tree not truncated", () =>
    Effect.gen(function*() {
      yield* sell("widget-seller@example.com", { price_usd: "0.50", wallet_base: BASE_WALLET })
      const result = yield* callTool("get_repo", { repo: "octo-org/widget" })
      expect(result.structuredContent.readme).toMatchObject({ path: "README.md", truncated: false })
      expect(result.structuredContent.tree).toEqual({ entries: expect.any(Array), truncated: false })
      expect(result.structuredContent.tree.entries.map((e: { path: string }) => e.path)).toEqual(["README.md", "src", "src/index.ts"])
    }))

  it.effect("one answer embeds one archive: a batch of two redownloads of a purchase embeds it once, the other links the receipt", () =>
    Effect.gen(function*() {
      const seller = yield* sell("gadget-seller@example.com", { host_url: "https://github.com/octo-org/gadget", price_usd: "0.70", wallet_base: BASE_WALLET })
      const { paid } = yield* payThroughMcp(seller.listing.test_checkout_url, privateKeyToAccount(generatePrivateKey()))
      expect(paid.structuredContent.archive_embedded).toBe(true)
      const receipt: string = paid.structuredContent.receipt

      const answer = yield* mcpPost([1, 2].map((id) => toolCall("redownload", { receipt }, id)), { "mcp-protocol-version": "2025-03-26" })
      expect(answer.status).toBe(200)
      const results = answer.json.map((r: any) => r.result)
      // (Two: a purchase downloads at most twice at once.)
      expect(results.map((r: any) => r.isError === true)).toEqual([false, false])
      expect(results.filter((r: any) => embeddedArchive(r) !== undefined)).toHaveLength(1)
      for (const r of results.filter((r: any) => embeddedArchive(r) === undefined)) {
        expect(r.structuredContent).toMatchObject({ receipt, archive_embedded: false })
        expect(r.content).toContainEqual(expect.objectContaining({ type: "resource_link", uri: receipt }))
      }
    }))
})

/** A tools/call POSTed from another client address (127.0.0.x), as a stateless MCP client sends it. */
const mcpFrom = (address: string, body: unknown) =>
  callFrom(address, "POST", "/mcp", { body, headers: { accept: "application/json, text/event-stream" } })

layer(PurchaseApp({ config: { PUBLIC_PAGES_PER_MINUTE: "5" } }), REAL_TIME)("MCP and HTTP spend one public-pages budget per client", (it) => {
  it.effect("spent through one door, refused at the other, both ways; a 2025-03-26 batch counts each call as it runs", () =>
    Effect.gen(function*() {
      yield* sell("budget-seller@example.com", { price_usd: "0.50", wallet_base: BASE_WALLET })
      const json = { accept: "application/json" }

      // Through MCP: a text search (4 page views) and a preview (1) spend the 5; HTTP from that address is 429.
      expect((yield* mcpFrom("127.0.0.2", toolCall("search_listings", { q: "widget" }))).json.result.isError).not.toBe(true)
      expect((yield* mcpFrom("127.0.0.2", toolCall("get_repo", { repo: "octo-org/widget" }))).json.result.isError).not.toBe(true)
      expect((yield* callFrom("127.0.0.2", "GET", "/listings", { headers: json })).status).toBe(429)
      expect((yield* callFrom("127.0.0.2", "GET", "/r/octo-org/widget?b", { headers: json })).status).toBe(429)

      // Through HTTP: the same, the other way.
      expect((yield* callFrom("127.0.0.3", "GET", "/listings?q=widget", { headers: json })).status).toBe(200)
      expect((yield* callFrom("127.0.0.3", "GET", "/r/octo-org/widget?c", { headers: json })).status).toBe(200)
      for (const [name, args] of [["get_repo", { repo: "octo-org/widget" }], ["search_listings", {}]] as const) {
        const refused = (yield* mcpFrom("127.0.0.3", toolCall(name, args))).json.result
        expect(refused).toMatchObject({ isError: true, structuredContent: { status: 429, code: "rate_limited" } })
        expect(refused.structuredContent.retry_after_seconds).toBeGreaterThan(0)
      }

      // A batch of four previews: four page views, counted one by one; the fifth view is the last that fits.
      const batch = yield* mcpFrom("127.0.0.4", [1, 2, 3, 4].map((id) => toolCall("get_repo", { repo: "octo-org/widget" }, id)))
      expect(batch.json.map((r: any) => r.result.isError === true)).toEqual([false, false, false, false])
      expect((yield* callFrom("127.0.0.4", "GET", "/r/octo-org/widget?d", { headers: json })).status).toBe(200)
      expect((yield* callFrom("127.0.0.4", "GET", "/r/octo-org/widget?e", { headers: json })).status).toBe(429)
    }))
})

const held = heldCatalog()

describe("MCP and HTTP share the process's one catalog gate", () => {
  // Two slots, no queue: a third catalog read, through either door, is 503 search_busy at once.
  layer(TestApp({ storage: held.storage, config: { CATALOG_CONCURRENCY: "2", CATALOG_QUEUE_MS: "0" } }))((it) => {
    it.effect("two HTTP searches hold the slots: an MCP search is search_busy, and the other way round", () =>
      Effect.gen(function*() {
        const json = { accept: "application/json" }
        // HTTP holds both slots.
        const a = yield* Effect.fork(callFrom("127.0.0.2", "GET", "/listings?q=parser", { headers: json }))
        const b = yield* Effect.fork(callFrom("127.0.0.3", "GET", "/listings", { headers: json }))
        yield* waitUntil(() => held.entered === 2)
        expect(held.entered).toBe(2)
        const viaMcp = yield* Effect.fork(callTool("search_listings", { q: "cli" }))
        yield* waitUntil(() => viaMcp.unsafePoll() !== null || held.entered > 2)
        expect(held.entered).toBe(2)
        expect(yield* Fiber.join(viaMcp)).toMatchObject({ isError: true, structuredContent: { status: 503, code: "search_busy", retry_after_seconds: 1 } })
        yield* held.hold.open
        expect((yield* Fiber.join(a)).status).toBe(200)
        expect((yield* Fiber.join(b)).status).toBe(200)

        // MCP holds both slots.
        yield* held.hold.close
        held.entered = 0
        const c = yield* Effect.fork(mcpFrom("127.0.0.4", toolCall("search_listings", { q: "parser" })))
        const d = yield* Effect.fork(mcpFrom("127.0.0.5", toolCall("search_listings", {})))
        yield* waitUntil(() => held.entered === 2)
        expect(held.entered).toBe(2)
        const viaHttp = yield* Effect.fork(callFrom("127.0.0.6", "GET", "/listings?q=cli", { headers: json }))
        yield* waitUntil(() => viaHttp.unsafePoll() !== null || held.entered > 2)
        expect(held.entered).toBe(2)
        const busy = yield* Fiber.join(viaHttp)
        expect({ status: busy.status, code: busy.json?.code, retryAfter: busy.headers["retry-after"] }).toEqual({ status: 503, code: "search_busy", retryAfter: "1" })
        yield* held.hold.open
        expect((yield* Fiber.join(c)).json.result.isError).not.toBe(true)
        expect((yield* Fiber.join(d)).json.result.isError).not.toBe(true)
      }).pipe(Effect.ensuring(held.hold.open)))
  })
})

/** The failure the next catalog search fails with (once), if any. */
let nextSearchFailure: StorageError | null = null
/** The failure the next live-listing lookup (a repo page's) fails with (once), if any. */
let nextFindLiveFailure: StorageError | null = null

const FailingStorage = Layer.effectContext(Effect.gen(function*() {
  const ctx = yield* Effect.context<StoragePorts>()
  const catalog = Context.get(ctx, ListingCatalog)
  const store = Context.get(ctx, ListingStore)
  return Context.add(Context.add(ctx, ListingCatalog, {
    ...catalog,
    search: (query) =>
      Effect.suspend(() => {
        const failure = nextSearchFailure
        nextSearchFailure = null
        return failure === null ? catalog.search(query) : Effect.fail(failure)
      })
  }), ListingStore, {
    ...store,
    findLive: (owner, name) =>
      Effect.suspend(() => {
        const failure = nextFindLiveFailure
        nextFindLiveFailure = null
        return failure === null ? store.findLive(owner, name) : Effect.fail(failure)
      })
  })
})).pipe(Layer.provide(StorageMemory))

describe("a storage failure over MCP", () => {
  layer(TestApp({ storage: FailingStorage }))((it) => {
    it.effect("is the HTTP answer's problem as a tool error: 503 database_unavailable with retry_after_seconds, else 500 internal_error; never -32603", () =>
      Effect.gen(function*() {
        nextSearchFailure = new StorageError({ unavailable: true, message: "Failed to execute statement" })
        const http = yield* call("GET", "/listings", { headers: { accept: "application/json" } })
        expect({ status: http.status, code: http.json?.code, retryAfter: http.headers["retry-after"] }).toEqual({ status: 503, code: "database_unavailable", retryAfter: "5" })

        nextSearchFailure = new StorageError({ unavailable: true, message: "Failed to execute statement" })
        const search = yield* callTool("search_listings", {})
        expect(search).toMatchObject({ isError: true, structuredContent: http.json })
        expect(JSON.parse(search.content[0].text)).toEqual(http.json)
        expect(search.structuredContent.retry_after_seconds).toBe(5)

        nextSearchFailure = new StorageError({ unavailable: false, message: "relation does not exist" })
        const broken = yield* callTool("search_listings", { q: "widget" })
        expect(broken).toMatchObject({ isError: true, structuredContent: { status: 500, code: "internal_error" } })
        expect(JSON.stringify(broken)).not.toContain("relation does not exist")

        // The store answering again, so do the tools.
        expect((yield* callTool("search_listings", {})).isError).not.toBe(true)
      }))

    it.effect("on a repo page is 503 database_unavailable over HTTP (JSON and HTML) and MCP get_repo alike, never a 404 'not listed'", () =>
      Effect.gen(function*() {
        const { key } = yield* signInWithKey("page-outage@example.com")
        expect((yield* call("POST", "/repos", { token: key, body: { host_url: "https://github.com/octo-org/widget", price_usd: "1.00", wallet_base: BASE_WALLET } })).status).toBe(201)
        const outage = () => { nextFindLiveFailure = new StorageError({ unavailable: true, message: "Failed to execute statement" }) }

        outage()
        const json = yield* call("GET", "/r/octo-org/widget", { headers: { accept: "application/json" } })
        expect({ status: json.status, code: json.json?.code, retryAfter: json.headers["retry-after"] }).toEqual({ status: 503, code: "database_unavailable", retryAfter: "5" })
        outage()
        const html = yield* call("GET", "/r/octo-org/widget", { headers: { accept: "text/html" } })
        expect(html.status).toBe(503)
        expect(html.text).not.toMatch(/not listed/i)
        outage()
        const tool = yield* callTool("get_repo", { repo: "octo-org/widget" })
        expect(tool).toMatchObject({ isError: true, structuredContent: { status: 503, code: "database_unavailable", retry_after_seconds: 5 } })

        // Answering again: the page is there.
        expect((yield* call("GET", "/r/octo-org/widget", { headers: { accept: "application/json" } })).status).toBe(200)
      }))
  })
})
