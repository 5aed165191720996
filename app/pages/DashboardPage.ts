import type { Account } from "../../domain/Account.js"
import type { ApiKey } from "../../domain/Credentials.js"
import type { Listing } from "../../domain/Listing.js"
import { formatUsd } from "../../domain/Money.js"
import type { LedgerPage, LedgerRow } from "../../domain/usecases/Dashboard.js"
import type { ProblemJson } from "../Problem.js"
import { listingView } from "../Views.js"
import { problemBox } from "./ErrorPage.js"
import { dollars, html, type Html, layout, updatesWords, when } from "./Html.js"

export interface DashboardData {
  readonly account: Account
  readonly listings: ReadonlyArray<Listing>
  readonly keys: ReadonlyArray<ApiKey>
  readonly live: LedgerPage
  readonly test: LedgerPage
  /** Whether the operator configured the code-host connection (an OAuth app). */
  readonly hostConnection: boolean
}

/** What the last action did: a fixed message, a secret shown this once, or the problem it met. */
export type Notice =
  | { readonly kind: "ok"; readonly text: string; readonly secret?: { readonly label: string; readonly value: string }; readonly details?: ReadonlyArray<string> }
  | { readonly kind: "error"; readonly problem: ProblemJson }

export interface DashboardOptions {
  readonly csrf: string
  readonly baseUrl: string
  readonly nonce: string
  readonly notice?: Notice | undefined
}

const chainLabel = { base: "Base", solana: "Solana" } as const

const noticeBox = (n: Notice): Html =>
  n.kind === "error" ? problemBox(n.problem) : html`<div class="notice ok" role="status"><p><strong>${n.text}</strong></p>${
    n.secret === undefined ? "" : html`<label>${n.secret.label} — shown once: copy it now</label>
<code class="secret" id="new-secret" data-copy>${n.secret.value}</code>`
  }${n.details === undefined || n.details.length === 0 ? "" : html`<ul>${n.details.map((d) => html`<li>${d}</li>`)}</ul>`}</div>`

/** A POST form to one of the dashboard's actions, carrying the CSRF token. */
const form = (o: DashboardOptions, action: string, fields: Html, button: Html, hidden: Record<string, string> = {}) =>
  html`<form class="inline" method="post" action="/dashboard/${action}"><input type="hidden" name="csrf" value="${o.csrf}">${
    Object.entries(hidden).map(([k, v]) => html`<input type="hidden" name="${k}" value="${v}">`)
  }${fields}${button}</form>`

const listingCard = (l: Listing, o: DashboardOptions) => {
  const v = listingView(l, o.baseUrl)
  const repo = { repo: v.repo }
  return html`<article class="card listing" data-repo="${v.repo}">
<h3><a href="${v.page}">${v.repo}</a>${v.private ? html` <span class="muted">(private)</span>` : ""}</h3>
<p><strong class="listing-price">${dollars(v.price_usd)}</strong> · <span class="${v.selling ? "ok" : "bad"}">${v.note}</span></p>
<p class="muted">Chains: ${v.chains.map((c) => chainLabel[c]).join(", ") || "none"} · Access token: ${v.has_host_pat ? "stored (encrypted)" : "none"} · <span class="listing-updates">${updatesWords(v.updates_days)}</span></p>
<label>Checkout</label><code class="url checkout-url">${v.checkout_url}</code>
<label>Test checkout</label><code class="url test-checkout-url">${v.test_checkout_url}</code>
${form(o, "listings/price", html`<label>New price (USD)<input type="text" name="price_usd" inputmode="decimal" placeholder="12.34" required></label>`, html`<button type="submit">Reprice</button>`, repo)}
${form(o, "listings/token", html`<label>Access token (private repo)<input type="password" name="host_pat" autocomplete="off" required></label>`, html`<button type="submit" class="secondary">Update token</button>`, repo)}
${v.has_host_pat ? form(o, "listings/token", html``, html`<button type="submit" class="secondary">Remove token</button>`, { ...repo, clear: "1" }) : ""}
<details class="danger-zone"><summary>Take down…</summary>
<p class="muted">Voids the checkout, removes the page and destroys the stored token. Sales history is kept.</p>
${form(o, "listings/takedown", html``, html`<button type="submit" class="danger">Take down</button>`, repo)}</details>
</article>`
}

const webhookCell = (row: LedgerRow) => {
  const w = row.webhook
  if (w === null) return html`<span class="muted">none</span>`
  return html`<span class="webhook-status webhook-${w.status}">${w.status}</span> <span class="muted">(${w.attempts} attempt${w.attempts === 1 ? "" : "s"})</span>${
    w.lastError === null ? "" : html`<br><span class="bad">${w.lastError}</span>`
  }`
}

const short = (s: string | null) => (s === null ? "—" : s.length > 14 ? `${s.slice(0, 8)}…${s.slice(-4)}` : s)

/** A sale's updates after purchase, in words: how many newer commits went out, and the latest. */
const updatesNote = (r: LedgerPage["rows"][number]) => {
  if (r.sale.updatesDays === 0) return ""
  const last = r.updates[r.updates.length - 1]
  return last === undefined
    ? html`<br><small class="muted updates">Updates for ${String(r.sale.updatesDays)} days; none delivered yet</small>`
    : html`<br><small class="muted updates">${String(r.updates.length)} update${r.updates.length === 1 ? "" : "s"} delivered; latest <code title="${last.commitSha}">${last.commitSha.slice(0, 7)}</code> on ${when(last.deliveredAt)}</small>`
}

const salesTable = (page: LedgerPage, livemode: boolean, o: DashboardOptions) => {
  const kind = livemode ? "live" : "test"
  if (page.rows.length === 0) return html`<p class="muted" id="${kind}-sales">No ${kind} sales yet.</p>`
  return html`<table class="stack sales" id="${kind}-sales"><thead><tr><th>Settled</th><th>Repository</th><th>Amount</th><th>Network</th><th>Buyer</th><th>Transaction</th><th>Webhook</th><th></th></tr></thead><tbody>
${page.rows.map((r) => html`<tr data-sale="${r.sale.id}">
<td data-label="Settled">${when(r.sale.settledAt ?? r.sale.createdAt)}</td>
<td data-label="Repository">${r.sale.repo}${r.sale.commitSha === null ? "" : html` <code title="${r.sale.commitSha}">${r.sale.commitSha.slice(0, 7)}</code>`}${updatesNote(r)}</td>
<td data-label="Amount">$${formatUsd(r.sale.amount)}</td>
<td data-label="Network">${r.sale.network}</td>
<td data-label="Buyer" title="${r.sale.payer}">${short(r.sale.payer)}</td>
<td data-label="Transaction" title="${r.sale.transaction ?? ""}">${short(r.sale.transaction)}</td>
<td data-label="Webhook">${webhookCell(r)}</td>
<td data-label="">${form(o, "sales/redeliver", html``, html`<button type="submit" class="secondary">Redeliver</button>`, { sale_id: r.sale.id })}</td>
</tr>`)}
</tbody></table>${page.nextCursor === null ? "" : html`<p><a href="/dashboard?${kind}=${encodeURIComponent(page.nextCursor)}#sales">Older ${kind} sales</a></p>`}`
}

const totals = (d: DashboardData) => {
  const all = [...d.live.totals]
  if (all.length === 0) return ""
  return html`<ul class="facts">${all.map((t) => html`<li>${t.livemode ? "live" : "test"} ${chainLabel[t.chain]}: $${formatUsd(t.amount)} (${t.count})</li>`)}</ul>`
}

const keysSection = (d: DashboardData, o: DashboardOptions) => html`<section id="keys"><h2>API keys</h2>
<p>A key is a full headless login to the management API (<code>Authorization: Bearer rmkt_…</code>). It is shown once, when created.</p>
${d.keys.length === 0 ? html`<p class="muted">No active keys.</p>` : html`<table class="stack keys"><thead><tr><th>Key</th><th>Created</th><th>Last used</th><th></th></tr></thead><tbody>
${d.keys.map((k) => html`<tr data-key="${k.id}"><td data-label="Key"><code>rmkt_…${k.last4}</code></td><td data-label="Created">${when(k.createdAt)}</td>
<td data-label="Last used">${when(k.lastUsedAt)}</td><td data-label="">${form(o, "keys/revoke", html``, html`<button type="submit" class="danger">Revoke</button>`, { id: k.id })}</td></tr>`)}
</tbody></table>`}
${form(o, "keys", html``, html`<button type="submit">Create an API key</button>`)}
</section>`

const settingsSection = (a: Account, o: DashboardOptions) => html`<section id="settings"><h2>Settings</h2>
<h3>Payout wallets (account defaults)</h3>
<p class="muted">Listings without their own wallet for a chain are paid here. Adding a chain rebuilds their checkouts; an address a listing already carries never moves.</p>
<form method="post" action="/dashboard/account/wallets"><input type="hidden" name="csrf" value="${o.csrf}">
<label for="wallet_base">Base (USDC, EVM address)</label><input type="text" id="wallet_base" name="wallet_base" autocomplete="off" value="${a.wallets.base ?? ""}" placeholder="0x…">
<label for="wallet_solana">Solana (USDC, base58 address)</label><input type="text" id="wallet_solana" name="wallet_solana" autocomplete="off" value="${a.wallets.solana ?? ""}">
<p><button type="submit">Save wallets</button></p></form>
<h3>Storefront tagline</h3>
<form method="post" action="/dashboard/account/tagline"><input type="hidden" name="csrf" value="${o.csrf}">
<label for="storefront_tagline">One line, at most 140 characters, shown on your owner page</label><input type="text" id="storefront_tagline" name="storefront_tagline" maxlength="1024" value="${a.storefrontTagline ?? ""}">
<p><button type="submit">Save tagline</button></p></form>
<h3>Sale webhook</h3>
<p class="muted">${a.webhookUrl === null ? "No webhook is set." : html`Sending <code>sale.settled</code> to <code id="webhook-url">${a.webhookUrl}</code>.`}
Saving a URL returns a new signing secret (shown once); the old one stops signing. Leave it empty to remove the webhook.</p>
<form method="post" action="/dashboard/account/webhook"><input type="hidden" name="csrf" value="${o.csrf}">
<label for="webhook_url">Webhook URL (https)</label><input type="url" id="webhook_url" name="webhook_url" value="${a.webhookUrl ?? ""}" placeholder="https://example.com/hooks/repomarket">
<p><button type="submit">Save webhook</button></p></form>
</section>`

/** The code-host connection: which GitHub login is connected, and the form that starts a (new) connection. */
const codeHostSection = (d: DashboardData, o: DashboardOptions) => html`<section id="code-host"><h2>GitHub connection</h2>
${d.account.hostLogin === null
  ? html`<p class="muted">No GitHub login is connected. Connecting one proves which repositories you control, so you can take over listings of them.</p>`
  : html`<p>Connected GitHub login: <strong id="connected-host-login">${d.account.hostLogin}</strong></p>`}
${d.hostConnection
  ? html`<form class="inline" method="post" action="/auth/host/start"><input type="hidden" name="csrf" value="${o.csrf}"><button type="submit">${d.account.hostLogin === null ? "Connect GitHub" : "Connect another GitHub login"}</button></form>`
  : html`<p class="muted">The operator has not configured a GitHub OAuth app, so connecting is off.</p>`}
</section>`

const newListingSection = (o: DashboardOptions) => html`<section id="new-listing"><h2>List a repository</h2>
<form method="post" action="/dashboard/listings"><input type="hidden" name="csrf" value="${o.csrf}">
<label for="host_url">Repository URL</label><input type="url" id="host_url" name="host_url" required placeholder="https://github.com/owner/repo">
<label for="price_usd">Price (USD, e.g. 12.34)</label><input type="text" id="price_usd" name="price_usd" inputmode="decimal" placeholder="12.34">
<label for="new_wallet_base">Base wallet (empty: your default)</label><input type="text" id="new_wallet_base" name="wallet_base" autocomplete="off">
<label for="new_wallet_solana">Solana wallet (empty: your default)</label><input type="text" id="new_wallet_solana" name="wallet_solana" autocomplete="off">
<label for="host_pat">Access token, for a private repository (read-only contents; stored encrypted, never shown)</label><input type="password" id="host_pat" name="host_pat" autocomplete="off">
<p><button type="submit">List it</button></p></form>
</section>`

/** `/dashboard`: the seller's listings, sales ledger, keys and settings, with a form for each action. */
export const dashboardHtml = (d: DashboardData, o: DashboardOptions): Html =>
  layout({
    title: "Dashboard",
    signedInAs: d.account.email,
    nonce: o.nonce,
    main: html`<h1>Dashboard</h1>
${o.notice === undefined ? "" : noticeBox(o.notice)}
<section id="listings"><h2>Listings</h2>
${d.listings.length === 0 ? html`<p class="muted">No listings yet.</p>` : d.listings.map((l) => listingCard(l, o))}
</section>
${newListingSection(o)}
<section id="sales"><h2>Sales</h2>
<p class="muted">The ledger of record: every settled sale, whatever its webhook did.</p>
${totals(d)}
<h3>Live</h3>${salesTable(d.live, true, o)}
<h3>Test (simulated money)</h3>${salesTable(d.test, false, o)}
</section>
${keysSection(d, o)}
${codeHostSection(d, o)}
${settingsSection(d.account, o)}`
  })
