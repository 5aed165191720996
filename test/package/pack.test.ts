import { execFile } from "node:child_process"
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import { rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { describePostgres, postgresTestDatabaseUrl } from "../support/postgres.js"

/*
 * The package as another project gets it: `npm pack` (prepack builds dist/), the tarball's contents, and each
 * example installed from the tarball in a temporary project of its own with only its declared dependencies
 * (npm's cache serves them), type-checked by its strict consumer tsconfig (skipLibCheck false, so repomarket's
 * declarations are checked too) and run with plain `node`. Takes minutes: packing compiles everything.
 */
const run = promisify(execFile)
const root = new URL("../../", import.meta.url).pathname
const work = mkdtempSync(join(tmpdir(), "repomarket-pack-"))
let tarball = ""
let files: Array<string> = []

/** Runs a command; a failure carries its output, so a type error in an example shows in the test report. */
const sh = (cmd: string, args: ReadonlyArray<string>, cwd: string, env?: NodeJS.ProcessEnv) =>
  run(cmd, args, { cwd, maxBuffer: 64 * 1024 * 1024, ...(env === undefined ? {} : { env }) }).catch((e: { stdout?: string; stderr?: string; message: string }) => {
    throw Object.assign(new Error(`${e.message}\n${e.stdout ?? ""}\n${e.stderr ?? ""}`), { stdout: e.stdout ?? "" })
  })

/**
 * Copies an example to the temporary directory and points its `repomarket` dependency at the tarball (in the
 * repository it is `file:../..`, a link to the root).
 */
const install = async (name: string) => {
  const dir = join(work, name)
  // Without its .npmrc: ignore-scripts is there only for the link to the repository's root.
  cpSync(join(root, "examples", name), dir, { recursive: true, filter: (src) => !/node_modules|dist|\.npmrc$/.test(src) })
  // The script its npm scripts run first, one level up as in the repository (repomarket installed, not linked: no-op).
  cpSync(join(root, "examples", "ensure-repomarket.mjs"), join(work, "ensure-repomarket.mjs"))
  const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"))
  pkg.dependencies.repomarket = `file:${tarball}`
  writeFileSync(join(dir, "package.json"), JSON.stringify(pkg, null, 2))
  await sh("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund", "--loglevel=error"], dir)
  return dir
}

/** Output without colour codes (vitest colours it when the environment asks for colour). */
const plain = (text: string) => text.replace(/\u001b\[[0-9;]*m/g, "")

const tsc = (dir: string) => sh("node", ["node_modules/typescript/bin/tsc", "-p", "."], dir)

beforeAll(async () => {
  const { stdout } = await sh("npm", ["pack", "--json", "--pack-destination", work], root)
  const [report] = JSON.parse(stdout.slice(stdout.indexOf("["))) as Array<{ filename: string; files: Array<{ path: string }> }>
  tarball = join(work, report!.filename)
  files = report!.files.map((f) => f.path).sort()
}, 15 * 60_000)

// Three installed examples are tens of thousands of files: removed without blocking the worker (a synchronous
// removal on a busy machine outlived the hook timeout and starved vitest's own messages).
afterAll(() => rm(work, { recursive: true, force: true, maxRetries: 3 }), 10 * 60_000)

describe("npm pack", () => {
  it("ships dist/ (ESM, declarations, maps), the sources those maps point to, package.json and README; nothing else", () => {
    const shipped = new Set(files)
    const outside = files.filter((f) =>
      !/^dist\/.+\.(js|d\.ts|js\.map|d\.ts\.map)$/.test(f) &&
      !/^(index\.ts|(entry|domain|ports|codec|adapters|app|hosts|testing)\/.+\.ts)$/.test(f) &&
      f !== "package.json" && f !== "README.md"
    )
    expect(outside).toEqual([])
    expect(files.filter((f) => /^(test|bench|examples|scripts)\//.test(f) || /\.test\.|\.tsbuildinfo$/.test(f))).toEqual([])
    // Every entry point of the exports map is in it, with its declarations.
    const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { exports: Record<string, { types: string; import: string } | string> }
    for (const [subpath, target] of Object.entries(pkg.exports)) {
      if (typeof target === "string" || subpath.includes("*")) continue
      expect(shipped.has(target.import.slice(2)), target.import).toBe(true)
      expect(shipped.has(target.types.slice(2)), target.types).toBe(true)
    }
    // A source file is shipped only where a declaration map points at it; every compiled file has both maps.
    const ts = files.filter((f) => f.endsWith(".ts") && !f.endsWith(".d.ts"))
    expect(ts.filter((f) => !shipped.has(`dist/${f.replace(/\.ts$/, ".d.ts.map")}`))).toEqual([])
    expect(ts.filter((f) => !shipped.has(`dist/${f.replace(/\.ts$/, ".js")}`))).toEqual([])
    // npm runs none of the package's scripts when a project installs it: no install-time lifecycle script (npm
    // would list it, and `prepare` named scripts/build-assets.mjs, which the tarball does not ship).
    const scripts = (JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { scripts: Record<string, string> }).scripts
    expect(Object.keys(scripts).filter((name) => ["preinstall", "install", "postinstall", "prepare", "prepublish", "preprepare", "postprepare"].includes(name))).toEqual([])
    console.log(`tarball: ${files.length} files`)
  })
})

describe("the examples, installed from the tarball, strict tsc, plain node", () => {
  it("embed-core: lists, quotes and buys on the test twin with @x402/fetch, in one process", async () => {
    const dir = await install("embed-core")
    await tsc(dir)
    const { stdout } = await sh("node", ["dist/main.js"], dir)
    expect(stdout).toMatch(/^listed: http:\/\/market\.internal\/checkout\/\S+$/m)
    expect(stdout).toMatch(/^quote: 402, 0\.50 USD on eip155:84532 to 0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913$/m)
    expect(stdout).toMatch(/^bought: 200, \d+ bytes of application\/gzip, transaction sim_0x[0-9a-f]{64}$/m)
  }, 15 * 60_000)

  it("mount-http: own routes beside repomarket under /market, and the same app as a web-standard handler", async () => {
    const dir = await install("mount-http")
    await tsc(dir)
    const { stdout } = await sh("node", ["dist/main.js"], dir)
    expect(stdout).toMatch(/^own route: 200 hello from the host app$/m)
    expect(stdout).toMatch(/^listed under \/market: 201 http:\/\/127\.0\.0\.1:\d+\/market\/checkout\/\S+\/test$/m)
    expect(stdout).toMatch(/^checkout: 402 x402 challenge$/m)
    expect(stdout).toMatch(/^health: 200$/m)
    expect(stdout).toMatch(/^web handler listed: 201 https:\/\/shop\.example\/checkout\/\S+\/test$/m)
    expect(stdout).toMatch(/^web handler checkout: 402$/m)
  }, 15 * 60_000)

  it("use-cases: lists and buys through the use cases on memory adapters, with no HTTP", async () => {
    const dir = await install("use-cases")
    await tsc(dir)
    const { stdout } = await sh("node", ["dist/main.js"], dir)
    expect(stdout).toMatch(/^listed: octo-org\/widget, checkout chk_\S+$/m)
    expect(stdout).toMatch(/^quote: 0\.50 USD on eip155:84532 to 0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913$/m)
    expect(stdout).toMatch(/^bought: octo-org-widget-[0-9a-f]{7}\.tar\.gz, \d+ bytes, transaction sim_0x[0-9a-f]{64}$/m)
  }, 15 * 60_000)

  it("custom-adapter: an adapter written outside the package passes the exported contract suite, and a broken one fails it", async () => {
    const dir = await install("custom-adapter")
    await tsc(dir)
    const green = await sh("npm", ["test", "--", "--reporter=verbose"], dir)
    expect(plain(green.stdout)).toMatch(/Tests\s+3 passed \(3\)/)
    // The same suite against the adapter with its one rule removed (a value may be spent twice): it must fail.
    // (`npm test` compiles src/ first, as it does for someone trying the example.)
    const adapter = join(dir, "src", "SingleUseMap.ts")
    writeFileSync(adapter, readFileSync(adapter, "utf8").replace("return false", "return true"))
    const red = await sh("npm", ["test"], dir).then(() => "passed", (e: { stdout: string }) => e.stdout)
    expect(plain(red)).toMatch(/Tests\s+[1-3] failed/)
  }, 15 * 60_000)
})

describe("a strict consumer of the core and the testing kit", () => {
  // The root entry is meant to load in a browser or an edge runtime, and the testing kit in any test runner: an
  // app importing `repomarket` and `repomarket/testing` must
  // type-check with no Node types anywhere (`types: []`, and @types/node not among the files tsc reads even when
  // some dependency installed it), strict, with repomarket's own declarations checked (skipLibCheck false).
  it("type-checks an app that imports repomarket and repomarket/testing, with no @types/node", async () => {
    const dir = join(work, "core-only")
    mkdirSync(join(dir, "src"), { recursive: true })
    const ours = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { dependencies: Record<string, string>; devDependencies: Record<string, string> }
    writeFileSync(join(dir, "package.json"), JSON.stringify({
      name: "core-only",
      private: true,
      type: "module",
      dependencies: { repomarket: `file:${tarball}`, effect: ours.dependencies["effect"] },
      devDependencies: { typescript: ours.devDependencies["typescript"] }
    }))
    writeFileSync(join(dir, "tsconfig.json"), JSON.stringify({
      compilerOptions: {
        target: "ES2022",
        // A browser's library: the receipt check's declarations name Web Crypto types.
        lib: ["ES2023", "DOM"],
        module: "NodeNext",
        moduleResolution: "NodeNext",
        strict: true,
        exactOptionalPropertyTypes: true,
        noUncheckedIndexedAccess: true,
        skipLibCheck: false,
        types: [],
        noEmit: true
      },
      include: ["src"]
    }))
    writeFileSync(join(dir, "src", "app.ts"), [
      "import { Effect, Layer } from \"effect\"",
      "import { formatUsd, parsePriceUsd, Purchases, SingleUse, UseCasesLive, verifyReceipt, type Listing } from \"repomarket\"",
      "export const price = parsePriceUsd(\"4.99\")",
      "export const shown = (listing: Listing) => listing.price === null ? \"not selling\" : formatUsd(listing.price)",
      "export const quote = (id: string) => Effect.flatMap(Purchases, (p) => p.quote(id, false))",
      "export const spend = (key: string) => Effect.flatMap(SingleUse, (s) => s.spend(\"demo\", key, new Date(0)))",
      "export const wired = UseCasesLive.pipe(Layer.orDie)",
      "export const check = verifyReceipt",
      // The testing kit too: its declarations name no Node type (a key is a Uint8Array, not a Buffer).
      "import { memoryPorts } from \"repomarket/testing\"",
      "export const ports = memoryPorts({ baseUrl: \"https://shop.example\" })",
      ""
    ].join("\n"))
    await sh("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund", "--loglevel=error"], dir)
    // What the server's own tools and the optional peers would have brought: none of it is installed.
    expect(SERVER_ONLY_PACKAGES.filter((name) => existsSync(join(dir, "node_modules", name)))).toEqual([])
    const { stdout } = await sh("node", ["node_modules/typescript/bin/tsc", "-p", ".", "--listFilesOnly"], dir)
    const read = stdout.split("\n").filter((f) => f !== "")
    expect(read.some((f) => f.includes("/node_modules/repomarket/dist/index.d.ts"))).toBe(true)
    expect(read.filter((f) => f.includes("/@types/node/"))).toEqual([])
    await sh("node", ["node_modules/typescript/bin/tsc", "-p", "."], dir)
  }, 15 * 60_000)
})

/**
 * Packages a library user does not run: the server's development and build tools (tsx, esbuild, and
 * @parcel/watcher, which @effect/platform-node's file watching brings) and the optional peers (the embedded
 * database, the Node server, the MCP SDK), installed only by whoever asks for them.
 */
const SERVER_ONLY_PACKAGES = ["tsx", "esbuild", "@parcel/watcher", "@electric-sql/pglite", "@electric-sql/pglite-socket", "@effect/platform-node", "@modelcontextprotocol/sdk"]

await describePostgres("repomarket/http installed from the tarball alone", () => {
  it("serves on PostgreSQL without the optional peers, a part that needs a missing one says which and how to install it, and the Node server runs with @effect/platform-node alone", async () => {
    const dir = join(work, "http-postgres")
    mkdirSync(dir, { recursive: true })
    writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "http-postgres", private: true, type: "module", dependencies: { repomarket: `file:${tarball}` } }))
    writeFileSync(join(dir, "main.mjs"), [
      "import { DefaultPorts, makeNodeHandler, makeWebHandler } from \"repomarket/http\"",
      "const handle = makeWebHandler(DefaultPorts)",
      "try {",
      "  if (process.env.DATABASE_URL === undefined) {",
      "    await handle.ready().then(() => console.log(\"embedded: started\"), (e) => console.log(`embedded: ${e.message}`))",
      "  } else {",
      "    console.log(`health: ${(await handle(new Request(\"http://localhost/healthz\"))).status}`)",
      "    const mcp = await handle(new Request(\"http://localhost/mcp\", { method: \"POST\", headers: { \"content-type\": \"application/json\", accept: \"application/json, text/event-stream\", \"mcp-protocol-version\": \"2025-06-18\" }, body: JSON.stringify({ jsonrpc: \"2.0\", id: 1, method: \"tools/list\" }) }))",
      "    console.log(`mcp: ${mcp.status} ${(await mcp.json()).code}`)",
      "    await makeNodeHandler(DefaultPorts).then((h) => h.dispose().then(() => console.log(\"node handler: built\")), (e) => console.log(`node handler: ${e.message}`))",
      "  }",
      "} finally {",
      "  await handle.dispose()",
      "}",
      ""
    ].join("\n"))
    await sh("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund", "--loglevel=error"], dir)
    expect(SERVER_ONLY_PACKAGES.filter((name) => existsSync(join(dir, "node_modules", name)))).toEqual([])
    const env = { PATH: process.env["PATH"], HOME: process.env["HOME"], DATA_DIR: join(dir, ".data"), LOG_LEVEL: "Error" }
    const onPostgres = await Effect.runPromise(Effect.scoped(Effect.flatMap(postgresTestDatabaseUrl, (url) =>
      Effect.promise(() => sh("node", ["main.mjs"], dir, { ...env, DATABASE_URL: url })))))
    expect(onPostgres.stdout).toMatch(/^health: 200$/m)
    // The MCP door answers that it is not installed; the HTTP API serves on.
    expect(onPostgres.stdout).toMatch(/^mcp: 503 mcp_unavailable$/m)
    expect(onPostgres.stdout).toMatch(/^node handler: .*needs @effect\/platform-node, an optional peer dependency of repomarket that is not installed: npm install @effect\/platform-node$/m)
    // No DATABASE_URL: the embedded default names what it needs, and the other way out.
    const embedded = await sh("node", ["main.mjs"], dir, env)
    expect(embedded.stdout).toMatch(/^embedded: .*needs @electric-sql\/pglite and @electric-sql\/pglite-socket, .*npm install @electric-sql\/pglite @electric-sql\/pglite-socket; or set DATABASE_URL/m)
    // With the one peer the Node server needs, as the message says: `npm start`'s server on PostgreSQL, still no PGlite.
    const ours = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { peerDependencies: Record<string, string> }
    await sh("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund", "--loglevel=error", `@effect/platform-node@${ours.peerDependencies["@effect/platform-node"]}`], dir)
    expect(existsSync(join(dir, "node_modules", "@electric-sql", "pglite"))).toBe(false)
    writeFileSync(join(dir, "server.mjs"), [
      "import { DefaultPorts, startNodeServer } from \"repomarket/http\"",
      "const server = await startNodeServer(DefaultPorts, { port: 0, host: \"127.0.0.1\" })",
      "try {",
      "  console.log(`node server health: ${(await fetch(`${server.url}/healthz`)).status}`)",
      "} finally {",
      "  await server.close()",
      "}",
      ""
    ].join("\n"))
    const served = await Effect.runPromise(Effect.scoped(Effect.flatMap(postgresTestDatabaseUrl, (url) =>
      Effect.promise(() => sh("node", ["server.mjs"], dir, { ...env, DATABASE_URL: url, BASE_URL: "http://127.0.0.1" })))))
    expect(served.stdout).toMatch(/^node server health: 200$/m)
  }, 15 * 60_000)
})

// Keeps the examples list and this file in step: a new example needs a test here.
it("every example is tested", () => {
  expect(readdirSync(join(root, "examples"), { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name).sort())
    .toEqual(["custom-adapter", "embed-core", "mount-http", "use-cases"])
})
