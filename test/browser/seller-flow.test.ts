import { x402Client } from "@x402/core/client"
import { ExactEvmScheme } from "@x402/evm/exact/client"
import { wrapFetchWithPayment } from "@x402/fetch"
import { afterAll, beforeAll, expect, it } from "vitest"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import type { Browser, BrowserContext, Page } from "playwright-core"
import { BASE_WALLET } from "../support/app.js"
import {
  api,
  type BrowserApp,
  describeBrowser,
  DESKTOP,
  launchChromium,
  PHONE,
  screenshot,
  signInThroughMail,
  startBrowserApp,
  startWebhookReceiver,
  type WebhookReceiver
} from "./support.js"

const EMAIL = "seller@example.com"
const DAY_MS = 24 * 60 * 60 * 1000

/** Waits until `check` holds, reloading the page between looks (the dashboard is server-rendered). */
const eventually = async (page: Page, check: () => Promise<boolean>, timeoutMs = 15_000) => {
  const until = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > until) throw new Error("condition not met in time")
    await new Promise((r) => setTimeout(r, 250))
    await page.reload()
  }
}

describeBrowser("a seller in Chromium: sign in by mail, list, reprice, keys, a test sale", () => {
  let app: BrowserApp
  let hook: WebhookReceiver
  let browser: Browser
  let context: BrowserContext
  let page: Page
  /** Content-Security-Policy violations reported by the browser on our own pages: there must be none. */
  const violations: Array<string> = []
  const state = { firstCheckout: "", checkout: "", testCheckout: "" }
  const card = () => page.locator(`article.listing[data-repo="Octo-Org/Widget"]`)
  const notice = () => page.locator(".notice")

  beforeAll(async () => {
    hook = await startWebhookReceiver()
    app = await startBrowserApp()
    browser = await launchChromium()
    context = await browser.newContext({ viewport: DESKTOP })
    page = await context.newPage()
    page.on("console", (m) => {
      if (/Content Security Policy|Refused to/i.test(m.text())) violations.push(m.text())
    })
    page.on("pageerror", (e) => violations.push(`page error: ${e.message}`))
  })

  afterAll(async () => {
    await browser?.close()
    await app?.close()
    await hook?.close()
  })

  it("signs in through the link mailed over real SMTP; the session is an HttpOnly, SameSite=Lax cookie", async () => {
    const { mail } = await signInThroughMail(page, app, EMAIL, { signin: "01-signin", sent: "02-check-your-mail", confirm: "03-confirm-link" })
    expect(mail.subject).toBe("Your repomarket sign-in link")
    expect(page.url()).toBe(`${app.origin}/dashboard`)
    await expect(page.locator(".who").textContent()).resolves.toBe(EMAIL)
    const session = (await context.cookies()).find((c) => c.name === "rm_session")
    expect(session).toMatchObject({ httpOnly: true, sameSite: "Lax", path: "/", secure: false, domain: "127.0.0.1" })
    expect(Math.abs(session!.expires * 1000 - (Date.now() + 30 * DAY_MS))).toBeLessThan(60_000)
    // HttpOnly: no script on the page can read it.
    expect(await page.evaluate("document.cookie")).toBe("")
    await screenshot(page, "04-dashboard-empty")
    expect(violations).toEqual([])
  })

  it("saves a payout wallet and a webhook; the signing secret is shown once", async () => {
    await page.fill("#wallet_base", BASE_WALLET)
    await page.getByRole("button", { name: "Save wallets" }).click()
    await page.waitForURL(/done=wallets_saved/)
    await expect(notice().textContent()).resolves.toContain("Wallets saved.")
    await expect(page.inputValue("#wallet_base")).resolves.toBe(BASE_WALLET)

    await page.fill("#webhook_url", hook.url)
    await page.getByRole("button", { name: "Save webhook" }).click()
    await expect(notice().textContent()).resolves.toContain("Webhook saved.")
    const secret = (await page.locator("#new-secret").textContent())!
    expect(secret).toMatch(/^whsec_/)
    await screenshot(page, "05-webhook-secret-once")
    await page.goto(`${app.origin}/dashboard`)
    expect(await page.content()).not.toContain(secret)
    await expect(page.locator("#webhook-url").textContent()).resolves.toBe(hook.url)
    expect(violations).toEqual([])
  })

  it("lists a repo through the form; its repo page and the owner page render for a browser", async () => {
    await page.fill("#host_url", "https://github.com/octo-org/widget")
    await page.fill("#price_usd", "2.00")
    await page.getByRole("button", { name: "List it" }).click()
    await page.waitForURL(/done=listed/)
    await expect(card().locator(".listing-price").textContent()).resolves.toBe("$2.00")
    await expect(card().textContent()).resolves.toContain("On sale for 2.00 USDC on Base.")
    state.firstCheckout = (await card().locator(".checkout-url").textContent())!
    expect(state.firstCheckout).toMatch(new RegExp(`^${app.origin}/checkout/chk_`))
    await screenshot(page, "06-dashboard-listed")

    await card().getByRole("link", { name: "Octo-Org/Widget" }).click()
    await page.waitForURL(`${app.origin}/r/Octo-Org/Widget`)
    await expect(page.locator("h1").textContent()).resolves.toBe("Octo-Org/Widget")
    await expect(page.locator("#checkout-url").textContent()).resolves.toBe(state.firstCheckout)
    // The tree is browsable: the folder opens on a click, no script needed.
    await expect(page.getByText("index.ts").isVisible()).resolves.toBe(false)
    await page.getByText("src/").click()
    await expect(page.getByText("index.ts").isVisible()).resolves.toBe(true)
    await expect(page.locator("article.readme").textContent()).resolves.toContain("Hello <script>alert(1)</script>")
    // The one script allowed (by nonce) ran: it added the copy button to the example.
    await expect(page.locator("button.copy").count()).resolves.toBe(1)
    await screenshot(page, "07-repo-page")

    await page.goto(`${app.origin}/r/octo-org`)
    await expect(page.locator("#inventory").textContent()).resolves.toContain("$2.00")
    await expect(page.locator("#indexed").textContent()).resolves.toContain("Octo-Org/free-thing")
    await screenshot(page, "08-owner-page")
    expect(violations).toEqual([])
  })

  it("reprices it: the old checkout dies (410) and the new one asks for payment (402)", async () => {
    await page.goto(`${app.origin}/dashboard`)
    // A refused price is a readable problem on the dashboard, and nothing changes.
    await card().locator(`input[name="price_usd"]`).fill("0.755")
    await card().getByRole("button", { name: "Reprice" }).click()
    await expect(page.locator(`.notice.error[data-code="invalid_request"]`).textContent()).resolves.toContain("price_usd")
    await expect(card().locator(".checkout-url").textContent()).resolves.toBe(state.firstCheckout)
    await screenshot(page, "09a-dashboard-problem")
    await card().locator(`input[name="price_usd"]`).fill("0.75")
    await card().getByRole("button", { name: "Reprice" }).click()
    await page.waitForURL(/done=repriced/)
    await expect(card().locator(".listing-price").textContent()).resolves.toBe("$0.75")
    state.checkout = (await card().locator(".checkout-url").textContent())!
    state.testCheckout = (await card().locator(".test-checkout-url").textContent())!
    expect(state.checkout).not.toBe(state.firstCheckout)

    const old = await fetch(state.firstCheckout)
    expect(old.status).toBe(410)
    expect(await old.json()).toMatchObject({ code: "checkout_gone", page: `${app.origin}/r/Octo-Org/Widget` })
    expect((await fetch(`${state.firstCheckout}/test`)).status).toBe(410)
    expect((await fetch(state.testCheckout)).status).toBe(402)
    await screenshot(page, "09-dashboard-repriced")
    expect(violations).toEqual([])
  })

  it("creates an API key, shown once, and revokes it: the next JSON call with it is 401", async () => {
    await page.getByRole("button", { name: "Create an API key" }).click()
    await expect(notice().textContent()).resolves.toContain("API key created.")
    const key = (await page.locator("#new-secret").textContent())!
    expect(key).toMatch(/^rmkt_[A-Za-z0-9]{36}$/)
    await screenshot(page, "10-api-key-once")
    expect((await api(app, "GET", "/my/account", key)).json.email).toBe(EMAIL)

    await page.goto(`${app.origin}/dashboard`)
    expect(await page.content()).not.toContain(key)
    const row = page.locator(`table.keys tr`, { hasText: key.slice(-4) })
    await row.getByRole("button", { name: "Revoke" }).click()
    await page.waitForURL(/done=key_revoked/)
    const refused = await api(app, "GET", "/my/account", key)
    expect(refused.status).toBe(401)
    expect(refused.json.code).toBe("unauthenticated")
    await expect(page.locator("table.keys").count()).resolves.toBe(0)
    expect(violations).toEqual([])
  })

  it("a test-twin purchase by the official x402 client shows on the dashboard with its webhook status", async () => {
    const buyer = privateKeyToAccount(generatePrivateKey())
    const pay = wrapFetchWithPayment(fetch, new x402Client().register("eip155:*", new ExactEvmScheme(buyer)))
    const paid = await pay(state.testCheckout)
    expect(paid.status).toBe(200)
    expect(paid.headers.get("content-type")).toBe("application/gzip")
    await paid.arrayBuffer()

    await page.goto(`${app.origin}/dashboard#sales`)
    const sale = page.locator("#test-sales tbody tr")
    await eventually(page, async () => (await page.locator("#test-sales .webhook-delivered").count()) === 1)
    await expect(sale.count()).resolves.toBe(1)
    const text = (await sale.textContent())!
    for (const part of ["Octo-Org/Widget", "$0.75", "eip155:84532", buyer.address.slice(0, 8), "delivered", "(1 attempt)"]) expect(text).toContain(part)
    await expect(page.locator("#live-sales").textContent()).resolves.toBe("No live sales yet.")
    expect(hook.received).toHaveLength(1)
    expect(JSON.parse(hook.received[0]!.body)).toMatchObject({ type: "sale.settled", livemode: false, data: { repo: "Octo-Org/Widget", amount_usd: "0.75" } })
    await screenshot(page, "11-dashboard-test-sale")

    await sale.getByRole("button", { name: "Redeliver" }).click()
    await page.waitForURL(/done=redelivered/)
    await expect(notice().textContent()).resolves.toContain("queued again")
    await eventually(page, async () => hook.received.length === 2 && (await page.locator("#test-sales .webhook-delivered").count()) === 1)
    expect(violations).toEqual([])
  })

  it("reads on a phone: no page scrolls sideways at 390 px", async () => {
    const phone = await browser.newContext({ viewport: PHONE, isMobile: true, hasTouch: true, storageState: await context.storageState() })
    const anonymous = await browser.newContext({ viewport: PHONE, isMobile: true, hasTouch: true })
    try {
      for (const [ctx, name, path] of [
        [anonymous, "signin", "/signin"],
        [phone, "dashboard", "/dashboard"],
        [phone, "repo-page", "/r/Octo-Org/Widget"],
        [phone, "owner-page", "/r/Octo-Org"]
      ] as const) {
        const p = await ctx.newPage()
        await p.goto(`${app.origin}${path}`)
        expect(new URL(p.url()).pathname).toBe(path)
        // A string: this project compiles without the DOM library.
        const { scroll, width } = await p.evaluate<{ scroll: number; width: number }>("({ scroll: document.documentElement.scrollWidth, width: window.innerWidth })")
        expect({ name, scroll }).toEqual({ name, scroll: width })
        await screenshot(p, `phone-${name}`)
      }
    } finally {
      await phone.close()
      await anonymous.close()
    }
  })

  it("takes the listing down: the repo page becomes a 404 page; signing out returns to the sign-in page", async () => {
    await page.goto(`${app.origin}/dashboard`)
    await card().getByText("Take down…").click()
    await card().getByRole("button", { name: "Take down" }).click()
    await page.waitForURL(/done=taken_down/)
    await expect(page.locator("#listings").textContent()).resolves.toContain("No listings yet.")
    // The sale stays in the ledger.
    await expect(page.locator("#test-sales tbody tr").count()).resolves.toBe(1)
    const gone = await page.goto(`${app.origin}/r/Octo-Org/Widget`)
    expect(gone!.status()).toBe(404)
    await expect(page.locator("h1").textContent()).resolves.toBe("Not found")
    await screenshot(page, "12-repo-taken-down-404")
    expect((await fetch(state.checkout)).status).toBe(410)

    await page.goto(`${app.origin}/signout`)
    await page.getByRole("button", { name: "Sign out of this browser" }).click()
    await page.getByRole("heading", { name: "Signed out" }).waitFor()
    await screenshot(page, "13-signed-out")
    expect((await context.cookies()).find((c) => c.name === "rm_session")).toBeUndefined()
    await page.goto(`${app.origin}/dashboard`)
    expect(page.url()).toBe(`${app.origin}/signin`)
    expect(violations).toEqual([])
  })
})
