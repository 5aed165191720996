import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import type { FakeRepo } from "../../adapters/memory/CodeHostMemory.js"
import { BASE_WALLET, call, DEFAULT_REPOS, PRIVATE_TOKEN, PUBLIC_REPO, signInWithKey, SOLANA_WALLET, TestApp } from "../support/app.js"
import { expectGone, expectProblem, listed, WIDGET_URL } from "../support/flows.js"
import { codeHostWithReadme, expectPage, htmlGet, sanitisedReadme, TestAppWith } from "../support/pages.js"

/** Everything `<script` in a page: only our own nonce'd file may load. */
const scriptTags = (page: string) => page.match(/<script\b[^>]*>/gi) ?? []

describe("/r/<owner>/<repo> and /r/<owner> negotiate on Accept", () => {
  layer(TestApp())((it) => {
    it.effect("JSON when Accept asks for JSON, is absent, */* or a tie; HTML only when text/html is preferred", () =>
      Effect.gen(function*() {
        const { key } = yield* signInWithKey("widget@example.com")
        yield* listed({ host_url: WIDGET_URL, price_usd: "12.34", wallet_base: BASE_WALLET }, key)
        const cases: ReadonlyArray<readonly [string | undefined, "json" | "html"]> = [
          ["application/json", "json"],
          [undefined, "json"],
          ["*/*", "json"],
          ["text/html, application/json", "json"],
          ["text/html;q=0.5, application/json", "json"],
          ["application/json;q=0.9, text/html", "html"],
          ["text/html", "html"],
          ["text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8", "html"]
        ]
        for (const path of ["/r/Octo-Org/Widget", "/r/octo-org"]) {
          for (const [accept, kind] of cases) {
            const reply = yield* call("GET", path, accept === undefined ? {} : { headers: { accept } })
            const type = reply.headers["content-type"] ?? ""
            expect({ path, accept, status: reply.status, kind: type.startsWith("text/html") ? "html" : type.startsWith("application/json") ? "json" : type })
              .toEqual({ path, accept, status: 200, kind })
            // Caches keep the two answers of one URL apart.
            expect(reply.headers["vary"], `${path} ${accept}`).toMatch(/accept/i)
          }
        }
      }))

    it.effect("the repo page shows name, description, price, chains, the file tree, the README and how to buy", () =>
      Effect.gen(function*() {
        const { key } = yield* signInWithKey("widget@example.com")
        const created = yield* listed({ host_url: WIDGET_URL, price_usd: "12.34", wallet_base: BASE_WALLET, wallet_solana: SOLANA_WALLET }, key)
        const page = expectPage(yield* htmlGet("/r/octo-org/widget"), 200)
        expect(page).toContain("<h1>Octo-Org/Widget</h1>")
        expect(page).toContain("A widget library")
        expect(page).toContain("$12.34")
        expect(page).toContain("<li>Base</li>")
        expect(page).toContain("<li>Solana</li>")
        // A browsable tree: directories fold, files show their size.
        expect(page).toContain("<details><summary>src/</summary><ul><li>index.ts")
        expect(page).toContain(`README.md<span class="size">${PUBLIC_REPO.files!["README.md"]!.length} B</span>`)
        // The README in its own container, the fake host's markup kept as given.
        expect(page).toContain(`<article class="readme" data-path="README.md"><pre># Widget`)
        // How to buy: both checkouts, and a copyable example with the official client and its spend controls.
        expect(page).toContain(`<code class="url" id="checkout-url">${created.checkout_url}</code>`)
        expect(page).toContain(`<code class="url" id="test-checkout-url">${created.test_checkout_url}</code>`)
        for (const word of ["wrapFetchWithPayment", "x402Client", "ExactEvmScheme", "client.setSpendControls({ maxAmountPerPayment: &quot;$12.34&quot; })"]) {
          expect(page).toContain(word)
        }
        expect(page).toContain(`const res = await pay(&quot;${created.test_checkout_url}&quot;)`)
        // Our nonce'd script, and the JSON-LD data block (never run, so no nonce: see RepoPageMeta.ts).
        expect(scriptTags(page)).toEqual([
          `<script type="application/ld+json">`,
          expect.stringMatching(/^<script src="\/assets\/copy\.js" nonce="[A-Za-z0-9_-]+" defer>$/)
        ])
        const nonce = /nonce="([^"]+)"/.exec(page)![1]!
        expect((yield* htmlGet("/r/octo-org/widget")).headers["content-security-policy"]).not.toContain(nonce)
      }))

    it.effect("at $1 or less the example needs no spend-control change", () =>
      Effect.gen(function*() {
        const { key } = yield* signInWithKey("widget@example.com")
        yield* listed({ host_url: "https://github.com/octo-org/gadget", price_usd: "1.00", wallet_base: BASE_WALLET }, key)
        const page = expectPage(yield* htmlGet("/r/Octo-Org/Gadget"), 200)
        expect(page).toContain("// client.setSpendControls(")
        expect(page).not.toContain("This price is above $1")
      }))

    it.effect("the owner page shows the inventory with prices, the free repos by category and how to buy", () =>
      Effect.gen(function*() {
        // Its own listings: the tests of this layer share one app and run in any order.
        const { key } = yield* signInWithKey("widget@example.com")
        yield* listed({ host_url: WIDGET_URL, price_usd: "12.34", wallet_base: BASE_WALLET }, key)
        yield* listed({ host_url: "https://github.com/octo-org/gadget", price_usd: "1.00", wallet_base: BASE_WALLET }, key)
        const page = expectPage(yield* htmlGet("/r/octo-org"), 200)
        expect(page).toContain("<h1>Octo-Org</h1>")
        expect(page).toMatch(/<a href="\/r\/Octo-Org\/Widget">Octo-Org\/Widget<\/a><\/td>\s*<td data-label="Price">\$12\.34<\/td>/)
        expect(page).toMatch(/<a href="\/r\/Octo-Org\/Gadget">Octo-Org\/Gadget<\/a><\/td>\s*<td data-label="Price">\$1\.00<\/td>/)
        expect(page).toMatch(/<h3 id="category-cli">cli<\/h3><ul>\s*<li><a href="https:\/\/github\.com\/Octo-Org\/free-thing"/)
        expect(page).toContain("How to buy")
        expect(page).toContain("Accept: application/json")
        expect(scriptTags(page)).toEqual([])
      }))

    it.effect("a taken-down repo and an unknown repo or owner are 404 pages (and 404 problems for JSON)", () =>
      Effect.gen(function*() {
        const { key } = yield* signInWithKey("gone@example.com")
        const created = yield* listed({ host_url: "https://github.com/octo-org/secret-sauce", host_pat: PRIVATE_TOKEN, price_usd: "3.00", wallet_base: BASE_WALLET }, key)
        expectPage(yield* htmlGet("/r/octo-org/secret-sauce"), 200)
        expect((yield* call("DELETE", "/repos/octo-org/secret-sauce", { token: key })).status).toBe(204)
        yield* expectGone(created.checkout_url, "/r/octo-org/secret-sauce")
        for (const path of ["/r/octo-org/secret-sauce", "/r/Octo-Org/free-thing", "/r/nobody-here/nothing", "/r/nobody-here"]) {
          const page = expectPage(yield* htmlGet(path), 404)
          expect(page).toContain("<h1>Not found</h1>")
          expect(page).toContain(`data-code="not_found"`)
          expectProblem(yield* call("GET", path, { headers: { accept: "application/json" } }), 404, "not_found")
        }
      }))
  })
})

const XSS_REPO: FakeRepo = {
  owner: "Evil-Org",
  name: "payload",
  description: `<img src=x onerror="window.__pwned='description'">`,
  files: {
    "README.md": `# Payload\n\n<script>window.__pwned = "readme"</script>\n\n<img src="x" onerror="window.__pwned='img'">\n\n[click](javascript:window.__pwned='link')\n`,
    "<img src=x onerror=alert(1)>.txt": "x"
  }
}

describe("a tagline or a README holding <script> renders inert", () => {
  layer(TestAppWith(codeHostWithReadme([...DEFAULT_REPOS, XSS_REPO], sanitisedReadme)))((it) => {
    it.effect("the tagline, the description and file names are escaped; the README went through the sanitiser", () =>
      Effect.gen(function*() {
        const { key } = yield* signInWithKey("evil@example.com")
        yield* listed({ host_url: "https://github.com/evil-org/payload", price_usd: "0.50", wallet_base: BASE_WALLET }, key)
        const tagline = `<script>window.__pwned="tagline"</script> & "quoted" <b>bold</b>`
        const patched = yield* call("PATCH", "/my/account", { token: key, body: { storefront_tagline: tagline } })
        expect(patched.status, patched.text).toBe(200)

        const owner = expectPage(yield* htmlGet("/r/evil-org"), 200)
        expect(owner).toContain(`<p class="tagline">&lt;script&gt;window.__pwned=&quot;tagline&quot;&lt;/script&gt; &amp; &quot;quoted&quot; &lt;b&gt;bold&lt;/b&gt;</p>`)
        expect(owner).not.toContain("<b>bold</b>")
        expect(scriptTags(owner)).toEqual([])
        // The JSON keeps the tagline as given: escaping is the page's job.
        expect((yield* call("GET", "/r/evil-org")).json.storefront_tagline).toBe(tagline)

        const repo = expectPage(yield* htmlGet("/r/evil-org/payload"), 200)
        expect(repo).toContain(`&lt;img src=x onerror=&quot;window.__pwned=&#39;description&#39;&quot;&gt;`)
        expect(repo).toContain(`<li>&lt;img src=x onerror=alert(1)&gt;.txt<span class="size">`)
        const readme = /<article class="readme"[^>]*>([\s\S]*?)<\/article>/.exec(repo)![1]!
        expect(readme).toContain("<h1>Payload</h1>")
        expect(readme).not.toMatch(/<script|onerror|javascript:/i)
        // Only our own nonce'd script tag is on the page, beside the JSON-LD data block, which the
        // description (an <img onerror>) cannot leave: the page has exactly one closing tag per element.
        expect(scriptTags(repo)).toHaveLength(2)
        expect(scriptTags(repo)[0]).toBe(`<script type="application/ld+json">`)
        expect(scriptTags(repo)[1]).toMatch(/^<script src="\/assets\/copy\.js" nonce=/)
        expect(repo.match(/<\/script>/gi)).toHaveLength(2)
      }))
  })
})
