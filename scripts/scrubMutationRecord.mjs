#!/usr/bin/env node
/**
 * Stryker's incremental record (mutation/incremental.json, committed) keeps each mutant's failure message, and
 * a test that checks an API key's shape prints the key it minted against the mutant. Those keys are random and
 * were never issued, but they look like real ones: this replaces anything shaped like an API key or a GitHub
 * token in the record's messages with its prefix and `<redacted>`. Results and test ids are untouched, so
 * Stryker reuses the record as before. `npm run test:mutation` runs it after Stryker.
 *
 *   node scripts/scrubMutationRecord.mjs [mutation/incremental.json]
 */
import { readFileSync, writeFileSync } from "node:fs"

const path = process.argv[2] ?? "mutation/incremental.json"
const TOKEN = /\b(rmkt_|github_pat_|ghp_)[A-Za-z0-9_]{8,}/g
const scrub = (value) =>
  typeof value === "string" ? value.replace(TOKEN, "$1<redacted>")
  : Array.isArray(value) ? value.map(scrub)
  : value !== null && typeof value === "object" ? Object.fromEntries(Object.entries(value).map(([k, v]) => [k, scrub(v)]))
  : value
const before = readFileSync(path, "utf8")
const after = `${JSON.stringify(scrub(JSON.parse(before)), null, 2)}\n`
if (after !== before) writeFileSync(path, after)
console.log(`${path}: ${(before.match(TOKEN) ?? []).length} token-shaped strings redacted`)
