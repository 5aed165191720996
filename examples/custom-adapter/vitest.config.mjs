// This example's own vitest settings. Without a config file here, vitest looks upwards and, inside the
// repomarket repository, would run with the repository's own configuration (its setup files, its test folders).
import { defineConfig } from "vitest/config"

export default defineConfig({ test: { dir: "dist" } })
