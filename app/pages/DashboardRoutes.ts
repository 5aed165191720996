import { HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, Option, Redacted } from "effect"
import type { Principal } from "../../domain/Credentials.js"
import { InvalidInput } from "../../domain/Errors.js"
import { Accounts, type AccountPatchInput } from "../../domain/usecases/Accounts.js"
import { Auth } from "../../domain/usecases/Auth.js"
import { Dashboard } from "../../domain/usecases/Dashboard.js"
import { HostConnection } from "../../domain/usecases/HostConnection.js"
import { Listings } from "../../domain/usecases/Listings.js"
import { Webhooks } from "../../domain/usecases/Webhooks.js"
import { PublicOrigin } from "../../ports/PublicOrigin.js"
import { problemBody } from "../Problem.js"
import { clientAddress } from "../handlers/ClientAddress.js"
import { dashboardHtml, type Notice } from "./DashboardPage.js"
import { type PageError, problemOf, problemPage, retryHeaders } from "./ErrorPage.js"
import { html, htmlResponse, newNonce } from "./Html.js"
import { type Form, PageSessions, readForm } from "./Session.js"
import { storageAsDefect } from "../Unavailable.js"

const see = (location: string) => HttpServerResponse.redirect(location, { status: 303, headers: { "cache-control": "no-store" } })

/** Results that need no secret on screen are redirected (post/redirect/get) to one of these fixed messages. */
const DONE = {
  listed: "Listed. Its checkout is below.",
  repriced: "Repriced. The old checkout no longer sells; share the new one.",
  token_updated: "Access token updated (stored encrypted). The old checkout no longer sells.",
  token_removed: "Access token removed. The old checkout no longer sells.",
  taken_down: "Taken down: its checkout is void, its page is gone and its token destroyed. Sales history is kept.",
  key_revoked: "API key revoked: it no longer works.",
  redelivered: "The sale's webhook event is queued again.",
  wallets_saved: "Wallets saved.",
  tagline_saved: "Tagline saved.",
  webhook_removed: "Webhook removed.",
  unchanged: "Nothing changed.",
  host_connected: "GitHub login connected."
} as const
type Done = keyof typeof DONE

type Outcome = { readonly done: Done; readonly anchor: string } | { readonly show: Notice; readonly anchor: string }

/** `"Owner/Name"` from a form's hidden `repo` field. */
const repoOf = (form: Form) => {
  const [owner, name, ...rest] = (form.get("repo") ?? "").split("/")
  return owner && name && rest.length === 0 ? Effect.succeed({ owner, name }) : Effect.fail(InvalidInput.forField("repo", "must be <owner>/<repo>"))
}

/** An empty form field is an absent one; other values are trimmed. */
const optional = (form: Form, name: string) => {
  const v = form.get(name)?.trim()
  return v === undefined || v === "" ? undefined : v
}

const required = (form: Form, name: string, message: string) => {
  const v = optional(form, name)
  return v === undefined ? Effect.fail(InvalidInput.forField(name, message)) : Effect.succeed(v)
}

export const dashboardRoutes = Effect.gen(function*() {
  const sessions = yield* PageSessions
  const auth = yield* storageAsDefect(Auth)
  const accounts = yield* storageAsDefect(Accounts)
  const listings = yield* storageAsDefect(Listings)
  const ledger = yield* storageAsDefect(Dashboard)
  const webhooks = yield* storageAsDefect(Webhooks)
  const hostConnection = yield* storageAsDefect(HostConnection)
  const { baseUrl } = yield* PublicOrigin

  /** The whole dashboard for a principal, with the outcome of the last action if any. */
  const render = (p: Principal, notice: Notice | undefined, status = 200) =>
    Effect.gen(function*() {
      const params = new URL((yield* HttpServerRequest.HttpServerRequest).url, "http://x").searchParams
      const sales = (livemode: boolean, cursor: string | null) =>
        ledger.sales(p, { livemode, cursor: cursor ?? undefined }).pipe(
          // A stale or hand-edited cursor shows the newest page instead of an error page.
          Effect.catchTag("InvalidInput", () => ledger.sales(p, { livemode }))
        )
      const [account, inventory, keys, live, test] = yield* Effect.all([
        accounts.get(p),
        listings.inventory(p),
        auth.listApiKeys(p),
        sales(true, params.get("live")),
        sales(false, params.get("test"))
      ], { concurrency: 5 })
      const nonce = newNonce()
      const page = dashboardHtml({ account, listings: inventory, keys, live, test, hostConnection: hostConnection.configured }, { csrf: sessions.csrfToken(p), baseUrl, nonce, notice })
      return htmlResponse(page, {
        status,
        nonce,
        // "Connect GitHub" posts here and is redirected to GitHub's authorize page.
        formTargets: hostConnection.authorizeOrigin === null ? [] : [hostConnection.authorizeOrigin],
        headers: notice?.kind === "error" ? retryHeaders(notice.problem) : {}
      })
    })

  const done = (params: URLSearchParams): Notice | undefined => {
    const code = params.get("done")
    return code !== null && code in DONE ? { kind: "ok" as const, text: DONE[code as Done] } : undefined
  }

  /** `GET /dashboard`: needs the session cookie, else to the sign-in page. */
  const show = Effect.gen(function*() {
    const principal = yield* sessions.current
    // A stale cookie (expired, signed out) is dropped on the way to the sign-in page.
    if (Option.isNone(principal)) return sessions.withoutSession(see("/signin"))
    const params = new URL((yield* HttpServerRequest.HttpServerRequest).url, "http://x").searchParams
    return yield* render(principal.value, done(params))
  }).pipe(
    Effect.catchTags({
      RateLimited: (e) => Effect.succeed(problemPage(problemOf(e))),
      // The account behind the session is gone.
      Unauthenticated: () => Effect.succeed(sessions.withoutSession(see("/signin")))
    })
  )

  /**
   * A dashboard action: session cookie, CSRF token and origin first; then the use case. Success redirects to
   * a fixed message (or shows a secret once); a use-case failure re-renders the dashboard with its problem.
   */
  const action = (run: (p: Principal, form: Form) => Effect.Effect<Outcome, PageError, HttpServerRequest.HttpServerRequest>) =>
    Effect.gen(function*() {
      const req = yield* HttpServerRequest.HttpServerRequest
      const principal = yield* sessions.current
      if (Option.isNone(principal)) return see("/signin")
      const form = yield* readForm
      if (!sessions.checkForm(req, form, principal.value)) {
        return problemPage(
          problemBody(403, "csrf_failed", "Request refused", "This form is stale or was not sent from your dashboard; nothing was changed."),
          html`<p><a href="/dashboard">Open the dashboard</a> and try again.</p>`
        )
      }
      const outcome = yield* Effect.either(run(principal.value, form))
      if (outcome._tag === "Left") {
        const problem = problemOf(outcome.left)
        return yield* render(principal.value, { kind: "error", problem }, problem.status)
      }
      const o = outcome.right
      return "done" in o ? see(`/dashboard?done=${o.done}#${o.anchor}`) : yield* render(principal.value, o.show)
    }).pipe(
      Effect.catchTags({
        RateLimited: (e) => Effect.succeed(problemPage(problemOf(e))),
        Unauthenticated: () => Effect.succeed(sessions.withoutSession(see("/signin")))
      })
    )

  /** Only the account fields that differ from what is saved are sent: an unchanged wallet is not re-added. */
  const changed = (current: string | null, submitted: string | undefined): string | undefined => {
    const value = submitted?.trim() ?? ""
    if (value === (current ?? "")) return undefined
    return value
  }

  const patchAccount = (p: Principal, build: (a: { wallets: { base: string | null; solana: string | null }; storefrontTagline: string | null; webhookUrl: string | null }) => AccountPatchInput) =>
    Effect.flatMap(accounts.get(p), (current) => {
      const input = build(current)
      const sent = Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined)) as AccountPatchInput
      return Object.keys(sent).length === 0 ? Effect.succeed(null) : accounts.patch(p, sent)
    })

  const createListing = action((p, form) =>
    Effect.gen(function*() {
      const hostPat = optional(form, "host_pat")
      yield* listings.create({
        host_url: form.get("host_url")?.trim() ?? "",
        price_usd: optional(form, "price_usd"),
        wallet_base: optional(form, "wallet_base"),
        wallet_solana: optional(form, "wallet_solana"),
        host_pat: hostPat === undefined ? undefined : Redacted.make(hostPat)
      }, p, yield* clientAddress)
      return { done: "listed", anchor: "listings" } as const
    }))

  const reprice = action((p, form) =>
    Effect.gen(function*() {
      const { owner, name } = yield* repoOf(form)
      const price = yield* required(form, "price_usd", "enter a price such as 12.34")
      yield* listings.update(owner, name, { price_usd: price }, p)
      return { done: "repriced", anchor: "listings" } as const
    }))

  const updateToken = action((p, form) =>
    Effect.gen(function*() {
      const { owner, name } = yield* repoOf(form)
      const clear = form.get("clear") === "1"
      const token = clear ? "" : yield* required(form, "host_pat", "paste the new access token")
      yield* listings.update(owner, name, { host_pat: Redacted.make(token) }, p)
      return { done: clear ? "token_removed" : "token_updated", anchor: "listings" } as const
    }))

  const takedown = action((p, form) =>
    Effect.gen(function*() {
      const { owner, name } = yield* repoOf(form)
      yield* listings.takedown(owner, name, p)
      return { done: "taken_down", anchor: "listings" } as const
    }))

  const createKey = action((p) =>
    Effect.map(auth.createApiKey(p), ({ key }) => ({
      show: { kind: "ok", text: "API key created.", secret: { label: "Your new API key", value: Redacted.value(key) } },
      anchor: "keys"
    } as const)))

  const revokeKey = action((p, form) =>
    Effect.as(auth.revokeApiKey(p, form.get("id") ?? ""), { done: "key_revoked", anchor: "keys" } as const))

  const redeliver = action((p, form) =>
    Effect.as(webhooks.redeliver(p, form.get("sale_id") ?? ""), { done: "redelivered", anchor: "sales" } as const))

  const saveWallets = action((p, form) =>
    Effect.map(
      patchAccount(p, (a) => ({ wallet_base: changed(a.wallets.base, form.get("wallet_base")), wallet_solana: changed(a.wallets.solana, form.get("wallet_solana")) })),
      (r): Outcome =>
        r === null ? { done: "unchanged", anchor: "settings" }
        : r.listingsSkipped.length === 0 ? { done: "wallets_saved", anchor: "settings" }
        : {
          show: { kind: "ok", text: "Wallets saved. Some listings could not take the new wallet:", details: r.listingsSkipped.map((s) => `${s.repo}: ${s.reason.replace(/_/g, " ")}`) },
          anchor: "settings"
        }
    ))

  const saveTagline = action((p, form) =>
    Effect.map(patchAccount(p, (a) => ({ storefront_tagline: changed(a.storefrontTagline, form.get("storefront_tagline")) })), (r): Outcome =>
      ({ done: r === null ? "unchanged" : "tagline_saved", anchor: "settings" })))

  /** Any non-empty URL is set again, so the seller can rotate the secret; empty removes the webhook. */
  const saveWebhook = action((p, form) =>
    Effect.gen(function*() {
      const url = form.get("webhook_url")?.trim() ?? ""
      const r = yield* patchAccount(p, (a) => ({ webhook_url: url === "" && a.webhookUrl === null ? undefined : url }))
      if (r === null) return { done: "unchanged", anchor: "settings" } as const
      if (r.webhookSecret === null) return { done: "webhook_removed", anchor: "settings" } as const
      return {
        show: { kind: "ok", text: "Webhook saved.", secret: { label: "Signing secret", value: Redacted.value(r.webhookSecret) } },
        anchor: "settings"
      } as const
    }))

  return { show, createListing, reprice, updateToken, takedown, createKey, revokeKey, redeliver, saveWallets, saveTagline, saveWebhook } as const
})
