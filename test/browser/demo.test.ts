/*
 * `npm run demo` in Chromium, with every request to anything but the demo's own origin refused: the home page
 * lists the sample repositories, a repo page leads to the test twin ("Rehearse with simulated money"), and a
 * wallet in the browser buys there; the archive downloads. Nothing of it needs the network.
 */
import { readFile } from "node:fs/promises"
import { gunzipSync } from "node:zlib"
import type { Browser } from "playwright-core"
import { afterAll, beforeAll, expect, it } from "vitest"
import { DEMO_REPOS } from "../../scripts/demo/repos.js"
import { closedPort } from "../faults/fakeFacilitator.js"
import { type DemoProcess, startDemo } from "../support/demoProcess.js"
import { describeBrowser, DESKTOP, launchChromium, screenshot } from "./support.js"
import { injectEthereumWallet } from "./testWallets.js"

describeBrowser("npm run demo in Chromium, offline", () => {
  let demo: DemoProcess
  let browser: Browser
  let origin: string

  beforeAll(async () => {
    const port = await closedPort()
    demo = startDemo(["--no-buy"], { PORT: String(port) })
    await demo.waitFor((out) => out.includes("Ctrl-C stops the demo."), 120_000)
    origin = `http://localhost:${port}`
    browser = await launchChromium()
  }, 130_000)
  afterAll(async () => {
    await browser?.close()
    await demo?.kill()
  })

  it("the home page lists the samples, and a repo page's test twin sells to the wallet in the browser", async () => {
    const context = await browser.newContext({ viewport: DESKTOP, acceptDownloads: true })
    const elsewhere: Array<string> = []
    await context.route("**/*", (route) => {
      const url = route.request().url()
      if (url.startsWith(`${origin}/`)) return route.continue()
      elsewhere.push(url)
      return route.abort()
    })
    const page = await context.newPage()
    await page.goto(`${origin}/`)
    for (const { repo } of DEMO_REPOS) {
      await expect(page.locator(`a[href="/r/${repo.owner}/${repo.name}"]`).count()).resolves.toBeGreaterThan(0)
    }
    await screenshot(page, "demo-01-home")

    const first = DEMO_REPOS[0]!
    await page.locator(`a[href="/r/${first.repo.owner}/${first.repo.name}"]`).first().click()
    await page.waitForURL(`${origin}/r/${first.repo.owner}/${first.repo.name}`)
    await expect(page.locator("body").textContent()).resolves.toContain(first.repo.description!)
    await injectEthereumWallet(page)
    await page.getByRole("link", { name: /Rehearse with simulated money/ }).click()
    await page.waitForURL(/\/checkout\/[^/]+\/test$/)
    await screenshot(page, "demo-02-test-twin")
    const download = page.waitForEvent("download")
    await page.getByRole("button", { name: new RegExp(`Pay \\$${first.priceUsd.replace(".", "\\.")} USDC with Test Wallet \\(Base\\)`) }).click()
    const file = await download
    await page.locator('#status[data-state="paid"]').waitFor({ timeout: 20_000 })
    await screenshot(page, "demo-03-paid")
    expect(file.suggestedFilename()).toMatch(new RegExp(`^${first.repo.owner}-${first.repo.name}-[0-9a-f]{7}\\.tar\\.gz$`))
    const bytes = await readFile((await file.path())!)
    expect(gunzipSync(bytes).length).toBeGreaterThan(0)
    expect(elsewhere).toEqual([])
    await context.close()
  }, 90_000)
})
