// Records the optional platform builds (rollup, msgpackr-extract, ...) that the registry mirror on these
// machines does not serve, so `npm ci` finds every optional dependency in package-lock.json. npm skips them on
// a platform they do not fit and fetches them by version from the registry where they do. Run after
// `npm install` changes the lock: `node scripts/lock-optional-platforms.mjs`.
import { readFileSync, writeFileSync } from "node:fs"

const path = new URL("../package-lock.json", import.meta.url)
const lock = JSON.parse(readFileSync(path, "utf8"))
const packages = lock.packages
let added = 0
for (const [key, entry] of Object.entries(packages)) {
  for (const [name, version] of Object.entries(entry.optionalDependencies ?? {})) {
    // Resolve where npm would place it: beside its parent's node_modules, else hoisted to the root.
    const nested = `${key ? key + "/" : ""}node_modules/${name}`
    const hoisted = `node_modules/${name}`
    if (packages[nested] || packages[hoisted]) continue
    packages[hoisted] = { version, ...(entry.dev ? { dev: true } : {}), optional: true }
    added++
  }
}
lock.packages = Object.fromEntries(Object.entries(packages).sort(([a], [b]) => (a === "" ? -1 : b === "" ? 1 : a.localeCompare(b))))
writeFileSync(path, JSON.stringify(lock, null, 2) + "\n")
console.log(`recorded ${added} optional platform packages`)
