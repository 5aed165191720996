#!/usr/bin/env node
/**
 * Every suite in random order, once per named seed (README, "Test it" › "Tests are independent"):
 *
 *   npm run test:shuffled                      # the three named seeds, one after another
 *   npm run test:shuffled -- 20261126          # one seed of your own (several: separated by spaces)
 *   npm run test:shuffled -- 7 -- test/http    # anything after a second `--` goes to vitest (a folder, a file)
 *   node scripts/shuffled.mjs --list           # prints the named seeds (CI takes one of them for its npm test)
 *
 * Each run is `vitest run --sequence.shuffle --sequence.seed=<seed>`: the order of the files and of the tests
 * inside each file follows the seed, so a failure replays with the same command. Stops at the first seed that
 * fails and names it. CI (`.ci/run`) runs the three named seeds.
 */
import { spawnSync } from "node:child_process"

/** The named seeds: two that every file of test/http was first checked with (2026-11-25), and issue 32's own. */
const NAMED_SEEDS = ["7", "19869", "4242"]

const args = process.argv.slice(2)
if (args.includes("--list")) {
  console.log(NAMED_SEEDS.join(" "))
  process.exit(0)
}
const split = args.indexOf("--")
const seeds = (split === -1 ? args : args.slice(0, split)).filter((a) => /^\d+$/.test(a))
const passThrough = split === -1 ? [] : args.slice(split + 1)
const chosen = seeds.length > 0 ? seeds : NAMED_SEEDS

for (const seed of chosen) {
  const started = Date.now()
  console.log(`== shuffled run, seed ${seed}: npx vitest run --sequence.shuffle --sequence.seed=${seed} ${passThrough.join(" ")}`)
  const run = spawnSync("npx", ["vitest", "run", "--sequence.shuffle", `--sequence.seed=${seed}`, ...passThrough], { stdio: "inherit" })
  const minutes = ((Date.now() - started) / 60_000).toFixed(1)
  if (run.status !== 0) {
    console.error(`== seed ${seed} failed after ${minutes} min; replay: npx vitest run --sequence.shuffle --sequence.seed=${seed}`)
    process.exit(run.status ?? 1)
  }
  console.log(`== seed ${seed} passed in ${minutes} min`)
}
