// @ts-check
/**
 * Mutation testing of the domain: StrykerJS 9 (10.x needs Node 22) with the vitest runner, perTest coverage
 * (only the tests that reach a mutant run against it). Two scopes (README, "Mutation testing"):
 *
 * - `npm run test:mutation` (MUTATION_SCOPE unset or `rules`): `domain/rules/**` and `domain/Money.ts` against
 *   `test/domain`. This is the measured scope with floors (scripts/mutationThresholds.mjs), run by CI when the
 *   rules or their tests change; incremental from `mutation/incremental.json`, committed so CI starts from the
 *   last run.
 * - `npm run test:mutation:full` (MUTATION_SCOPE=full): all of `domain/` against every suite that needs no
 *   outside service (vitest.mutation.config.ts); its incremental record stays under `reports/`.
 *
 * MUTATE (comma-separated globs) and MUTATION_SUITES (folders under test/) narrow a development run; such a run
 * keeps its own record under `reports/`, never the committed one.
 *
 * @type {import('@stryker-mutator/api/core').PartialStrykerOptions}
 */
const full = process.env.MUTATION_SCOPE === "full"
const narrowed = process.env.MUTATE !== undefined || process.env.MUTATION_SUITES !== undefined
// The rules scope runs test/domain only; vitest.mutation.config.ts reads this in Stryker's test-runner processes.
if (!full && process.env.MUTATION_SUITES === undefined) process.env.MUTATION_SUITES = "domain"

export default {
  testRunner: "vitest",
  plugins: ["@stryker-mutator/vitest-runner"],
  vitest: { configFile: "vitest.mutation.config.ts", related: true },
  coverageAnalysis: "perTest",
  mutate: process.env.MUTATE ? process.env.MUTATE.split(",") : full ? ["domain/**/*.ts"] : ["domain/rules/**/*.ts", "domain/Money.ts"],
  incremental: true,
  // Only the rules scope, run whole, writes the committed record: a narrowed run's survivors are not the scope's.
  incrementalFile: narrowed
    ? `reports/mutation/incremental-${`${process.env.MUTATE ?? "scope"}-${process.env.MUTATION_SUITES ?? "suites"}`.replace(/\W+/g, "-")}.json`
    : full
    ? "reports/mutation/incremental-full.json"
    : "mutation/incremental.json",
  // The first run over every suite imports the app once per HTTP test file: far more than Stryker's default 5 minutes.
  dryRunTimeoutMinutes: 60,
  reporters: ["html", "json", "clear-text", "progress"],
  htmlReporter: { fileName: "reports/mutation/index.html" },
  jsonReporter: { fileName: "reports/mutation/mutation.json" },
  tempDirName: ".stryker-tmp",
  cleanTempDir: "always",
  // Two cores shared with other work here; CI may raise it with STRYKER_CONCURRENCY.
  concurrency: Number(process.env.STRYKER_CONCURRENCY ?? 2),
  // HTTP tests boot an app per file: allow for a slow first run of a mutant.
  timeoutMS: 20_000,
  timeoutFactor: 2,
  // Static mutants (module-level constants: Category's keyword tables, the CRC table, Schema declarations) can
  // only be tested by reloading every suite per mutant: 300 of them took ~90 % of the run time. They are
  // reported as Ignored, outside the score (README, "Mutation testing", names what that leaves unmeasured).
  ignoreStatic: true,
  // A mutant is killed by the first failing test; the report does not need every killer.
  disableBail: false,
  // Overall floor for the mutated files; the stricter per-file floors are in scripts/mutationThresholds.mjs.
  thresholds: { high: 90, low: 85, break: 85 }
}
