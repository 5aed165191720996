// This example's own vitest settings. Without a config file here, vitest looks upwards and, inside the
// repomarket repository, would run with the repository's own configuration (its setup files, its test folders).
// dedupe: inside the repository `repomarket` is a link to the repository's root (`file:../..`), whose compiled
// contract suites would otherwise import the root's own vitest, not the one running this test ("No test suite
// found"); these packages are taken from this example's node_modules whoever imports them.
import { defineConfig } from "vitest/config"

export default defineConfig({
  resolve: { dedupe: ["vitest", "@effect/vitest", "effect"] },
  test: { dir: "dist" }
})
