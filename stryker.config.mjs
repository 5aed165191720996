// @ts-check
/**
 * Mutation testing of the domain: StrykerJS 9 (10.x needs Node 22) with the vitest runner, perTest coverage
 * (only the tests that reach a mutant run against it). Two scopes (README, "Mutation testing"):
 *
 * - `npm run test:mutation` (MUTATION_SCOPE unset or `rules`): `domain/rules/**` and `domain/Money.ts` against
 *   `test/domain`. This is the measured scope with floors (scripts/mutationThresholds.mjs), run by CI when the
 *   rules or their tests change; incremental from `mutation/incremental.json`, committed so CI starts from the
 *   last run.
 * - `npm run test:mutation:full` (MUTATION_SCOPE=full): all of `domain/` and `domain/usecases/` against every suite that needs no
 *   outside service (vitest.mutation.config.ts); its incremental record stays under `reports/`.
 * - `npm run test:mutation:money` (MUTATION_SCOPE=money): the code that decides whether money moved, whether a
 *   payment matches the offer and whether goods go out — the Base and Solana local checks, payment readers and
 *   status readers, the x402 codec and facilitator client, `Purchases` / `Settlements` / `Reconciler` — against
 *   their own suites (`test/adapters/chain-status`, `test/adapters/payments`, `test/usecases`); floors in
 *   scripts/mutationThresholds.mjs (90 % a file); its
 *   incremental record is committed as `mutation/incremental-money.json`. CI runs it when those files change.
 *
 * MUTATE (comma-separated globs) and MUTATION_SUITES (folders under test/) narrow a development run; such a run
 * keeps its own record under `reports/`, never the committed one.
 *
 * @type {import('@stryker-mutator/api/core').PartialStrykerOptions}
 */
const full = process.env.MUTATION_SCOPE === "full"
const money = process.env.MUTATION_SCOPE === "money"
const narrowed = process.env.MUTATE !== undefined || process.env.MUTATION_SUITES !== undefined

/**
 * The money scope: where a surviving mutant could take a look-alike or forged payment for the offer, settle a sale on
 * weak evidence, fail one that was paid, or send goods for a sale that is not settled.
 */
export const MONEY_SCOPE_FILES = [
  "adapters/evm/Eip3009Check.ts",
  "adapters/evm/Eip3009Status.ts",
  "adapters/evm/EvmPayment.ts",
  "adapters/solana/SignatureStatus.ts",
  "adapters/solana/SolanaCheck.ts",
  "adapters/solana/SolanaPayment.ts",
  "adapters/x402/FacilitatorHttp.ts",
  "codec/PaymentHeader.ts",
  "codec/Wire.ts",
  "domain/usecases/Purchases.ts",
  // The purchase, one file per operation (the buyer-facing message texts in purchases/Messages.ts are not money
  // decisions; purchases/Types.ts and Deps.ts hold no logic).
  "domain/usecases/purchases/Quote.ts",
  "domain/usecases/purchases/Pay.ts",
  "domain/usecases/purchases/Goods.ts",
  "domain/usecases/purchases/Recovery.ts",
  // Updates after purchase hand out goods without a payment: who may, which commit, within which window.
  "domain/usecases/purchases/Updates.ts",
  // Which digest a delivery, its receipt and an offer name, and when an archive is cut (issue 30).
  "domain/usecases/ArchiveCuts.ts",
  "domain/usecases/Settlements.ts",
  "domain/usecases/Reconciler.ts",
  // Which settle answers are refusals and which leave the payment's fate to the chain (issue 39).
  "domain/SettlementReasons.ts"
]
// adapters/x402 holds the facilitator's socket-level test (a settle is never re-sent on a reset connection).
const MONEY_SCOPE_SUITES = "adapters/chain-status,adapters/payments,adapters/x402,usecases"

// Each scope runs its own suites; vitest.mutation.config.ts reads this in Stryker's test-runner processes.
if (!full && process.env.MUTATION_SUITES === undefined) process.env.MUTATION_SUITES = money ? MONEY_SCOPE_SUITES : "domain"
/** A name for a run's own files (record, report, sandbox), so that runs of different scopes never share them. */
const slug = narrowed
  ? `${process.env.MUTATE ?? "scope"}-${process.env.MUTATION_SUITES ?? "suites"}`.replace(/\W+/g, "-").slice(0, 80)
  : full ? "full" : money ? "money" : "rules"

export default {
  testRunner: "vitest",
  plugins: ["@stryker-mutator/vitest-runner"],
  vitest: { configFile: "vitest.mutation.config.ts", related: true },
  coverageAnalysis: "perTest",
  mutate: process.env.MUTATE
    ? process.env.MUTATE.split(",")
    : full
    ? ["domain/**/*.ts"]
    : money
    ? MONEY_SCOPE_FILES
    : ["domain/rules/**/*.ts", "domain/Money.ts"],
  incremental: true,
  // Only the rules and money scopes, run whole, write the committed records: a narrowed run's survivors are not the scope's.
  incrementalFile: narrowed
    ? `reports/mutation/incremental-${slug}.json`
    : full
    ? "reports/mutation/incremental-full.json"
    : money
    ? "mutation/incremental-money.json"
    : "mutation/incremental.json",
  // The first run over every suite imports the app once per HTTP test file: far more than Stryker's default 5 minutes.
  dryRunTimeoutMinutes: 60,
  reporters: ["html", "json", "clear-text", "progress"],
  htmlReporter: { fileName: slug === "rules" ? "reports/mutation/index.html" : `reports/mutation/${slug}.html` },
  jsonReporter: { fileName: slug === "rules" ? "reports/mutation/mutation.json" : `reports/mutation/${slug}.json` },
  // A sandbox per scope: two runs at once (a narrowed one beside a scope) never clean each other's files.
  tempDirName: slug === "rules" ? ".stryker-tmp" : `.stryker-tmp-${slug}`,
  // Never copy another run's sandbox (or a scratch folder) into this one's: two runs at once would trip on each other.
  ignorePatterns: ["/.stryker-tmp*", "/.scratch*"],
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
