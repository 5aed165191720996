import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { categorize } from "../../../domain/rules/Category.js"

/**
 * The catalog (`GET /listings`): `listing_search` holds, per listing, what the code host said about its repo
 * (topics, stars; the README only as searched words), its category, and the weighted text-search document over the
 * name (A), description and topics (B) and README (C), built when the facts are recorded; `head` is the same
 *   without the README. Matching uses `document` through its GIN index (no row is read to match); ranking
 *   uses `head`, which is small enough to stay inline, where ranking on `document` read every matching
 *   README from TOAST (0.3 s for 1 300 matches in the benchmark). So README-only matches rank below every
 *   name or description match, and among themselves by id.
 * - GIN indexes serve the text query and the topic filter; a stars index the `stars` order.
 * - The README's text itself is not kept: rows stay narrow, so the planner's joins and scans stay cheap.
 * - An index on `lower(language)` over selling listings gives the planner that filter's statistics (without
 *   them it took `language=rust&sort=stars` for rare and hash-joined every row: 1.3 s at 100 000 listings).
 * - Partial indexes over the listings that are selling (live, priced, with a payout address) serve the
 *   `newest` and `price` orders, whose pages are keyset scans of them.
 * Listings stored before this migration get a row from their own name, description and language; topics,
 * stars and README arrive when the seller next lists or refreshes them.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  yield* sql`CREATE TABLE listing_search (
    listing_id text COLLATE "C" PRIMARY KEY,
    topics text[] NOT NULL,
    stars integer NOT NULL,
    category text NOT NULL,
    document tsvector NOT NULL,
    head tsvector NOT NULL
  )`
  yield* sql`CREATE INDEX listing_search_document_idx ON listing_search USING GIN (document)`
  yield* sql`CREATE INDEX listing_search_topics_idx ON listing_search USING GIN (topics)`
  yield* sql`CREATE INDEX listing_search_stars_idx ON listing_search (stars DESC, listing_id DESC)`
  yield* sql`CREATE INDEX listings_selling_newest_idx ON listings (created_at DESC, id DESC)
    WHERE status = 'live' AND price IS NOT NULL AND (wallet_base IS NOT NULL OR wallet_solana IS NOT NULL)`
  yield* sql`CREATE INDEX listings_selling_price_idx ON listings (price, id)
    WHERE status = 'live' AND price IS NOT NULL AND (wallet_base IS NOT NULL OR wallet_solana IS NOT NULL)`
  yield* sql`CREATE INDEX listings_selling_language_idx ON listings (lower(language))
    WHERE status = 'live' AND price IS NOT NULL AND (wallet_base IS NOT NULL OR wallet_solana IS NOT NULL)`

  const existing = yield* sql<{ id: string; name: string; description: string | null; language: string | null }>`
    SELECT id, name, description, language FROM listings`
  for (const l of existing) {
    const category = categorize({ topics: [], description: l.description, language: l.language })
    const head = sql`setweight(to_tsvector('english', ${l.name}), 'A') || setweight(to_tsvector('english', ${l.description ?? ""}), 'B')`
    yield* sql`INSERT INTO listing_search (listing_id, topics, stars, category, document, head)
      VALUES (${l.id}, '{}', 0, ${category}, ${head}, ${head})`
  }
})
