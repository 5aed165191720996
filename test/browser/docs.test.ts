import { afterAll, beforeAll, expect, it } from "vitest"
import type { Browser, Page } from "playwright-core"
import { type BrowserApp, describeBrowser, DESKTOP, launchChromium, recordFailedRequests, signInThroughMail, startBrowserApp } from "./support.js"

/**
 * Issue 12, finding 11: `/docs` (the Scalar API reference, a large third-party script) carries a strict
 * Content-Security-Policy on the dashboard's origin, and still renders in real Chromium. Also checks, with
 * the real browser, that the sign-in link's button still signs in now that its POST must carry our origin
 * (finding 9).
 */
describeBrowser("/docs under a strict Content-Security-Policy in Chromium", () => {
  let app: BrowserApp
  let browser: Browser
  let page: Page
  const violations: Array<string> = []

  beforeAll(async () => {
    app = await startBrowserApp()
    browser = await launchChromium()
    page = await (await browser.newContext({ viewport: DESKTOP })).newPage()
    page.on("console", (m) => {
      if (/Content Security Policy|Refused to|violates/i.test(m.text())) violations.push(m.text())
    })
    recordFailedRequests(page, violations)
  }, 60_000)
  afterAll(async () => {
    await browser?.close()
    await app?.close()
  })

  it("answers /docs with a CSP that allows no inline script, no other origin and no framing", async () => {
    const res = await fetch(`${app.origin}/docs`)
    expect(res.status).toBe(200)
    const csp = res.headers.get("content-security-policy") ?? ""
    const directives = Object.fromEntries(csp.split(";").map((d) => d.trim().split(/\s+/)).map(([k, ...v]) => [k, v]))
    expect(directives["default-src"]).toEqual(["'none'"])
    // 'wasm-unsafe-eval' lets Scalar compile WebAssembly; it allows no eval of script.
    expect(directives["script-src"]).toEqual(["'self'", "'wasm-unsafe-eval'"])
    expect(directives["connect-src"]).toEqual(["'self'"])
    expect(directives["frame-ancestors"]).toEqual(["'none'"])
    expect(directives["base-uri"]).toEqual(["'none'"])
    expect(csp).not.toMatch(/https?:|\*/)
    expect(res.headers.get("x-content-type-options")).toBe("nosniff")
    const html = await res.text()
    // No inline script: every executable script comes from our own origin.
    const inline = [...html.matchAll(/<script(?![^>]*\bsrc=)(?![^>]*type="application\/json")[^>]*>/g)]
    expect(inline).toEqual([])
  })

  it("renders the API reference in Chromium with no CSP violation", async () => {
    await page.goto(`${app.origin}/docs`)
    await page.getByText("Email a sign-in link").first().waitFor({ timeout: 20_000 })
    await page.getByText("Sell code repositories over x402").first().waitFor()
    expect(violations).toEqual([])
  }, 60_000)

  it("the sign-in link's button still signs in (its POST carries our origin)", async () => {
    await signInThroughMail(page, app, "docs-reader@example.com")
    expect(page.url()).toBe(`${app.origin}/dashboard`)
  }, 60_000)
})
