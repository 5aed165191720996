import type { Category } from "../Catalog.js"

// The taxonomy itself is model data (domain/Catalog.ts); re-exported here under the names this rule always had.
export { CATEGORIES, type Category } from "../Catalog.js"

const KEYWORDS: ReadonlyArray<readonly [Category, ReadonlyArray<string>]> = [
  ["ai-ml", ["ai", "ml", "machine-learning", "deep-learning", "llm", "neural-network", "nlp", "pytorch", "tensorflow", "agent", "agents", "rag"]],
  ["blockchain", ["blockchain", "ethereum", "solana", "web3", "crypto", "cryptocurrency", "smart-contracts", "defi", "x402", "evm", "bitcoin"]],
  ["security", ["security", "cryptography", "pentest", "vulnerability", "auth", "authentication", "encryption"]],
  ["devops", ["devops", "docker", "kubernetes", "terraform", "ci", "infrastructure", "deployment", "monitoring", "aws", "cloud"]],
  ["data", ["database", "data", "sql", "analytics", "etl", "postgres", "postgresql", "data-science", "visualization"]],
  ["web", ["web", "react", "vue", "svelte", "frontend", "nextjs", "css", "html", "website", "http", "api", "backend"]],
  ["mobile", ["android", "ios", "mobile", "flutter", "react-native", "swiftui"]],
  ["games", ["game", "games", "gamedev", "game-engine", "unity", "godot"]],
  ["cli", ["cli", "terminal", "command-line", "shell", "tui"]],
  ["library", ["library", "sdk", "framework", "package", "npm", "crate"]],
  ["docs", ["documentation", "docs", "tutorial", "awesome", "awesome-list", "book", "guide"]]
]

const LANGUAGES: Readonly<Record<string, Category>> = {
  "jupyter notebook": "ai-ml",
  solidity: "blockchain",
  html: "web",
  css: "web",
  vue: "web",
  svelte: "web",
  kotlin: "mobile",
  swift: "mobile",
  dart: "mobile",
  "objective-c": "mobile",
  hcl: "devops",
  dockerfile: "devops",
  shell: "cli",
  gdscript: "games",
  sql: "data",
  markdown: "docs",
  tex: "docs"
}

// Split on every separator: the empty strings between two separators match no keyword, so they need no filtering.
const words = (text: string): ReadonlyArray<string> => text.toLowerCase().split(/[^a-z0-9+#-]/)

/**
 * The category of a repo: the first whose keywords match its topics, then its description; else its language
 * decides (`library` for an unmapped one); `other` without a language.
 */
export const categorize = (repo: {
  readonly topics: ReadonlyArray<string>
  readonly description: string | null
  readonly language: string | null
}): Category => {
  const topics = new Set(repo.topics.map((t) => t.toLowerCase()))
  for (const [category, keywords] of KEYWORDS) if (keywords.some((k) => topics.has(k))) return category
  // Stryker disable next-line StringLiteral: any fallback text without a keyword categorises the same as no description
  const described = new Set(words(repo.description ?? ""))
  for (const [category, keywords] of KEYWORDS) if (keywords.some((k) => described.has(k))) return category
  const language = repo.language?.toLowerCase() ?? ""
  // Own keys only: a language named "constructor" must not reach Object.prototype.
  if (Object.hasOwn(LANGUAGES, language)) return LANGUAGES[language]!
  return language !== "" ? "library" : "other"
}
