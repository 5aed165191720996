// The public API as checked-in reports (api/<entry>.api.md), one per entry point of package.json's exports,
// made by @microsoft/api-extractor from dist/'s declarations (run `npm run build` first).
//   node scripts/api-report.mjs           fails when an entry's surface differs from its report (CI)
//   node scripts/api-report.mjs --update  rewrites the reports (commit them with the change)
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { Extractor, ExtractorConfig } from "@microsoft/api-extractor"
import { canonicalReport, forgottenExports } from "./apiReportCanonical.mjs"

const root = join(dirname(fileURLToPath(import.meta.url)), "..")
const update = process.argv.includes("--update")
const only = process.argv.slice(2).filter((a) => !a.startsWith("--"))

/** Every entry point: its report name and its declaration file. */
const entries = () => {
  const found = [
    ["repomarket", "dist/index.d.ts"],
    ["http", "dist/entry/http.d.ts"],
    ["lambda", "dist/entry/lambda.d.ts"],
    ["lambda-handler", "dist/entry/lambda-handler.d.ts"],
    ["lambda-scheduled", "dist/entry/lambda-scheduled.d.ts"],
    ["testing", "dist/entry/testing.d.ts"],
    ["testing-contracts", "dist/entry/testing-contracts.d.ts"],
    ["webhooks", "dist/entry/webhooks.d.ts"]
  ]
  for (const file of readdirSync(join(root, "entry/adapters")).filter((f) => f.endsWith(".ts")).sort()) {
    found.push([`adapters-${file.replace(/\.ts$/, "")}`, `dist/entry/adapters/${file.replace(/\.ts$/, ".d.ts")}`])
  }
  return found.filter(([name]) => only.length === 0 || only.includes(name))
}

let failed = 0
for (const [name, dts] of entries()) {
  if (!existsSync(join(root, dts))) throw new Error(`${dts} is missing: run npm run build first`)
  const config = ExtractorConfig.prepare({
    configObject: {
      projectFolder: root,
      mainEntryPointFilePath: join(root, dts),
      compiler: { overrideTsconfig: { compilerOptions: { target: "ES2022", module: "NodeNext", moduleResolution: "NodeNext", lib: ["ES2023", "DOM"], types: ["node"], skipLibCheck: true, strict: true } } },
      apiReport: { enabled: true, reportFileName: `${name}.api.md`, reportFolder: join(root, "api"), reportTempFolder: join(root, "dist/.api") },
      docModel: { enabled: false },
      dtsRollup: { enabled: false },
      tsdocMetadata: { enabled: false },
      messages: {
        compilerMessageReporting: { default: { logLevel: "warning" } },
        extractorMessageReporting: {
          default: { logLevel: "warning", addToApiReportFile: true },
          // A type reachable from an entry but not exported by it: written into the report, where the check below
          // fails on it (TypeScript's synthesized `X_base` classes aside: see apiReportCanonical.mjs).
          "ae-forgotten-export": { logLevel: "none", addToApiReportFile: true },
          "ae-missing-release-tag": { logLevel: "none", addToApiReportFile: false },
          "ae-wrong-input-file-type": { logLevel: "none" }
        },
        tsdocMessageReporting: { default: { logLevel: "none", addToApiReportFile: false } }
      }
    },
    configObjectFullPath: join(root, "api", "api-extractor.json"),
    packageJsonFullPath: join(root, "package.json")
  })
  // Never lets API Extractor write api/ itself: its report is compared (and written) in canonical form.
  Extractor.invoke(config, { localBuild: false, showVerboseMessages: false, messageCallback: (m) => { if (m.logLevel === "warning") m.handled = true } })
  const made = canonicalReport(readFileSync(join(root, "dist/.api", `${name}.api.md`), "utf8"))
  const reportPath = join(root, "api", `${name}.api.md`)
  const kept = existsSync(reportPath) ? canonicalReport(readFileSync(reportPath, "utf8")) : null
  const forgotten = forgottenExports(made)
  if (forgotten.length > 0) {
    failed++
    console.log(`${name}: ${forgotten.length} type(s) reachable but not exported (export them by name, or keep them out of the signatures):`)
    for (const line of forgotten) console.log(`  ${line.trim().replace(/^\/\/ (Warning: )?/, "")}`)
  }
  const changed = made !== kept
  if (changed && update) writeFileSync(reportPath, made)
  if (changed && !update) failed++
  console.log(`${name}: ${changed ? (update ? "report updated" : "API CHANGED (run node scripts/api-report.mjs --update and commit api/)") : "unchanged"}`)
}
if (failed > 0) process.exit(1)
