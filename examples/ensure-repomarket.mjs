// Run first by each example's `npm test`, `npm run build` and `npm start`: makes sure the repomarket it links is ready.
//
// Inside this repository an example depends on `"repomarket": "file:../.."`, which npm links to the repository's
// root as it stands, without installing the root's dependencies: on a fresh clone the root has no node_modules
// and no dist/. So, saying so in one line each: `npm ci` in the root when it has no node_modules, then
// `npm run build` there when dist/index.js is missing. Nothing is printed when both are there. (The examples'
// .npmrc sets ignore-scripts, so that `npm install` runs no lifecycle script of the linked root before its dependencies
// are there; that skips pre/post scripts too, hence a script of its own called at the start of each.)
//
// An example installed from a packed tarball (test/package/pack.test.ts does this, as a project outside the
// repository would) has a real node_modules/repomarket with dist/ inside: nothing to do.
import { execFileSync } from "node:child_process"
import { existsSync, lstatSync, readFileSync, realpathSync } from "node:fs"
import { join } from "node:path"

const here = process.cwd()
const link = join(here, "node_modules", "repomarket")
if (!existsSync(join(link, "package.json"))) {
  console.error(`repomarket: not installed in ${here}; run npm install first`)
  process.exit(1)
}
if (lstatSync(link).isSymbolicLink()) {
  const root = realpathSync(link)
  // npm in the root, without the variables npm set for this example's script: they name the example, and carry
  // its ignore-scripts (the root's install runs its dependencies' scripts, as usual).
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) =>
    k !== "npm_config_local_prefix" && k !== "npm_config_ignore_scripts" &&
    !k.startsWith("npm_package_") && !k.startsWith("npm_lifecycle_")))
  const npm = (...args) => execFileSync("npm", args, { cwd: root, env, stdio: "inherit", shell: process.platform === "win32" })
  if (!existsSync(join(root, "node_modules"))) {
    console.log(`repomarket: installing the repository's dependencies (npm ci in ${root}, once; a few minutes)`)
    npm("ci", "--no-audit", "--no-fund", "--loglevel=error")
  }
  if (!existsSync(join(root, "dist", "index.js"))) {
    console.log(`repomarket: building the package (npm run build in ${root})`)
    npm("run", "build", "--silent")
  }
  // The linked package's code imports its dependencies from the root's node_modules, this example's code from its
  // own: a package both declare must be the same version there, or TypeScript sees two different `effect`s (and
  // two copies of @types/node clash). Today's ranges resolve alike; say so when they stop doing so.
  const version = (dir, name) => {
    try { return JSON.parse(readFileSync(join(dir, "node_modules", name, "package.json"), "utf8")).version } catch { return undefined }
  }
  const own = JSON.parse(readFileSync(join(here, "package.json"), "utf8"))
  for (const name of Object.keys({ ...own.dependencies, ...own.devDependencies })) {
    const mine = version(here, name)
    const theirs = version(root, name)
    if (name !== "repomarket" && mine !== undefined && theirs !== undefined && mine !== theirs) {
      console.log(`repomarket: ${name} is ${mine} here but ${theirs} in ${root}; if types clash: npm install --no-save ${name}@${theirs}`)
    }
  }
}
