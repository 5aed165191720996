import { afterAll, beforeAll, expect, it } from "vitest"
import type { Browser, BrowserContext, Dialog, Page } from "playwright-core"
import type { FakeRepo } from "../../adapters/memory/CodeHostMemory.js"
import { BASE_WALLET, DEFAULT_REPOS } from "../support/app.js"
import { codeHostWithReadme, sanitisedReadme } from "../support/pages.js"
import { api, type BrowserApp, describeBrowser, DESKTOP, launchChromium, screenshot, apiSession, startBrowserApp } from "./support.js"

const EVIL: FakeRepo = {
  owner: "Evil-Org",
  name: "payload",
  description: `<img src=x onerror="window.__pwned='description'">`,
  files: { "README.md": `# Payload\n\n<script>window.__pwned = "readme"</script>\n\n<img src="x" onerror="window.__pwned='readme-img'">\n` }
}

/**
 * A sanitiser miss, simulated: the code host's README HTML carries live script after sanitising. The page's
 * Content-Security-Policy must still keep it from running.
 */
const MISS = `<script>window.__pwned = "sanitiser-miss"</script><img src="/nowhere.png" onerror="window.__pwned = 'onerror'; alert('onerror')">`

const TAGLINE = `<script>window.__pwned="tagline"</script><img src=x onerror="alert('tagline')"> & more`

describeBrowser("a tagline or a README holding <script> renders inert in Chromium", () => {
  let app: BrowserApp
  let browser: Browser
  let context: BrowserContext
  let page: Page
  const dialogs: Array<string> = []
  const consoleLines: Array<string> = []

  beforeAll(async () => {
    app = await startBrowserApp({ codeHost: codeHostWithReadme([...DEFAULT_REPOS, EVIL], (md, repo, path) => sanitisedReadme(md, repo, path) + MISS) })
    const session = await apiSession(app, "evil@example.com")
    expect((await api(app, "POST", "/repos", session, { host_url: "https://github.com/evil-org/payload", price_usd: "0.50", wallet_base: BASE_WALLET })).status).toBe(201)
    expect((await api(app, "PATCH", "/my/account", session, { storefront_tagline: TAGLINE })).status).toBe(200)
    browser = await launchChromium()
    context = await browser.newContext({ viewport: DESKTOP })
    page = await context.newPage()
    page.on("dialog", (d: Dialog) => {
      dialogs.push(d.message())
      void d.dismiss()
    })
    page.on("console", (m) => consoleLines.push(m.text()))
  })

  afterAll(async () => {
    await browser?.close()
    await app?.close()
  })

  // Page-side expressions as strings: this project compiles without the DOM library.
  const pwned = () => page.evaluate<string | null>("window.__pwned ?? null")

  it("the README's script, even past the sanitiser, does not run: the page's CSP refuses it", async () => {
    const res = await page.goto(`${app.origin}/r/evil-org/payload`, { waitUntil: "load" })
    const csp = res!.headers()["content-security-policy"]!
    expect(csp).toMatch(/script-src 'nonce-[A-Za-z0-9_-]+'/)
    expect(csp).not.toContain("unsafe-inline")
    await page.waitForTimeout(300)
    expect(await pwned()).toBeNull()
    expect(dialogs).toEqual([])
    // The browser met the script and refused it: the payload was real, the policy stopped it.
    expect(consoleLines.some((m) => /Content Security Policy/.test(m) && /inline script|script-src/.test(m))).toBe(true)
    // The sanitiser did its part for the markdown's own script; only the simulated miss reached the page.
    const readme = await page.locator("article.readme").innerHTML()
    expect(readme).not.toContain(`window.__pwned = "readme"`)
    expect(readme).toContain("sanitiser-miss")
    await screenshot(page, "inert-readme")
  })

  it("control: the same page served without its CSP runs the payload (so the check above can fail)", async () => {
    const url = `${app.origin}/r/evil-org/payload`
    await page.route(url, async (route) => {
      const response = await route.fetch()
      const headers = { ...response.headers() }
      delete headers["content-security-policy"]
      await route.fulfill({ response, headers })
    })
    try {
      await page.goto(url, { waitUntil: "load" })
      await page.waitForTimeout(300)
      expect(await pwned()).not.toBeNull()
    } finally {
      await page.unroute(url)
      dialogs.length = 0
    }
  })

  it("the tagline and the description are text on the page, never markup", async () => {
    const res = await page.goto(`${app.origin}/r/evil-org`, { waitUntil: "load" })
    expect(res!.headers()["content-security-policy"]).toContain("default-src 'none'")
    await page.waitForTimeout(300)
    await expect(page.locator(".tagline").textContent()).resolves.toBe(TAGLINE)
    expect(await page.evaluate("document.scripts.length")).toBe(0)
    expect(await page.locator(".tagline img").count()).toBe(0)
    expect(await pwned()).toBeNull()

    await page.goto(`${app.origin}/r/evil-org/payload`, { waitUntil: "load" })
    await expect(page.locator(".lede").textContent()).resolves.toBe(EVIL.description!)
    await page.goto(`${app.origin}/r/evil-org`, { waitUntil: "load" })
    expect(await pwned()).toBeNull()
    expect(dialogs).toEqual([])
    await screenshot(page, "inert-tagline")

    // The dialog detector works: a dialog the test itself opens is seen.
    await page.evaluate(`alert("probe")`)
    expect(dialogs).toEqual(["probe"])
  })
})
