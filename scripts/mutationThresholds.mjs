#!/usr/bin/env node
/**
 * Per-file mutation-score floors, which Stryker's `thresholds.break` (one number for the whole run) cannot
 * express: the money and ownership rules must stay at 90 % or more, domain/rules as a whole at 85 % or more.
 * Reads Stryker's JSON report (mutation-testing-report-schema). Files the run did not mutate are not judged.
 *
 *   node scripts/mutationThresholds.mjs [report.json] [--table] [--scope money]
 *
 * `--table` prints the per-file Markdown table the README shows instead of checking. `--scope money` judges the
 * money scope's report (reports/mutation/money.json by default): every file of it at 90 % or more, and every
 * file of the scope present in the report (a file the run left out is a failure, not a pass).
 */
import { readFileSync } from "node:fs"
import { MONEY_SCOPE_FILES } from "../stryker.config.mjs"

const args = process.argv.slice(2)
const table = args.includes("--table")
const scopeAt = args.indexOf("--scope")
const scope = scopeAt === -1 ? "rules" : args[scopeAt + 1]
const reportPath = args.find((a, i) => !a.startsWith("--") && i !== scopeAt + 1) ??
  (scope === "money" ? "reports/mutation/money.json" : "reports/mutation/mutation.json")

/** The money scope's files, each at 90 % or more: the list Stryker mutates, so the two can never disagree. */
export const MONEY_SCOPE = MONEY_SCOPE_FILES

/** The money and ownership rules: where a surviving mutant can misroute money or hand over a listing. */
export const MONEY_AND_OWNERSHIP = [
  "domain/rules/Requirements.ts",
  "domain/Money.ts",
  "domain/rules/Receipt.ts",
  "domain/rules/Selling.ts",
  "domain/rules/PayoutResolution.ts",
  "domain/rules/ThreeState.ts",
  "domain/rules/Ownership.ts"
]
const FILE_FLOOR = 90
const RULES_FLOOR = 85

const report = JSON.parse(readFileSync(reportPath, "utf8"))

const count = (mutants) => {
  const c = { killed: 0, timeout: 0, survived: 0, noCoverage: 0, ignored: 0, errors: 0 }
  for (const m of mutants) {
    if (m.status === "Killed") c.killed++
    else if (m.status === "Timeout") c.timeout++
    else if (m.status === "Survived") c.survived++
    else if (m.status === "NoCoverage") c.noCoverage++
    else if (m.status === "Ignored") c.ignored++
    else c.errors++
  }
  // Stryker's mutation score: detected / valid mutants (ignored and compile/runtime errors left out).
  const valid = c.killed + c.timeout + c.survived + c.noCoverage
  return { ...c, valid, score: valid === 0 ? 100 : (100 * (c.killed + c.timeout)) / valid }
}

const files = Object.entries(report.files)
  .map(([path, f]) => [path.replace(/\\/g, "/").replace(/^.*?(?=domain\/|codec\/|adapters\/)/, ""), f])
  .sort(([a], [b]) => a.localeCompare(b))
const stats = new Map(files.map(([path, f]) => [path, count(f.mutants)]))

if (table) {
  console.log("| file | score | killed | survived | no coverage | ignored |")
  console.log("|---|---:|---:|---:|---:|---:|")
  for (const [path, s] of stats) {
    console.log(`| ${path} | ${s.score.toFixed(1)} % | ${s.killed + s.timeout} | ${s.survived} | ${s.noCoverage} | ${s.ignored} |`)
  }
  const rules = count(files.filter(([p]) => p.startsWith("domain/rules/")).flatMap(([, f]) => f.mutants))
  console.log(`| **domain/rules overall** | **${rules.score.toFixed(1)} %** | ${rules.killed + rules.timeout} | ${rules.survived} | ${rules.noCoverage} | ${rules.ignored} |`)
  process.exit(0)
}

if (scope === "money") {
  const failures = []
  for (const path of MONEY_SCOPE) {
    const s = stats.get(path)
    if (s === undefined) failures.push(`${path}: not in the report (was it mutated?)`)
    else {
      console.log(`${path}: ${s.score.toFixed(2)} % (floor ${FILE_FLOOR} %), ${s.survived} survived, ${s.noCoverage} without coverage`)
      if (s.score < FILE_FLOOR) failures.push(`${path}: ${s.score.toFixed(2)} % < ${FILE_FLOOR} %`)
    }
  }
  if (failures.length > 0) {
    console.error(`Mutation score below its floor:\n  ${failures.join("\n  ")}`)
    process.exit(1)
  }
  process.exit(0)
}

const failures = []
for (const path of MONEY_AND_OWNERSHIP) {
  const s = stats.get(path)
  if (s === undefined) continue
  if (s.score < FILE_FLOOR) failures.push(`${path}: ${s.score.toFixed(2)} % < ${FILE_FLOOR} % (money and ownership rule)`)
}
const ruleMutants = files.filter(([p]) => p.startsWith("domain/rules/")).flatMap(([, f]) => f.mutants)
if (ruleMutants.length > 0) {
  const s = count(ruleMutants)
  if (s.score < RULES_FLOOR) failures.push(`domain/rules overall: ${s.score.toFixed(2)} % < ${RULES_FLOOR} %`)
  console.log(`domain/rules overall: ${s.score.toFixed(2)} % (floor ${RULES_FLOOR} %)`)
}
for (const path of MONEY_AND_OWNERSHIP) {
  const s = stats.get(path)
  if (s !== undefined) console.log(`${path}: ${s.score.toFixed(2)} % (floor ${FILE_FLOOR} %)`)
}
if (failures.length > 0) {
  console.error(`Mutation score below its floor:\n  ${failures.join("\n  ")}`)
  process.exit(1)
}
