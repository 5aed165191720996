// @ts-check
/**
 * Mutation testing of the domain (`npm run test:mutation`): StrykerJS 9 (10.x needs Node 22) with the vitest
 * runner. Tests are the suites that need no outside service (vitest.mutation.config.ts); perTest coverage runs
 * only the tests that reach a mutant. Incremental: results are reused for mutants whose code and covering
 * tests did not change, from mutation/incremental.json, which is committed so CI starts from the last landed
 * run (README, "Mutation testing"). MUTATE narrows the run (comma-separated globs), e.g. MUTATE='domain/rules/**'.
 *
 * @type {import('@stryker-mutator/api/core').PartialStrykerOptions}
 */
export default {
  testRunner: "vitest",
  plugins: ["@stryker-mutator/vitest-runner"],
  vitest: { configFile: "vitest.mutation.config.ts", related: true },
  coverageAnalysis: "perTest",
  mutate: process.env.MUTATE
    ? process.env.MUTATE.split(",")
    : ["domain/**/*.ts"],
  incremental: true,
  // A run narrowed with MUTATION_SUITES keeps its own (uncommitted) record: its survivors are not the full suite's.
  incrementalFile: process.env.MUTATION_SUITES ? `reports/mutation/incremental-${process.env.MUTATION_SUITES.replace(/\W+/g, "-")}.json` : "mutation/incremental.json",
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
