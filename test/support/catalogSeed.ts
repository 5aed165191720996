import type { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Seeds `count` selling listings and their catalog rows straight in SQL (`INSERT … SELECT generate_series`),
 * shaped like the catalog benchmark's (bench/catalog.ts): names from 10 adjectives and 20 nouns, 12 languages
 * (never Cobol), 12 categories, two topics each from 22 (never `nobody-uses`), stars, prices from $1 to $200,
 * a third Solana-only. Each README is 1 200 words drawn from 40 (`word0` to `word39`: every README holds all of
 * them, in a random order), 64 distinct ones shared: few distinct words keep the text index quick to build, and
 * the positions make each document several kB, stored out of line (TOASTed) as a long README's is, which is what
 * makes reading every document slow.
 */
export const seedCatalog = (sql: SqlClient.SqlClient, count: number) =>
  Effect.gen(function*() {
    // A test database holds nothing to keep across a crash: no write-ahead log for these two tables.
    yield* sql.unsafe("ALTER TABLE listing_search SET UNLOGGED")
    yield* sql.unsafe(`CREATE TEMP TABLE seed_readmes AS
      SELECT k, to_tsvector('english', (SELECT string_agg('word' || abs(hashint4(k * 7919 + j)) % 40, ' ')
        FROM generate_series(1, 1200) j)) AS doc
      FROM generate_series(0, 63) k`)
    yield* sql.unsafe(`CREATE TEMP TABLE seed_rows AS
      SELECT i,
        (ARRAY['fast','tiny','async','typed','simple','secure','modern','lazy','smart','open'])[1 + i % 10] AS adj,
        (ARRAY['json-parser','http-client','cli','orm','logger','sdk','validator','router','cache','queue','scheduler','bundler',
               'linter','wallet','indexer','crawler','renderer','compiler','agent','dashboard'])[1 + (i / 10) % 20] AS noun,
        (ARRAY['TypeScript','JavaScript','Rust','Go','Python','Java','C++','C#','Ruby','Swift','Kotlin','PHP'])[1 + (i / 7) % 12] AS lang,
        (ARRAY['ai-ml','blockchain','security','devops','data','web','mobile','games','cli','library','docs','other'])[1 + (i / 3) % 12] AS category,
        ARRAY[(ARRAY['web','api','cli','database','testing','security','react','node','rust','ml','crypto','devtools'])[1 + i % 12],
              (ARRAY['performance','typescript','async','parser','http','logging','config','graphql','wasm','docker'])[1 + (i / 12) % 10]] AS topics
      FROM generate_series(1, ${count}) i`)
    yield* sql.unsafe(`INSERT INTO listings (id, owner, name, account_id, host_url, is_private, description, language, price, wallet_base,
        wallet_solana, host_pat, checkout_id, status, created_at, updated_at, taken_down_at)
      SELECT 'lst_seed' || i, 'owner' || (i % 5000), adj || '-' || noun || '-' || i, NULL, 'https://github.com/owner' || (i % 5000) || '/' || adj || '-' || noun || '-' || i,
        false, 'A ' || adj || ' ' || noun || ' for ' || lang || ' developers', lang, (1 + i % 200) * 1000000,
        CASE WHEN i % 3 = 0 THEN NULL ELSE '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913' END,
        CASE WHEN i % 3 = 0 OR i % 5 = 0 THEN 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v' ELSE NULL END,
        NULL, 'chk_seed' || i, 'live', timestamptz '2024-01-01' + i * interval '1 minute', timestamptz '2024-01-01' + i * interval '1 minute', NULL
      FROM seed_rows`)
    yield* sql.unsafe(`INSERT INTO listing_search (listing_id, topics, stars, category, document, head)
      SELECT 'lst_seed' || i, topics, abs(hashint4(i)) % 5000, category, head || setweight(r.doc, 'C'), head
      FROM (SELECT seed_rows.*,
          setweight(to_tsvector('english', adj || '-' || noun || '-' || i || ' ' || adj || ' ' || replace(noun, '-', ' ') || ' ' || i), 'A') ||
          setweight(to_tsvector('english', 'A ' || adj || ' ' || noun || ' for ' || lang || ' developers ' || array_to_string(topics, ' ')), 'B') AS head
        FROM seed_rows) h JOIN seed_readmes r ON r.k = h.i % 64`)
    yield* sql.unsafe("DROP TABLE seed_rows, seed_readmes")
    // The statistics and visibility maps autovacuum would reach soon after.
    yield* sql.unsafe("VACUUM ANALYZE listings")
    yield* sql.unsafe("VACUUM ANALYZE listing_search")
  })
