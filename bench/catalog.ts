/**
 * Catalog benchmark: `GET /listings` over 100 000 seeded listings on PostgreSQL (2% taken down, a third paid
 * on Solana only), everything on loopback and measured in this one run:
 * - service time: one request at a time, p50/p99 per query (filters, orders, a rare, a middling and a very
 *   common README word, a name word, a second page by cursor). Goal: p99 <= 25 ms;
 * - adversarial queries (issue 33: text no index narrows, common words with a filter nobody passes, long OR
 *   chains, phrases of common words), the same way, each as a ratio to the median p50 of the ordinary queries
 *   measured in this run. Goal: every one within 5x;
 * - load: requests/s and p50/p99 at 50 connections for three of them;
 * - the repo page JSON at 50 connections in the same run, as the baseline the catalog must leave unchanged.
 *
 *   npx tsx bench/catalog.ts [--listings 100000] [--seconds 10] [--samples 200] [--connections 50] [--catalog-concurrency N]
 *
 * Seeding writes the rows the adapter would write (the same weighted document) in SQL, in batches. README
 * words follow a skewed (Zipf-like) distribution over 3 000 made-up words, so some words are in most READMEs
 * and some in a few, as in real text.
 */
import { cpus, loadavg } from "node:os"
import { performance } from "node:perf_hooks"
import { parseArgs } from "node:util"
import { Effect } from "effect"
import type { FakeRepo } from "../adapters/memory/CodeHostMemory.js"
import { fmt, median, ms, runMain, section, startBenchApp, startLoadClient, startWatchdog, teardown } from "./support.js"

const { values } = parseArgs({
  options: {
    listings: { type: "string", default: "100000" },
    seconds: { type: "string", default: "10" },
    samples: { type: "string", default: "200" },
    connections: { type: "string", default: "50" },
    "catalog-concurrency": { type: "string" },
    explain: { type: "boolean", default: false }
  }
})
const total = Number.parseInt(values.listings, 10)
const seconds = Number(values.seconds)
const samples = Number.parseInt(values.samples, 10)
const connections = Number.parseInt(values.connections, 10)
if (![total, seconds, samples, connections].every((n) => Number.isFinite(n) && n > 0)) {
  console.error("--listings, --seconds, --samples and --connections must be positive numbers")
  process.exit(2)
}
const TARGET_P99_MS = 25
startWatchdog(600 + total / 200 + 8 * seconds)

const ACCEPT = { accept: "application/json" }
const BATCH = 10_000

/** One batch of listings and their catalog rows, ids `lst_bench<n>`. Deterministic: hashint4 stands in for randomness. */
const seedBatch = (from: number, to: number) => `
WITH n AS (SELECT i,
    (ARRAY['fast','tiny','async','typed','simple','secure','modern','lazy','smart','open'])[1 + i % 10] AS adj,
    (ARRAY['json-parser','http-client','cli','orm','logger','sdk','validator','router','cache','queue','scheduler','bundler',
           'linter','wallet','indexer','crawler','renderer','compiler','agent','dashboard'])[1 + (i / 10) % 20] AS noun,
    (ARRAY['TypeScript','JavaScript','Rust','Go','Python','Java','C++','C#','Ruby','Swift','Kotlin','PHP'])[1 + (i / 7) % 12] AS lang,
    (ARRAY['ai-ml','blockchain','security','devops','data','web','mobile','games','cli','library','docs','other'])[1 + (i / 3) % 12] AS category,
    ARRAY[(ARRAY['web','api','cli','database','testing','security','react','node','rust','ml','crypto','devtools'])[1 + i % 12],
          (ARRAY['performance','typescript','async','parser','http','logging','config','graphql','wasm','docker'])[1 + (i / 12) % 10]] AS topics
  FROM generate_series(${from}, ${to - 1}) i),
r AS (SELECT n.*, (SELECT string_agg('word' || floor(3000 * power(abs(hashint4(n.i * 397 + k)) / 2147483648.0, 3))::int, ' ')
                   FROM generate_series(1, 250) k) AS readme
  FROM n),
l AS (INSERT INTO listings (id, owner, name, account_id, host_url, is_private, description, language, price, wallet_base, wallet_solana,
        host_pat, checkout_id, status, created_at, updated_at, taken_down_at)
  SELECT 'lst_bench' || i, 'owner' || (i % 5000), adj || '-' || noun || '-' || i, NULL, 'https://github.com/owner/x', false,
    'A ' || adj || ' ' || noun || ' for ' || lang || ' developers', lang, (1 + i % 200) * 1000000,
    CASE WHEN i % 3 = 0 THEN NULL ELSE '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913' END,
    CASE WHEN i % 3 = 0 OR i % 5 = 0 THEN 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v' ELSE NULL END,
    NULL, 'chk_bench' || i, CASE WHEN i % 50 = 0 THEN 'taken_down' ELSE 'live' END,
    timestamptz '2024-01-01' + i * interval '1 minute', timestamptz '2024-01-01' + i * interval '1 minute', NULL
  FROM r)
INSERT INTO listing_search (listing_id, topics, stars, category, document, head)
SELECT 'lst_bench' || i, topics, abs(hashint4(i)) % 5000, category, head || setweight(to_tsvector('english', readme), 'C'), head
FROM (SELECT r.*,
  setweight(to_tsvector('english', adj || '-' || noun || '-' || i || ' ' || adj || ' ' || replace(noun, '-', ' ') || ' ' || i), 'A') ||
  setweight(to_tsvector('english', 'A ' || adj || ' ' || noun || ' for ' || lang || ' developers ' || array_to_string(topics, ' ')), 'B') AS head
  FROM r) h`

interface Latency {
  readonly p50: number
  readonly p99: number
  readonly n: number
  readonly results: number
  readonly next: boolean
  /** Answers other than 200, by status and problem code (only when `refusals` allows them). */
  readonly refused: Record<string, number>
}

const percentile = (xs: ReadonlyArray<number>, p: number) => {
  const sorted = [...xs].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!
}

/**
 * One request at a time: the service time of a query, no queueing. An answer other than 200 stops the run,
 * unless `refusals`, which counts them instead: a search past CATALOG_STATEMENT_TIMEOUT_MS is a 503 by design,
 * and on a machine busy with other work (a checkpoint writing, documents read from disk) an ordinary one can be.
 */
const serviceTime = async (url: string, refusals = false): Promise<Latency> => {
  const times: Array<number> = []
  const refused: Record<string, number> = {}
  let results = 0
  let next = false
  for (let i = 0; i < samples + 5; i++) {
    const t0 = performance.now()
    const res = await fetch(url, { headers: ACCEPT })
    const body = (await res.json()) as { listings?: Array<unknown>; next_cursor?: string | null; code?: string }
    const dt = performance.now() - t0
    if (res.status !== 200) {
      if (!refusals) throw new Error(`${url}: ${res.status} ${JSON.stringify(body).slice(0, 300)}`)
      const key = `${res.status} ${body.code ?? ""}`
      refused[key] = (refused[key] ?? 0) + 1
    } else {
      results = body.listings?.length ?? 0
      next = typeof body.next_cursor === "string"
    }
    if (i >= 5) times.push(dt) // the first few warm the pool and the plan cache
  }
  return { p50: percentile(times, 50), p99: percentile(times, 99), n: times.length, results, next, refused }
}

const main = async () => {
  const started = performance.now()
  console.log(`Catalog benchmark: ${cpus().length} cores; ${fmt(total)} listings; ${samples} sequential samples per query; ${seconds} s at ${connections} connections.`)
  console.log(`load average at start: ${loadavg().map((l) => l.toFixed(2)).join(" ")} (other work on this machine shares its cores)`)
  const cleanups: Array<() => Promise<void> | void> = []
  try {
    section("setup")
    const repo: FakeRepo = { owner: "bench-owner", name: "widget-kit", description: "A widget kit", language: "TypeScript", topics: ["web"], files: { "README.md": "# widget-kit\n\nWidgets.\n".repeat(100), "src/index.ts": "export {}\n" } }
    // CATALOG_CONCURRENCY as given (default: the app's, 4), to see what the cap costs the load figures.
    const concurrency = values["catalog-concurrency"]
    const app = await startBenchApp({ repos: [repo], ...(concurrency === undefined ? {} : { settings: { CATALOG_CONCURRENCY: concurrency } }) })
    if (concurrency !== undefined) console.log(`  CATALOG_CONCURRENCY=${concurrency}`)
    cleanups.push(app.close)
    if (app.storage !== "PostgreSQL") console.log("  !! not PostgreSQL: these figures do not answer the PostgreSQL goal")
    const t0 = performance.now()
    for (let from = 1; from <= total; from += BATCH) {
      const to = Math.min(total + 1, from + BATCH)
      await app.withSql((sql) => sql.unsafe(seedBatch(from, to)))
    }
    // The steady state autovacuum reaches: statistics, and visibility maps for index-only scans.
    await app.withSql((sql) => sql.unsafe("VACUUM ANALYZE listings"))
    await app.withSql((sql) => sql.unsafe("VACUUM ANALYZE listing_search"))
    const counted = await app.withSql((sql) => Effect.map(sql<{ n: number }>`SELECT count(*)::int AS n FROM listing_search`, (r) => r[0]!.n))
    console.log(`  seeded ${fmt(counted)} listings with catalog rows in ${fmt((performance.now() - t0) / 1000, 1)} s, vacuumed and analyzed`)
    if (values.explain) {
      const selling = "l.status = 'live' AND l.price IS NOT NULL AND (l.wallet_base IS NOT NULL OR l.wallet_solana IS NOT NULL)"
      for (const [label, where, order] of [
        ["newest", selling, "l.created_at DESC, l.id DESC"],
        ["q=parser", `${selling} AND s.document @@ websearch_to_tsquery('english', 'parser')`, "ts_rank(s.head, websearch_to_tsquery('english', 'parser'))::float8 DESC, l.id DESC"],
        ["category+price", `${selling} AND s.category = 'cli' AND l.price <= 50000000`, "l.price ASC, l.id ASC"]
      ] as const) {
        const plan = await app.withSql((sql) => sql.unsafe<{ "QUERY PLAN": string }>(`EXPLAIN (ANALYZE, BUFFERS) SELECT l.*, s.topics, s.stars, s.category
          FROM listings l JOIN listing_search s ON s.listing_id = l.id WHERE ${where} ORDER BY ${order} LIMIT 21`))
        console.log(`  plan, ${label}:\n${plan.map((r) => `    ${r["QUERY PLAN"]}`).join("\n")}`)
      }
    }
    const key = await app.apiKey("bench-seller@example.com")
    await app.list(key, repo, "0.50")

    const queries: Array<readonly [string, string]> = [
      ["newest, no filter", "/listings"],
      ["category + price cap, cheapest first", "/listings?category=cli&max_price_usd=50&sort=price"],
      ["language, most stars", "/listings?language=rust&sort=stars"],
      ["topic + chain", "/listings?topic=web&chain=solana"],
      ["q: a name word (~5% of listings)", "/listings?q=parser"],
      ["q: a rare README word", "/listings?q=word2900"],
      ["q: a middling README word", "/listings?q=word300"],
      ["q: a very common README word", "/listings?q=word2"],
      ["q: two words, most stars", "/listings?q=async%20logger&sort=stars"]
    ]
    // The second page of the name-word search, by its cursor.
    const first = (await (await fetch(`${app.origin}/listings?q=parser`, { headers: ACCEPT })).json()) as { next: string | null }
    if (first.next !== null) queries.push(["q: a name word, page 2 by cursor", first.next])

    section(`service time: one request at a time, ${samples} samples each (goal p99 <= ${TARGET_P99_MS} ms)`)
    const p99s: Array<number> = []
    const p50s: Array<number> = []
    let refusedOrdinary = 0
    const refusedText = (l: Latency) => {
      const all = Object.entries(l.refused).map(([what, n]) => `${what} x${n}`).join(", ")
      return all === "" ? "" : `   refused: ${all}`
    }
    for (const [label, path] of queries) {
      const l = await serviceTime(`${app.origin}${path}`, true)
      p99s.push(l.p99)
      p50s.push(l.p50)
      refusedOrdinary += Object.values(l.refused).reduce((a, b) => a + b, 0)
      console.log(`  ${label.padEnd(40)} p50 ${ms(l.p50).padStart(9)}   p99 ${ms(l.p99).padStart(9)}   ${l.results} results${refusedText(l)}   ${l.p99 <= TARGET_P99_MS ? "" : "over goal"}`)
    }

    section(`load: ${connections} connections, ${seconds} s each`)
    const client = startLoadClient()
    cleanups.push(client.stop)
    const load = async (label: string, path: string) => {
      await client.ask({ type: "load", url: `${app.origin}${path}`, connections, seconds: 1, expectedStatus: 200, headers: ACCEPT }, "load")
      const { stats: s } = await client.ask({ type: "load", url: `${app.origin}${path}`, connections, seconds, expectedStatus: 200, headers: ACCEPT }, "load")
      console.log(`  ${label.padEnd(40)} ${fmt(s.perSecond).padStart(7)} req/s   p50 ${ms(s.p50).padStart(9)}   p99 ${ms(s.p99).padStart(9)}   non-200 ${s.unexpected}`)
      return s
    }
    const page = await load("repo page JSON (baseline, front door)", `/r/${repo.owner}/${repo.name}`)
    const newest = await load("catalog: newest", "/listings")
    const named = await load("catalog: q=parser", "/listings?q=parser")
    const filtered = await load("catalog: category + price cap", "/listings?category=cli&max_price_usd=50&sort=price")

    /*
     * Issue 33's adversarial queries (before its fix, at 100 000 listings: 0.3 to 1.6 s each), and the other
     * slow ones found while fixing it. Common README words are word0..word9 (in most READMEs); nobody lists
     * Cobol, and no listing has the topic nobody-uses.
     */
    const q = (text: string) => encodeURIComponent(text)
    const excluded = Array.from({ length: 40 }, (_, i) => `-word${i}`).join(" ").slice(0, 200).replace(/ -?\w*$/, "")
    // The goal is the issue's six; the others were found slow while fixing them (before: 0.1 to 2 s, but the
    // last, 0.1 s) and are measured beside them.
    const adversarial: Array<readonly [string, string, boolean]> = [
      ["only -x + a language nobody uses", "/listings?q=-x&language=Cobol", true],
      [`${excluded.length} chars of excluded common words`, `/listings?q=${q(excluded)}`, true],
      ["only -x, most stars, language nobody uses", "/listings?q=-x&sort=stars&language=Cobol", true],
      ["common word + language nobody uses", "/listings?q=word2&language=Cobol", true],
      ["8 common words OR'ed + topic nobody uses", `/listings?q=${q(Array.from({ length: 8 }, (_, i) => `word${i}`).join(" or "))}&topic=nobody-uses`, true],
      ["phrase + language nobody uses", `/listings?q=${q("\"word1 word2 word3\"")}&language=Cobol`, true],
      ["(also) common word, most stars, no such lang.", "/listings?q=word2&sort=stars&language=Cobol", false],
      ["(also) no text, most stars, no such language", "/listings?language=Cobol&sort=stars", false],
      ["(also) phrase of common words alone", `/listings?q=${q("\"word1 word2 word3\"")}`, false],
      ["(also) common word + category + low price cap", "/listings?q=word2&category=games&max_price_usd=0.01", false],
      ["(also) common word -another + common language", `/listings?q=${q("word2 -word3")}&language=rust`, false]
    ]
    const ordinary = median(p50s)
    const ordinary99 = median(p99s)
    section(`adversarial queries: one request at a time, ${samples} samples each; ratio to the ordinary queries' median p50 ${ms(ordinary)} (goal <= 5x)`)
    const ratios: Array<number> = []
    for (const [label, path, goal] of adversarial) {
      const l = await serviceTime(`${app.origin}${path}`, true)
      const ratio = l.p50 / ordinary
      if (goal) ratios.push(ratio)
      console.log(`  ${label.padEnd(46)} p50 ${ms(l.p50).padStart(9)} (${fmt(ratio, 1).padStart(4)}x)   p99 ${ms(l.p99).padStart(9)} (${fmt(l.p99 / ordinary99, 1).padStart(4)}x of median p99)   ${l.results} results${l.next ? ", next page" : ""}${refusedText(l)}   ${ratio <= 5 ? "" : "over goal"}`)
    }
    // Beyond the limits: refused at once, naming them.
    for (const path of [`/listings?q=${q(Array.from({ length: 9 }, (_, i) => `word${i}`).join(" or "))}`, `/listings?q=${q(`"${"word1 ".repeat(9)}"`)}`]) {
      const res = await fetch(`${app.origin}${path}`, { headers: ACCEPT })
      const body = (await res.json()) as { errors?: Array<{ message: string }> }
      console.log(`  ${path.slice(0, 60).padEnd(60)} ${res.status} ${body.errors?.map((e) => e.message).join("; ") ?? ""}`)
    }

    section("summary")
    const worst = Math.max(...p99s)
    console.log(`  catalog search over ${fmt(counted)} listings (${app.storage}): service time: median of the queries' p50 ${ms(median(p50s))}, median p99 ${ms(median(p99s))}, worst p99 ${ms(worst)}` +
      ` (goal <= ${TARGET_P99_MS} ms): ${worst <= TARGET_P99_MS ? "MET" : "MISSED"}${refusedOrdinary === 0 ? "" : `; ${refusedOrdinary} answers other than 200`}`)
    console.log(`  at ${connections} connections: newest ${fmt(newest.perSecond)} req/s (p99 ${ms(newest.p99)}), q=parser ${fmt(named.perSecond)} req/s (p99 ${ms(named.p99)}),` +
      ` filtered ${fmt(filtered.perSecond)} req/s (p99 ${ms(filtered.p99)}); repo page in the same run ${fmt(page.perSecond)} req/s (p99 ${ms(page.p99)})`)
    const worstRatio = Math.max(...ratios)
    console.log(`  issue 33's adversarial queries: worst p50 ${fmt(worstRatio, 1)}x the ordinary queries' median p50 (goal <= 5x): ${worstRatio <= 5 ? "MET" : "MISSED"}`)
    console.log(`  load average now: ${loadavg().map((l) => l.toFixed(2)).join(" ")}`)
    if ([page, newest, named, filtered].some((s) => s.unexpected > 0)) process.exitCode = 1
  } finally {
    section("teardown")
    await teardown(cleanups, started)
  }
}

runMain(main)
