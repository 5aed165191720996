import { afterAll, beforeAll, expect, it } from "vitest"
import type { Browser, Page } from "playwright-core"
import { DEFAULT_REPOS } from "../support/app.js"
import { CATALOG_REPOS, listingBody } from "../support/catalog.js"
import { api, type BrowserApp, describeBrowser, DESKTOP, launchChromium, recordFailedRequests, PHONE, screenshot, startBrowserApp } from "./support.js"

/**
 * Issue 16: a shopper in Chromium. The home page (search box, newest listings, categories with counts, the
 * line for agents) first with nothing for sale, then with listings; a search through the plain GET form,
 * a filter, a category link, the next page, and the listing it leads to. No CSP violation, no script run
 * from a seller's description, no failed request. Screenshots in test-results/screenshots/catalog-*.png.
 */
describeBrowser("the catalog in Chromium: home page and search", () => {
  let app: BrowserApp
  let browser: Browser
  let page: Page
  const violations: Array<string> = []
  const dialogs: Array<string> = []

  beforeAll(async () => {
    app = await startBrowserApp({ repos: [...DEFAULT_REPOS, ...CATALOG_REPOS] })
    browser = await launchChromium()
    page = await (await browser.newContext({ viewport: DESKTOP })).newPage()
    page.on("console", (m) => {
      if (/Content Security Policy|Refused to|violates/i.test(m.text())) violations.push(m.text())
    })
    page.on("dialog", (d) => {
      dialogs.push(d.message())
      void d.dismiss()
    })
    recordFailedRequests(page, violations)
  }, 60_000)
  afterAll(async () => {
    await browser?.close()
    await app?.close()
  })

  it("an empty market's home page says nothing is for sale yet and shows every category at 0", async () => {
    await page.goto(`${app.origin}/`)
    await page.getByRole("heading", { name: "Newest listings" }).waitFor()
    expect(await page.locator("#newest .empty").innerText()).toContain("Nothing is for sale yet")
    expect(await page.locator("#categories .count").allInnerTexts()).toEqual(Array(12).fill("0"))
    await screenshot(page, "catalog-home-empty")
  }, 60_000)

  it("the home page lists the newest, counts the categories, links /llms.txt for agents", async () => {
    for (const r of CATALOG_REPOS) {
      const created = await api(app, "POST", "/repos", undefined, listingBody(r))
      expect(created.status, created.text).toBe(201)
    }
    await page.goto(`${app.origin}/`)
    const cards = page.locator("#newest article.listing")
    expect(await cards.count()).toBe(4)
    expect(await page.locator("#newest").innerText()).not.toContain("unpriced-thing")
    // The hostile description shows as text; it never ran.
    expect(await page.locator("#newest").innerText()).toContain("<script>alert('xss')</script>")
    expect(await page.locator("a[href='/listings?category=cli'] + .count").innerText()).toBe("1")
    expect(await page.locator("#agents a[href='/llms.txt']").count()).toBe(1)
    await screenshot(page, "catalog-home")
    await page.setViewportSize(PHONE)
    await screenshot(page, "catalog-home-phone")
    await page.setViewportSize(DESKTOP)
  }, 60_000)

  it("searching from the home page's form finds the name match first, then the README mention", async () => {
    await page.fill("#q", "parser")
    await Promise.all([page.waitForURL(/\/listings\?q=parser/), page.getByRole("button", { name: "Search" }).click()])
    await page.getByRole("heading", { name: "Results for “parser”" }).waitFor()
    const repos = await page.locator("#results article.listing h3 a").allInnerTexts()
    expect(repos).toEqual(["acme/fast-json-parser", "acme/notes-app"])
    // The form keeps the query for the next change.
    expect(await page.inputValue("#q")).toBe("parser")
    await screenshot(page, "catalog-search")
  }, 60_000)

  it("filters by price through the form, pages with Next, and opens a listing", async () => {
    await page.fill("#q", "")
    await page.fill("input[name=max_price_usd]", "12")
    await page.selectOption("select[name=sort]", "price")
    await Promise.all([page.waitForURL(/max_price_usd=12/), page.getByRole("button", { name: "Search" }).click()])
    expect(await page.locator("#results article.listing h3 a").allInnerTexts()).toEqual(["acme/evil-widget", "acme/rusty-cli", "acme/fast-json-parser"])
    await screenshot(page, "catalog-filtered")

    await page.goto(`${app.origin}/listings?sort=price&limit=2`)
    expect(await page.locator("#results article.listing h3 a").allInnerTexts()).toEqual(["acme/evil-widget", "acme/rusty-cli"])
    await Promise.all([page.waitForURL(/cursor=/), page.locator("a.next").click()])
    expect(await page.locator("#results article.listing h3 a").allInnerTexts()).toEqual(["acme/fast-json-parser", "acme/notes-app"])
    expect(await page.locator("a.next").count()).toBe(0)
    await screenshot(page, "catalog-next-page")

    await page.goBack()
    await Promise.all([page.waitForURL(/category=cli/), page.locator("#results a[href='/listings?category=cli']").first().click()])
    expect(await page.locator("#results article.listing h3 a").allInnerTexts()).toEqual(["acme/rusty-cli"])
    expect(await page.locator("#results h3 a").first().getAttribute("href")).toBe("/r/acme/rusty-cli")
    const opened = await page.goto(`${app.origin}/r/acme/rusty-cli`)
    expect(opened?.status()).toBe(200)
  }, 60_000)

  it("a bad parameter is a page naming it; nothing ran that should not have", async () => {
    const res = await page.goto(`${app.origin}/listings?max_price_usd=cheap`)
    expect(res?.status()).toBe(400)
    expect(await page.locator("body").innerText()).toContain("max_price_usd")
    await screenshot(page, "catalog-bad-parameter")
    expect(dialogs).toEqual([])
    expect(violations).toEqual([])
  }, 60_000)
})
