import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { BASE_URL, BASE_WALLET, call, PUBLIC_REPO, signInWithKey, SOLANA_WALLET, TestApp } from "../support/app.js"
import { expectProblem, listed, repoPage, WIDGET_URL } from "../support/flows.js"

describe("GET /r/<owner>/<repo> with Accept: application/json (rule 5)", () => {
  layer(TestApp())((it) => {
    it.effect("previews tree and README free, with price and both checkouts, whatever the case of the path", () =>
      Effect.gen(function*() {
        const { key } = yield* signInWithKey("seller@example.com")
        const created = yield* listed({ host_url: WIDGET_URL, price_usd: "12.34", wallet_base: BASE_WALLET, wallet_solana: SOLANA_WALLET }, key)

        for (const [owner, repo] of [["Octo-Org", "Widget"], ["octo-org", "widget"], ["OCTO-ORG", "WIDGET"]] as const) {
          // No credential: the page is public.
          const page = yield* repoPage(owner, repo)
          expect({ owner, repo, status: page.status }).toEqual({ owner, repo, status: 200 })
          expect(page.headers["content-type"]).toMatch(/^application\/json/)
          expect(page.json).toMatchObject({
            repo: "Octo-Org/Widget",
            page: "/r/Octo-Org/Widget",
            host_url: "https://github.com/Octo-Org/Widget",
            description: "A widget library",
            language: "TypeScript",
            private: false,
            price_usd: "12.34",
            amount: "12340000",
            currency: "USDC",
            selling: true,
            chains: ["base", "solana"],
            checkout_url: created.checkout_url,
            test_checkout_url: created.test_checkout_url,
            preview_available: true,
            stars: 42,
            license: "MIT"
          })
          expect(page.json.tree).toEqual({
            entries: [
              { path: "README.md", type: "file", size: PUBLIC_REPO.files!["README.md"]!.length },
              { path: "src", type: "dir", size: null },
              { path: "src/index.ts", type: "file", size: PUBLIC_REPO.files!["src/index.ts"]!.length }
            ],
            truncated: false
          })
          expect(page.json.readme.path).toBe("README.md")
          expect(page.json.readme.markdown).toBe(PUBLIC_REPO.files!["README.md"])
          // The rendered README is sanitised: the script in the markdown is never live HTML.
          expect(page.json.readme.html).not.toContain("<script")
          expect(page.json.how_to_buy).toContain(created.checkout_url)
          expect(page.json.how_to_buy).toContain(created.test_checkout_url)
        }
      }))

    it.effect("a repo that is not listed has no page (404), even if the code host has it", () =>
      Effect.gen(function*() {
        expectProblem(yield* repoPage("Octo-Org", "free-thing"), 404, "not_found")
        expectProblem(yield* repoPage("nobody-here", "nothing"), 404, "not_found")
      }))
  })
})

describe("GET /r/<owner>", () => {
  layer(TestApp())((it) => {
    it.effect("lists the sellable inventory and the free indexed repos, without a credential", () =>
      Effect.gen(function*() {
        const { key } = yield* signInWithKey("store@example.com")
        yield* listed({ host_url: WIDGET_URL, price_usd: "12.34", wallet_base: BASE_WALLET }, key)
        const page = yield* call("GET", "/r/octo-org")
        expect(page.status).toBe(200)
        expect(page.json).toMatchObject({ owner: "Octo-Org", host: "https://github.com/Octo-Org", claimed: true })
        expect(page.json.inventory).toEqual([{
          repo: "Octo-Org/Widget",
          page: "/r/Octo-Org/Widget",
          price_usd: "12.34",
          selling: true,
          description: "A widget library",
          language: "TypeScript",
          chains: ["base"]
        }])
        // Listed repos are not also offered free; private repos are never indexed.
        const indexed = [...page.json.indexed].sort((a: any, b: any) => a.repo.localeCompare(b.repo))
        expect(indexed).toEqual([
          {
            repo: "Octo-Org/free-thing",
            host: "https://github.com/Octo-Org/free-thing",
            description: "free",
            language: null,
            stars: 0,
            topics: ["cli"],
            license: expect.any(String),
            category: "cli"
          },
          {
            repo: "Octo-Org/Gadget",
            host: "https://github.com/Octo-Org/Gadget",
            description: "",
            language: null,
            stars: 0,
            topics: [],
            license: expect.any(String),
            category: expect.any(String)
          }
        ])
        expect(page.json.how_to_buy).toContain(`${BASE_URL}/r/Octo-Org/`)
        expect(page.json.how_to_buy).toContain("application/json")
      }))

    it.effect("an owner the code host does not know, with nothing listed, is 404", () =>
      Effect.gen(function*() {
        expectProblem(yield* call("GET", "/r/no-such-owner"), 404, "not_found")
      }))
  })
})

describe("API description", () => {
  layer(TestApp())((it) => {
    it.effect("/openapi.json is valid JSON listing the endpoints", () =>
      Effect.gen(function*() {
        const reply = yield* call("GET", "/openapi.json")
        expect(reply.status).toBe(200)
        expect(reply.headers["content-type"]).toMatch(/^application\/json/)
        const doc = JSON.parse(reply.text)
        expect(doc.openapi).toMatch(/^3\./)
        const operations = Object.entries(doc.paths as Record<string, Record<string, unknown>>)
          .flatMap(([path, ops]) => Object.keys(ops).map((method) => `${method.toUpperCase()} ${path}`))
        expect(operations).toEqual(expect.arrayContaining([
          "POST /auth/magic-link",
          "POST /auth/verify",
          "POST /my/keys",
          "GET /my/keys",
          "DELETE /my/keys/{id}",
          "GET /my/stores",
          "POST /repos",
          "PATCH /repos/{owner}/{repo}",
          "DELETE /repos/{owner}/{repo}",
          "GET /my/account",
          "PATCH /my/account",
          "GET /r/{owner}",
          "GET /r/{owner}/{repo}"
        ]))
      }))

    it.effect("/docs answers an HTML page", () =>
      Effect.gen(function*() {
        const reply = yield* call("GET", "/docs")
        expect(reply.status).toBe(200)
        expect(reply.headers["content-type"]).toMatch(/^text\/html/)
        expect(reply.text).toMatch(/<html/i)
        expect(reply.text).toContain("repomarket")
      }))
  })
})
