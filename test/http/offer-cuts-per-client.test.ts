/*
 * Issue 39, "unpaid page views download whole archives": every door that can start an offer-time archive cut (the
 * repo page over HTTP and MCP, the 402) names its client, so one address cannot make the server cut archive after
 * archive of listings it does not buy. Past OFFER_CUTS_PER_CLIENT cuts an hour, that address's pages name no
 * digest and start no download; another address's views still cut.
 */
import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import type { FakeRepo } from "../../adapters/memory/CodeHostMemory.js"
import { OFFER_CUTS_PER_CLIENT } from "../../domain/usecases/ArchiveCuts.js"
import { BASE_WALLET, TestApp } from "../support/app.js"
import { callFrom } from "../support/clients.js"

/** One more repository than a client may have cut an hour, each of its own owner (the per-owner bound stays out of the way). */
const REPOS: ReadonlyArray<FakeRepo> = Array.from({ length: OFFER_CUTS_PER_CLIENT + 1 }, (_, i) => ({
  owner: `cutter-${i}`,
  name: "lib",
  description: "a library",
  files: { "README.md": `# lib ${i}\n`, "src/index.ts": `export const n = ${i}\n` }
}))

const json = { accept: "application/json" }

describe("offer-time cuts are bounded per client at every door", () => {
  layer(TestApp({ repos: REPOS, config: { PUBLIC_PAGES_PER_MINUTE: "0" }, responseCacheMs: 0 }))((it) => {
    it.effect(`one address's repo page views, HTTP and MCP together, cut at most ${OFFER_CUTS_PER_CLIENT} archives an hour; another address still cuts`, () =>
      Effect.gen(function*() {
        for (const [i, repo] of REPOS.entries()) {
          const listed = yield* callFrom(`127.0.1.${i + 1}`, "POST", "/repos", {
            headers: json,
            body: { host_url: `https://github.com/${repo.owner}/${repo.name}`, price_usd: "1.00", wallet_base: BASE_WALLET }
          })
          expect(listed.status, listed.text).toBe(201)
        }
        // One address views all but the last through HTTP: each page cuts its commit's archive and names its digest.
        for (const repo of REPOS.slice(0, OFFER_CUTS_PER_CLIENT)) {
          const page = yield* callFrom("127.0.2.1", "GET", `/r/${repo.owner}/${repo.name}`, { headers: json })
          expect(page.status, page.text).toBe(200)
          expect(page.json.archive, `${repo.owner}/${repo.name}`).not.toBeNull()
        }
        // The last one, from the same address through MCP: its budget is spent, so nothing is cut, no digest named.
        const last = REPOS[OFFER_CUTS_PER_CLIENT]!
        const viaMcp = yield* callFrom("127.0.2.1", "POST", "/mcp", {
          headers: { accept: "application/json, text/event-stream" },
          body: { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "get_repo", arguments: { repo: `${last.owner}/${last.name}` } } }
        })
        expect(viaMcp.json.result.isError, viaMcp.text).not.toBe(true)
        expect(viaMcp.json.result.structuredContent.archive).toBeNull()
        const viaHttp = yield* callFrom("127.0.2.1", "GET", `/r/${last.owner}/${last.name}`, { headers: json })
        expect(viaHttp.json.archive).toBeNull()

        // Another address's view of it is its own: cut, digest named.
        const other = yield* callFrom("127.0.2.2", "GET", `/r/${last.owner}/${last.name}`, { headers: json })
        expect(other.json.archive).not.toBeNull()
      }))
  })
})
