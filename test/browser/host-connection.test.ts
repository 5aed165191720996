import { afterAll, beforeAll, expect, it } from "vitest"
import type { Browser, BrowserContext, Page } from "playwright-core"
import { makeFakeGithub } from "../adapters/github/FakeGithub.js"
import { api, apiSession, type BrowserApp, describeBrowser, DESKTOP, launchChromium, screenshot, signInThroughMail, startBrowserApp } from "./support.js"

const gh = makeFakeGithub([{ owner: "Octo-Org", name: "Widget" }])
const AUTHORIZE = "https://github.com/login/oauth/authorize**"
const isAuthorize = (url: string) => url.startsWith("https://github.com/login/oauth/authorize?")

/**
 * GitHub's authorize page, played in Chromium: an "Authorize" link back to the app's callback with a code bound
 * to the PKCE challenge (the server-side token exchange and GET /user are answered by the same fake through
 * msw). Every request is routed: a pattern alone misses the redirect that follows a form post.
 */
const githubAuthorizePage = async (page: Page, login: string) => {
  await page.route("**/*", async (route) => {
    if (!isAuthorize(route.request().url())) return route.continue()
    try {
      const back = gh.authorize(route.request().url(), login)
      await route.fulfill({ status: 200, contentType: "text/html", body: `<!doctype html><title>Authorize</title><a id="authorize" href="${back.href.replace(/&/g, "&amp;")}">Authorize as ${login}</a>` })
    } catch (e) {
      await route.fulfill({ status: 400, contentType: "text/plain", body: String(e) })
    }
  })
}

/** Approves on GitHub's authorize page, which sends the browser back to the callback. */
const approve = async (page: Page) => {
  await page.locator("#authorize").click()
  await page.waitForURL((url) => url.pathname === "/auth/host/callback")
}

describeBrowser("the GitHub connection in Chromium: started from the dashboard, confirmed, bound to that browser", () => {
  let app: BrowserApp
  let browser: Browser
  const contexts: Array<BrowserContext> = []
  const newPage = async () => {
    const context = await browser.newContext({ viewport: DESKTOP })
    contexts.push(context)
    return { context, page: await context.newPage() }
  }

  beforeAll(async () => {
    gh.server.listen({
      onUnhandledRequest: (request, print) => {
        if (!["127.0.0.1", "localhost", "[::1]"].includes(new URL(request.url).hostname)) print.error()
      }
    })
    app = await startBrowserApp({ githubOAuth: { clientId: "oauth-client-id", clientSecret: "oauth-client-secret" } })
    browser = await launchChromium()
  })

  afterAll(async () => {
    for (const c of contexts) await c.close()
    await browser?.close()
    await app?.close()
    gh.server.close()
  })

  it("a seller connects their login: dashboard → GitHub → a confirmation naming login and account → connected", async () => {
    const { context, page } = await newPage()
    await signInThroughMail(page, app, "gh-seller@example.com")
    await githubAuthorizePage(page, "Octo-Org")
    await page.getByRole("button", { name: "Connect GitHub" }).click()
    await page.waitForURL((url) => url.hostname === "github.com")
    await approve(page)
    await expect(page.locator("#host-login").textContent()).resolves.toBe("Octo-Org")
    await expect(page.locator("#account-email").textContent()).resolves.toBe("gh-seller@example.com")
    // The flow's nonce: HttpOnly, SameSite=Lax, only for the flow's paths.
    const nonce = (await context.cookies(`${app.origin}/auth/host/confirm`)).find((c) => c.name === "rm_host_connect")
    expect(nonce).toMatchObject({ httpOnly: true, sameSite: "Lax", path: "/auth/host" })
    expect(gh.pkceVerified).toBe(1)
    await screenshot(page, "host-connection-confirm")
    await Promise.all([page.waitForURL(`${app.origin}/dashboard?done=host_connected#code-host`), page.getByRole("button", { name: "Connect Octo-Org" }).click()])
    await expect(page.locator("#connected-host-login").textContent()).resolves.toBe("Octo-Org")
    expect((await context.cookies(`${app.origin}/auth/host/confirm`)).some((c) => c.name === "rm_host_connect")).toBe(false)
  })

  it("an attacker's authorization link opened in the victim's browser is refused and connects nothing", async () => {
    // The attacker starts from its own dashboard and keeps GitHub's authorize link instead of following it.
    const attacker = await newPage()
    await signInThroughMail(attacker.page, app, "gh-attacker@example.com")
    let link = ""
    await attacker.page.route("**/*", async (route) => {
      if (!isAuthorize(route.request().url())) return route.continue()
      link = route.request().url()
      await route.fulfill({ status: 200, contentType: "text/plain", body: "kept" })
    })
    await attacker.page.getByRole("button", { name: "Connect GitHub" }).click()
    await attacker.page.waitForURL(AUTHORIZE)
    expect(link).toContain("state=")

    // The victim, signed in to their own account, opens it and approves on GitHub.
    const victim = await newPage()
    await signInThroughMail(victim.page, app, "gh-victim@example.com")
    await githubAuthorizePage(victim.page, "Victim-Login")
    await victim.page.goto(link)
    const [landed] = await Promise.all([victim.page.waitForResponse((r) => new URL(r.url()).pathname === "/auth/host/callback"), approve(victim.page)])
    expect(landed.status()).toBe(403)
    await expect(victim.page.locator(".notice.error").textContent()).resolves.toContain("not started in this browser")
    await expect(victim.page.locator("form[action='/auth/host/confirm']").count()).resolves.toBe(0)
    await screenshot(victim.page, "host-connection-refused")

    for (const email of ["gh-attacker@example.com", "gh-victim@example.com"]) {
      const account = await api(app, "GET", "/my/account", await apiSession(app, email))
      expect(account.json.host_login, email).toBeNull()
    }
  })
})
