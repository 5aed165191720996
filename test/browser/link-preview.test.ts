import { afterAll, beforeAll, expect, it } from "vitest"
import type { Browser, Page } from "playwright-core"
import type { FakeRepo } from "../../adapters/memory/CodeHostMemory.js"
import { BASE_WALLET, DEFAULT_REPOS } from "../support/app.js"
import { api, apiSession, type BrowserApp, describeBrowser, DESKTOP, launchChromium, screenshot, startBrowserApp } from "./support.js"

// The repo page's JSON-LD block under the page's strict CSP (script-src by nonce only, Trusted Types
// required): a data block is never run, so it must cause no violation, and a description holding
// </script> must not turn into a script that runs.

const EVIL: FakeRepo = {
  owner: "Evil-Org",
  name: "payload",
  description: `Fast </script><script>window.__pwned="jsonld"</script><!-- & "quoted" -->`
}

describeBrowser("the repo page's structured data in Chromium", () => {
  let app: BrowserApp
  let browser: Browser
  let page: Page

  beforeAll(async () => {
    app = await startBrowserApp({ repos: [...DEFAULT_REPOS, EVIL] })
    const session = await apiSession(app, "preview@example.com")
    expect((await api(app, "POST", "/repos", session, { host_url: "https://github.com/evil-org/payload", price_usd: "4.20", wallet_base: BASE_WALLET })).status).toBe(201)
    browser = await launchChromium()
    page = await (await browser.newContext({ viewport: DESKTOP })).newPage()
    // Recorded from the first script on: every CSP or Trusted Types violation the page causes.
    await page.addInitScript(`window.__violations = [];
      document.addEventListener("securitypolicyviolation", (e) => window.__violations.push(e.violatedDirective + " " + e.blockedURI))`)
  })

  afterAll(async () => {
    await browser?.close()
    await app?.close()
  })

  const violations = () => page.evaluate<ReadonlyArray<string>>("window.__violations")

  it("the JSON-LD data block causes no CSP violation, reads back as the Product, and the description runs nothing", async () => {
    const consoleLines: Array<string> = []
    page.on("console", (m) => consoleLines.push(m.text()))
    const res = await page.goto(`${app.origin}/r/evil-org/payload`, { waitUntil: "load" })
    expect(res!.headers()["content-security-policy"]).toMatch(/script-src 'nonce-[A-Za-z0-9_-]+'/)
    await page.waitForTimeout(300)
    expect(await violations()).toEqual([])
    expect(consoleLines.filter((l) => /Content Security Policy|Trusted Type/i.test(l))).toEqual([])
    expect(await page.evaluate("window.__pwned ?? null")).toBeNull()
    // One data block, and our own script (copy buttons) still loads and runs by its nonce.
    expect(await page.evaluate(`document.querySelectorAll('script[type="application/ld+json"]').length`)).toBe(1)
    const product = JSON.parse(await page.evaluate<string>(`document.querySelector('script[type="application/ld+json"]').textContent`))
    expect(product).toMatchObject({
      "@type": "Product",
      name: "Evil-Org/payload",
      description: `${EVIL.description} $4.20 USDC on Base, paid over x402; the source as a .tar.gz.`,
      offers: { "@type": "Offer", price: "4.20", priceCurrency: "USDC" }
    })
    expect(await page.locator("meta[property='og:description']").getAttribute("content")).toBe(product.description)
    expect(await page.locator("button").count()).toBeGreaterThan(0)
    await screenshot(page, "repo-page-link-preview")
  })

  it("control: the violation recorder sees a violation when the page does break the policy", async () => {
    await page.goto(`${app.origin}/r/evil-org/payload`, { waitUntil: "load" })
    await page.evaluate(`try { const s = document.createElement("script"); s.textContent = "window.__pwned = 'inline'"; document.head.append(s) } catch {}`)
    await page.waitForTimeout(200)
    expect((await violations()).length).toBeGreaterThan(0)
    expect(await page.evaluate("window.__pwned ?? null")).toBeNull()
  })
})
