import { defineConfig } from "vitest/config"
import base from "./vitest.config.js"

/**
 * The suites StrykerJS runs against each mutant (`npm run test:mutation`): every suite that needs no outside
 * service. Suites that need PostgreSQL or Chromium skip themselves unless REQUIRE_POSTGRES / REQUIRE_BROWSER
 * are set; they are unset here so a CI shell that exports them cannot turn a mutant run into an infrastructure
 * failure (the full `npm test` still runs them). Stryker's runner forces one worker thread of its own.
 */
delete process.env.REQUIRE_POSTGRES
delete process.env.REQUIRE_BROWSER

const ALL_SUITES = [
  "test/domain/**/*.test.ts",
  "test/http/**/*.test.ts",
  "test/webhooks/**/*.test.ts",
  "test/contracts/memory.test.ts",
  "test/adapters/**/*.test.ts"
]
// MUTATION_SUITES=domain (comma-separated folders under test/) narrows a development run to the fast suites;
// stryker.config.mjs then keeps its results out of the committed incremental file.
const only = process.env.MUTATION_SUITES?.split(",").filter((s) => s !== "")

export default defineConfig({
  ...base,
  test: {
    ...base.test,
    include: only === undefined ? ALL_SUITES : only.map((suite) => `test/${suite}/**/*.test.ts`),
    // Instrumented code on a busy machine: the exhaustive property tests need far more than the usual 30 s.
    testTimeout: 180_000,
    // SQL adapters need a database (PGlite boots one per file: slow, and it tests SQL, not domain rules).
    exclude: ["test/adapters/sql/**", "**/node_modules/**"]
  }
})
