import type { FakeRepo } from "../../adapters/memory/CodeHostMemory.js"
import { BASE_WALLET, SOLANA_WALLET } from "./app.js"

/**
 * Repos for the catalog's HTTP and browser tests: a spread of languages, topics, prices and chains, one with a
 * hostile description (seller-controlled text on every page), and one that only mentions "parser" in its README.
 */
export const CATALOG_REPOS: ReadonlyArray<FakeRepo & { readonly price?: string; readonly wallet: "base" | "solana" }> = [
  {
    owner: "acme", name: "fast-json-parser", language: "TypeScript", stars: 120, topics: ["json", "parser", "library"],
    description: "A streaming JSON parser for TypeScript", files: { "README.md": "# fast-json-parser\n\nParses JSON as it streams." },
    price: "12.00", wallet: "base"
  },
  {
    owner: "acme", name: "rusty-cli", language: "Rust", stars: 40, topics: ["cli", "terminal"],
    description: "Command-line helpers", files: { "README.md": "# rusty-cli\n\nA toolbox for terminals." },
    price: "5.00", wallet: "solana"
  },
  {
    owner: "acme", name: "notes-app", language: "Swift", stars: 3, topics: ["ios"],
    description: "A notes app. It stores notes; the parser it uses is elsewhere.",
    files: { "README.md": "# notes\n\nWe use a parser. The parser is fast. Any parser works. parser parser parser." },
    price: "30.00", wallet: "base"
  },
  {
    owner: "acme", name: "evil-widget", language: "JavaScript", stars: 1, topics: ["web"],
    description: "<script>alert('xss')</script><img src=x onerror=alert(1)> \"quoted\" & more",
    files: { "README.md": "# evil" }, price: "1.00", wallet: "base"
  },
  {
    owner: "acme", name: "unpriced-thing", language: "Go", stars: 9, topics: ["cli"], description: "Not for sale yet",
    files: { "README.md": "# unpriced parser" }, wallet: "base"
  }
]

/** The `POST /repos` body that lists one of them. */
export const listingBody = (r: (typeof CATALOG_REPOS)[number]) => ({
  host_url: `https://github.com/${r.owner}/${r.name}`,
  ...(r.price === undefined ? {} : { price_usd: r.price }),
  ...(r.wallet === "base" ? { wallet_base: BASE_WALLET } : { wallet_solana: SOLANA_WALLET })
})
