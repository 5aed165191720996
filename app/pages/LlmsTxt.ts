/**
 * `/llms.txt`: how an agent finds and buys a repository here, in the llmstxt.org shape (a Markdown file at
 * the site root: a title, a one-paragraph summary, then sections of links with notes). The root path is what
 * agents and their tools already look for; `/.well-known/x402` is the machine-readable manifest beside it. The
 * MCP server comes first: an agent with an MCP client and an x402 wallet needs no code written for this site.
 * Only public facts: nothing here depends on who asks.
 */
export const llmsTxt = (baseUrl: string): string => `# repomarket

> A marketplace of code repositories sold over x402. Each listing is a GitHub repository; you pay once per
> repository in USDC on Base or Solana, straight to the seller's wallet, and the paid request returns the
> repository as a .tar.gz. No account and no API key are needed to buy: an MCP client with an x402 wallet, or
> an x402 HTTP client, is enough.

## MCP server (agents: start here)

- [MCP server](${baseUrl}/mcp): Streamable HTTP at \`${baseUrl}/mcp\` (stateless, POST only). Tools: \`search_listings\` (the catalog's query and filters), \`get_repo\` (tree, README, price, commit), \`buy_repo\` (paid, x402 MCP transport), \`redownload\` (by receipt or Sign-In-With-X).
- One-line client config: \`{"mcpServers":{"repomarket":{"url":"${baseUrl}/mcp"}}}\` (Cursor; VS Code: \`{"servers":{"repomarket":{"type":"http","url":"${baseUrl}/mcp"}}}\`; clients that only start processes, such as Claude Desktop: \`{"mcpServers":{"repomarket":{"command":"npx","args":["-y","mcp-remote","${baseUrl}/mcp"]}}}\`); Claude Code: \`claude mcp add --transport http repomarket ${baseUrl}/mcp\`.
- Paying: \`buy_repo\` without payment answers x402 payment-required (\`isError\`, \`structuredContent\` = PaymentRequired with the same \`accepts\` as the checkout's HTTP 402). An x402-aware MCP client (one that follows coinbase/x402's MCP transport, or your own: \`@x402/core\`'s \`x402Client.createPaymentPayload(structuredContent)\` with \`@x402/evm\` or \`@x402/svm\`) signs one and calls \`buy_repo\` again with the same arguments and the payment in \`_meta["x402/payment"]\`; the paid result has the settlement in \`_meta["x402/payment-response"]\`, the pinned commit, and a receipt link (\`resource_link\`) that downloads the .tar.gz for 7 days. \`include_archive: true\` embeds archives up to 4 MiB.
- Rehearse with a listing's \`test_checkout_url\` (simulated money). Errors carry the HTTP API's problem codes (\`not_found\`, \`checkout_gone\`, \`payment_id_conflict\`, ...).
- [x402 discovery manifest](${baseUrl}/.well-known/x402): networks, assets, the newest checkouts, the MCP server.

## Find a repository

- [Catalog](${baseUrl}/listings): \`GET /listings?q=...&language=...&category=...&topic=...&chain=base|solana&max_price_usd=...&sort=relevance|newest|price|stars&cursor=...\`, JSON by default. Live listings that are selling, with their page and price; \`next_cursor\` pages on.
- [Home page](${baseUrl}/): the same for people (search box, newest listings, categories).
- [Sitemap](${baseUrl}/sitemap.xml): every owner and repo page on sale.
- \`GET ${baseUrl}/r/<owner>\` with \`Accept: application/json\`: a seller's inventory and its other public repositories.
- \`GET ${baseUrl}/r/<owner>/<repo>\` with \`Accept: application/json\`: \`price_usd\`, \`amount\` (USDC atomic units, 6 decimals), \`chains\`, \`selling\`, the file tree, the README, \`checkout_url\` and \`test_checkout_url\`. Free.

## Buy

1. Read \`checkout_url\` from the repo page (\`test_checkout_url\` for a rehearsal with simulated money).
2. \`GET\` it without payment: \`402 Payment Required\`. The x402 v2 requirements are in the \`PAYMENT-REQUIRED\` header (base64 JSON); the body is the x402 v1 object. One \`exact\` USDC requirement per chain: Base \`eip155:8453\`, Solana \`solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp\` (test twin: \`eip155:84532\`, \`solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1\`).
3. Pay with an official client: \`@x402/fetch\` with \`@x402/evm\` (Base) or \`@x402/svm\` (Solana) for v2 (\`PAYMENT-SIGNATURE\`), or \`x402-fetch\` for v1 (\`X-PAYMENT\`). Official v2 clients refuse more than $1 until \`client.setSpendControls({ maxAmountPerPayment: "$<price>" })\`; \`x402-fetch\` caps at 0.10 USDC unless \`maxValue\` is raised.
4. The paid answer is \`application/gzip\`: the default branch at the commit pinned when the payment was verified, with \`PAYMENT-RESPONSE\` (the settlement) and \`Link: <${baseUrl}/downloads/<token>>; rel="receipt"\`, which downloads the same commit again for 7 days.

\`\`\`ts
import { wrapFetchWithPayment } from "@x402/fetch"
import { x402Client } from "@x402/core/client"
import { ExactEvmScheme } from "@x402/evm/exact/client"
import { privateKeyToAccount } from "viem/accounts"

const client = new x402Client().register("eip155:*", new ExactEvmScheme(privateKeyToAccount(KEY)))
const page = await (await fetch("${baseUrl}/r/OWNER/REPO", { headers: { accept: "application/json" } })).json()
const res = await wrapFetchWithPayment(fetch, client)(page.test_checkout_url) // then page.checkout_url
const archive = Buffer.from(await res.arrayBuffer()) // a .tar.gz
\`\`\`

The test twin really checks signatures but settles on a simulated ledger (every payer starts with 1 000 000 test USDC) and returns a small tar.gz with a manifest of the tree, never the repository's bytes.

## If an answer was lost

- Use the receipt link of the first answer (7 days).
- Or send the payment with an x402 \`payment-identifier\` id (every 402 declares the extension) and present it again with that id: the same goods, no second charge.
- Or sign in with the paying wallet: every 402 declares \`sign-in-with-x\`; a signed \`SIGN-IN-WITH-X\` header without a payment re-downloads what that wallet bought.
- The same payment presented again without those is refused (\`402 payment_already_used\`): everything in a settled payment is public on chain.

## Updates after purchase

- A listing's \`updates_days\` (repo page JSON; the signed offer's \`updatesDays\`) is how many days after payment its buyer may fetch the listing's current commit without paying again.
- \`GET <receipt link>/latest\`, or the checkout with \`?updates=latest\` and \`SIGN-IN-WITH-X\` (or the same payment with its payment-identifier id): a newer commit comes as a new delivery with its own receipt link, \`Repr-Digest\` and signed receipt (\`X-Receipt\`, naming \`delivery\` and \`commit\`).
- Past the window, without one, or after a takedown: 403 \`updates_window_closed\` / \`updates_not_included\` / \`listing_taken_down\`; the purchased commit stays downloadable by its receipt link.

## Discovery

- Every 402 declares the x402 \`bazaar\` extension (GET, no input, \`application/gzip\` output), and \`buy_repo\`'s payment-required an MCP-tool entry, each with service metadata (\`serviceName\`, \`tags\`, \`iconUrl\`), so facilitators with a Bazaar catalog list checkouts and the tool paid through them.
- [\`/.well-known/x402\`](${baseUrl}/.well-known/x402): this host's x402 manifest (the \`discovery\` extension proposed in x402 PR #2979).

## Optional

- [OpenAPI document](${baseUrl}/openapi.json) and [API reference](${baseUrl}/docs): listing a repository for sale (\`POST /repos\`), accounts, the sales ledger.
`
