import type { HttpServerResponse } from "@effect/platform"
import { checkoutPath, testCheckoutPath } from "../../domain/Checkout.js"
import { formatUsd } from "../../domain/Money.js"
import type { Quote } from "../../domain/usecases/Purchases.js"
import { WEB_ASSETS } from "./generated/WebAssets.js"
import type { ProblemJson } from "../Problem.js"
import { problemBox, retryHeaders } from "./ErrorPage.js"
import { contentSecurityPolicy, html, type Html, htmlResponse, layout, newNonce } from "./Html.js"
import { buyExample } from "./RepoPage.js"

/** People's names for the networks a checkout offers. */
const NETWORK_NAMES: Readonly<Record<string, string>> = {
  "eip155:8453": "Base",
  "eip155:84532": "Base Sepolia (test network)",
  "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp": "Solana",
  "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1": "Solana devnet (test network)"
}

/**
 * The checkout's policy: the pages' own, plus `connect-src 'self'` so the script can send the payment to
 * this same URL. Still no other origin, no inline script (the bundle is loaded by nonce), Trusted Types.
 */
export const checkoutPagePolicy = (nonce: string): string => `${contentSecurityPolicy(nonce)}; connect-src 'self'`

export interface CheckoutPageOptions {
  /** The x402 reason of a refused payment, when this answer is one. */
  readonly error?: string | undefined
  readonly detail?: string | undefined
  /** The headers of the x402 answer, kept as they are (`PAYMENT-REQUIRED` above all). */
  readonly headers: Readonly<Record<string, string>>
  readonly baseUrl: string
}

/**
 * The checkout as a browser sees it: the same 402 and headers an x402 client gets, with a page that says what
 * is sold, by whom, for how much, on which chains, and lets the person pay with the wallet they have.
 * Without a script it still explains how to pay with an x402 client.
 */
export const checkoutPageHtml = (quote: Quote, o: CheckoutPageOptions): HttpServerResponse.HttpServerResponse => {
  const nonce = newNonce()
  const { listing, checkout, livemode } = quote
  const slug = listing.repo.slug
  const price = checkout.price === null ? "" : formatUsd(checkout.price)
  const live = o.baseUrl + checkoutPath(checkout.id)
  const test = o.baseUrl + testCheckoutPath(checkout.id)
  const chains = [...new Set(quote.requirements.map((r) => r.chain))]
  const filename = `${slug.replace("/", "-")}.tar.gz`
  const main: Html = html`
<link rel="stylesheet" href="${WEB_ASSETS.checkoutCss.path}">
<h1>Buy ${slug}</h1>
${listing.description === null || listing.description === "" ? "" : html`<p class="lede">${listing.description}</p>`}
${livemode
    ? ""
    : html`<div class="testmode" data-testmode><strong>Test checkout: simulated money.</strong> Payments here are signed
on Base Sepolia or Solana devnet and settled on a simulated ledger; nothing real is charged, and what you receive
is a small test archive (a manifest of the files and a note), not the repository's bytes.
Buy for real at <a href="${live}">the live checkout</a>.</div>`}
<dl class="terms">
<dt>Repository</dt><dd><a href="${quote.page}">${slug}</a></dd>
<dt>Seller</dt><dd><a href="/r/${listing.repo.owner}">${listing.repo.owner}</a></dd>
<dt>Price</dt><dd><span class="price">$${price}</span> USDC</dd>
<dt>Pay on</dt><dd><ul class="facts">${quote.requirements.map((r) => html`<li data-network="${r.network}">${NETWORK_NAMES[r.network] ?? r.network}</li>`)}</ul></dd>
<dt>Paid to</dt><dd>${quote.requirements.map((r) => html`<code>${r.payTo}</code> (${NETWORK_NAMES[r.network] ?? r.network})<br>`)}</dd>
<dt>You get</dt><dd>${livemode
    ? html`The repository's default branch as a <code>.tar.gz</code>, at the commit pinned when you pay; a receipt link downloads the same commit again for 7 days.`
    : html`A test <code>.tar.gz</code> naming the commit pinned when you pay; a receipt link downloads it again for 7 days.`}</dd>
</dl>
${o.error === undefined
    ? ""
    : html`<div class="notice error" role="alert" data-code="${o.error}"><strong>The payment was refused.</strong> <p>${o.detail ?? o.error}</p></div>`}

<section id="pay" class="pay" data-checkout="${quote.resource}" data-chains="${chains.join(" ")}" data-price="$${price}">
<h2>Pay with your browser wallet</h2>
<noscript><p>Paying with a browser wallet needs JavaScript. Without it, pay with an x402 client as shown below.</p></noscript>
<div id="wallets" hidden>
<p>Pick a wallet. You sign one USDC payment of $${price}; the checkout settles it and your browser saves the archive.
${chains.includes("base") ? "Ethereum wallets pay no gas here." : ""}</p>
<ul id="wallet-list"><li id="wallet-none" class="muted">Looking for wallets…</li></ul>
</div>
<div id="status" class="status" tabindex="-1" hidden></div>
</section>

<section id="x402">
<h2>Pay with an x402 client</h2>
<p>This address is an <a href="https://x402.org">x402</a> checkout: asked without a payment it answers
<code>402 Payment Required</code> with the terms in the <code>PAYMENT-REQUIRED</code> header (and as JSON for
x402 v1). An x402 client signs a USDC payment and asks again; the paid answer is the archive.</p>
<label for="checkout-url">This checkout</label><code class="url" id="checkout-url">${quote.resource}</code>
${livemode
    ? html`<label for="test-url">Its test twin (simulated money, for rehearsal)</label><code class="url" id="test-url">${test}</code>`
    : html`<label for="live-url">The live checkout</label><code class="url" id="live-url">${live}</code>`}
<h3>With @x402/fetch</h3>
<pre data-copy><code>${buyExample(quote.resource, price === "" ? null : price, filename)}</code></pre>
</section>
<script src="${WEB_ASSETS.checkoutJs.path}" nonce="${nonce}" defer></script>`
  return htmlResponse(layout({ title: `Buy ${slug}`, main, nonce }), {
    status: 402,
    nonce,
    headers: { ...o.headers, "content-security-policy": checkoutPagePolicy(nonce), vary: "Accept" }
  })
}

/**
 * A checkout that cannot be paid now (unknown, replaced, not selling, live payments off, too many attempts), as
 * a browser sees it: the problem as a page with the same status and the x402 headers it carries (a returning
 * wallet's Sign-In-With-X challenge), and the way to the current checkout when there is one.
 */
export const checkoutProblemPage = (problem: ProblemJson, headers: Readonly<Record<string, string>> = {}): HttpServerResponse.HttpServerResponse => {
  const page = typeof problem["page"] === "string" ? problem["page"] : null
  const main = html`<h1>${problem.title}</h1>${problemBox(problem)}${
    page === null
      ? html`<p>Check the link you followed, or find the repository's page for its current checkout.</p>`
      : html`<p>See <a href="${page}">the repository's page</a> for its current checkout.</p>`
  }`
  return htmlResponse(layout({ title: problem.title, main }), { status: problem.status, headers: { ...headers, ...retryHeaders(problem), vary: "Accept" } })
}
