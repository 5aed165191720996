import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { copyJs, favicon, immutableAsset, siteCss } from "./Assets.js"
import { WEB_ASSETS } from "./generated/WebAssets.js"
import { dashboardRoutes } from "./DashboardRoutes.js"
import { discoveryRoutes } from "./DiscoveryRoutes.js"
import { internalErrorPage, problemPage } from "./ErrorPage.js"
import { hostConnectionRoutes } from "./HostConnectionPages.js"
import { databaseUnavailableProblem, isDatabaseUnavailable } from "../Unavailable.js"
import { html } from "./Html.js"
import { signInRoutes } from "./SignInPage.js"

/**
 * A page never answers with a trace: a database that did not answer in time is a 503 page with Retry-After;
 * any other unexpected failure is logged and shown as a plain 500 page.
 */
const safely = <E, R>(page: Effect.Effect<import("@effect/platform").HttpServerResponse.HttpServerResponse, E, R>) =>
  page.pipe(
    Effect.catchAllCause((cause) =>
      isDatabaseUnavailable(cause)
        ? Effect.succeed(problemPage(databaseUnavailableProblem(), html`<p>Try again in a moment.</p>`))
        : Effect.as(Effect.logError("Page failed", cause), internalErrorPage()))
  )

/**
 * The HTML routes beside the API: the stylesheet and script, the icon, robots.txt, llms.txt and the sitemap, sign-in and sign-out, the code-host connection
 * (browser-session only: start, GitHub's callback, confirm), and the dashboard with
 * its form actions (all POSTs under /dashboard/, each checked for the session cookie and the CSRF token).
 * The public pages `/r/<owner>` and `/r/<owner>/<repo>` are the API's own endpoints, negotiated on Accept.
 * Needs `PageSessions` (provided once by the app, beside the API that also uses it for `/auth/verify`).
 */
export const PageRoutesLive = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function*() {
    const signIn = yield* signInRoutes
    const dash = yield* dashboardRoutes
    const host = yield* hostConnectionRoutes
    const discovery = yield* discoveryRoutes
    yield* router.get("/assets/site.css", siteCss)
    yield* router.get("/assets/copy.js", copyJs)
    yield* router.get("/favicon.svg", favicon)
    yield* router.get("/favicon.ico", favicon)
    yield* router.get("/robots.txt", discovery.robots)
    yield* router.get("/llms.txt", discovery.llms)
    yield* router.get("/.well-known/x402", safely(discovery.wellKnownX402))
    yield* router.get("/sitemap.xml", safely(discovery.sitemapXml))
    yield* router.get("/sitemaps/:file", safely(discovery.sitemapFile))
    for (const built of Object.values(WEB_ASSETS)) yield* router.get(built.path as `/${string}`, immutableAsset(built))
    yield* router.get("/signin", safely(signIn.showSignIn))
    yield* router.post("/signin", safely(signIn.requestLink))
    yield* router.get("/signout", safely(signIn.showSignOut))
    yield* router.post("/signout", safely(signIn.signOut))
    yield* router.post("/auth/host/start", safely(host.start))
    yield* router.get("/auth/host/start", safely(host.startByGet))
    yield* router.get("/auth/host/callback", safely(host.callback))
    yield* router.post("/auth/host/confirm", safely(host.confirm))
    yield* router.get("/dashboard", safely(dash.show))
    yield* router.post("/dashboard/listings", safely(dash.createListing))
    yield* router.post("/dashboard/listings/price", safely(dash.reprice))
    yield* router.post("/dashboard/listings/token", safely(dash.updateToken))
    yield* router.post("/dashboard/listings/takedown", safely(dash.takedown))
    yield* router.post("/dashboard/keys", safely(dash.createKey))
    yield* router.post("/dashboard/keys/revoke", safely(dash.revokeKey))
    yield* router.post("/dashboard/sales/redeliver", safely(dash.redeliver))
    yield* router.post("/dashboard/account/wallets", safely(dash.saveWallets))
    yield* router.post("/dashboard/account/tagline", safely(dash.saveTagline))
    yield* router.post("/dashboard/account/webhook", safely(dash.saveWebhook))
  })
)
