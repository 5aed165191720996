import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // The browser assets the server imports are generated from web/: always from the current sources.
    globalSetup: ["scripts/build-assets.mjs"],
    setupFiles: ["test/support/fastCheckSeed.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: "forks",
    reporters: ["default"]
  }
})
