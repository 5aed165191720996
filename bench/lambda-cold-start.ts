/**
 * Cold start of the AWS Lambda functions, beside the Node host's start, measured in the same run. Each Lambda
 * entry is bundled as `sam build` bundles it (hosts/lambda/template.yaml's esbuild options, read from the
 * template), and also unminified without a source map (the size the issue's 5 MB goal is about). A cold start
 * is a fresh Node process running the Lambda runtime stand-in (test/lambda/runtime/bootstrap.mjs) over the
 * bundle, with the production settings against PostgreSQL: `INIT Duration` is module load until the handler is
 * ready (the app built, the database reached, migrations checked), as Lambda reports it; `to first answer` adds
 * the process start and one `GET /healthz` through the Runtime API. The Node host's figure is `npm start`
 * (tsx hosts/node/main.ts) from spawn until `/healthz` answers 200, on the same database. Not a test: the
 * numbers depend on the machine (2 shared cores here).
 *
 *   npx tsx bench/lambda-cold-start.ts [--runs 5]
 */
import { spawn } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { basename, join } from "node:path"
import { createServer } from "node:net"
import { fileURLToPath } from "node:url"
import { parseArgs } from "node:util"
import { postgresProblem, shownUrl } from "../test/support/postgres.js"
import { bundleLikeTemplate, type Bundled } from "../test/lambda/runtime/BundleLikeTemplate.js"
import { startFakeLambda } from "../test/lambda/runtime/FakeLambda.js"
import { startWorld, WORLD_BASE_URL } from "../test/lambda/runtime/StreamingWorld.js"

const { values } = parseArgs({ options: { runs: { type: "string", default: "5" } } })
const runs = Number.parseInt(values.runs, 10)
if (!(runs >= 1 && runs <= 50)) {
  console.error("--runs must be a whole number from 1 to 50")
  process.exit(2)
}

const INIT_GOAL_MS = 500
const BUNDLE_GOAL_BYTES = 5_000_000
const root = fileURLToPath(new URL("../", import.meta.url))
const MB = 1_000_000

const problem = await postgresProblem()
if (problem !== undefined) {
  console.log(`  PostgreSQL not reachable at ${shownUrl()} (${problem}): the Lambda host needs DATABASE_URL, nothing measured`)
  process.exit(0)
}

const median = (xs: ReadonlyArray<number>) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length % 2 === 1 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2
}
const spread = (xs: ReadonlyArray<number>) => `median ${median(xs).toFixed(0)} ms (min ${Math.min(...xs).toFixed(0)}, max ${Math.max(...xs).toFixed(0)}, n=${xs.length})`

const freePort = () =>
  new Promise<number>((resolve) => {
    const probe = createServer().listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as { port: number }
      probe.close(() => resolve(port))
    })
  })

const healthEvent = () => {
  const base = JSON.parse(readFileSync(new URL("../test/lambda/fixtures/function-url.json", import.meta.url), "utf8"))
  return {
    ...base,
    rawPath: "/healthz",
    rawQueryString: "",
    cookies: undefined,
    headers: { accept: "application/json", host: base.requestContext.domainName },
    body: null,
    isBase64Encoded: false,
    requestContext: { ...base.requestContext, http: { ...base.requestContext.http, method: "GET", path: "/healthz" } }
  }
}

const out = mkdtempSync(join(tmpdir(), "repomarket-bench-lambda-"))
const world = await startWorld([{ owner: "bench", name: "small", files: { "README.md": "# Small\n" } }])
try {
  console.log("  bundles (esbuild as hosts/lambda/template.yaml says; sizes in decimal MB)")
  const sizes: Record<string, { deployed: Bundled; plain: Bundled }> = {}
  for (const entry of ["hosts/lambda/handler.ts", "hosts/lambda/streaming.ts", "hosts/lambda/scheduled.ts"]) {
    const deployed = await bundleLikeTemplate(entry, join(out, "deployed"))
    const plain = await bundleLikeTemplate(entry, join(out, "plain"), { minify: false, sourcemap: false })
    sizes[entry] = { deployed, plain }
    const goal = plain.bytes <= BUNDLE_GOAL_BYTES ? "met" : "MISSED"
    console.log(
      `    ${entry.padEnd(28)} unminified ${(plain.bytes / MB).toFixed(2)} MB (goal ≤ 5 MB: ${goal}); ` +
        `as deployed ${(deployed.bytes / MB).toFixed(2)} MB${deployed.mapBytes > 0 ? ` + source map ${(deployed.mapBytes / MB).toFixed(2)} MB` : ""}`
    )
    if (plain.others.length > 0) {
      // Further entry points of the same function: files beside the bundle, imported on first use, not at init.
      console.log(`      beside it, loaded on first use: ${plain.others.map((o) => `${basename(o.file)} ${(o.bytes / MB).toFixed(2)} MB`).join(", ")}`)
    }
  }

  /** One cold start of a bundle in a fresh process: INIT Duration, and spawn → first answer. */
  const coldStart = async (bundle: string, nodeOptions: ReadonlyArray<string> = []) => {
    const started = performance.now()
    const lambda = await startFakeLambda({ bundle, env: world.env, nodeOptions })
    try {
      const init = await lambda.initDurationMs
      const answer = await lambda.invoke(healthEvent())
      answer.body.resume()
      await answer.ended
      if (answer.statusCode !== 200) throw new Error(`/healthz answered ${answer.statusCode}:\n${lambda.output()}`)
      return { init, cpu: lambda.initCpuMs(), firstAnswer: performance.now() - started }
    } finally {
      await lambda.close()
    }
  }

  // The first start on a fresh database runs the migrations; every later one only checks them.
  const first = await coldStart(sizes["hosts/lambda/streaming.ts"]!.deployed.file)
  console.log(`\n  first start on a fresh database (migrations run): INIT ${first.init.toFixed(0)} ms`)

  const measured: Array<{ name: string; init: Array<number>; cpu: Array<number>; firstAnswer: Array<number> }> = []
  // The template's bundle (unminified, no source map), and for comparison the earlier template's choice:
  // minified, with a source map and NODE_OPTIONS=--enable-source-maps (Node then parses the map at load).
  const mapped = await bundleLikeTemplate("hosts/lambda/streaming.ts", join(out, "mapped"), { minify: true, sourcemap: true })
  const variants = [
    { name: "streaming.ts as deployed", file: sizes["hosts/lambda/streaming.ts"]!.deployed.file, nodeOptions: [] },
    { name: "handler.ts as deployed", file: sizes["hosts/lambda/handler.ts"]!.deployed.file, nodeOptions: [] },
    { name: "streaming.ts minified + map + --enable-source-maps", file: mapped.file, nodeOptions: ["--enable-source-maps"] }
  ]
  for (const variant of variants) {
    const init: Array<number> = []
    const cpu: Array<number> = []
    const firstAnswer: Array<number> = []
    for (let i = 0; i < runs; i++) {
      const r = await coldStart(variant.file, variant.nodeOptions)
      init.push(r.init)
      cpu.push(r.cpu)
      firstAnswer.push(r.firstAnswer)
    }
    measured.push({ name: variant.name, init, cpu, firstAnswer })
  }

  // The Node host as `npm start` runs it, on the same database: spawn until /healthz answers 200.
  const nodeHost: Array<number> = []
  for (let i = 0; i < runs; i++) {
    const port = await freePort()
    const started = performance.now()
    const child = spawn(process.execPath, [fileURLToPath(new URL("../node_modules/tsx/dist/cli.mjs", import.meta.url)), "hosts/node/main.ts"], {
      cwd: root,
      env: { ...process.env, ...world.env, BASE_URL: WORLD_BASE_URL, PORT: String(port) },
      stdio: "ignore",
      detached: true
    })
    try {
      for (;;) {
        if (performance.now() - started > 60_000) throw new Error("the Node host did not answer /healthz within 60 s")
        const ok = await fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.status === 200, () => false)
        if (ok) break
        await new Promise((r) => setTimeout(r, 10))
      }
      nodeHost.push(performance.now() - started)
    } finally {
      process.kill(-child.pid!, "SIGKILL")
    }
  }

  console.log(`\n  cold start, ${runs} fresh processes each (${new Date().toISOString()})`)
  for (const m of measured) {
    console.log(`    ${m.name.padEnd(50)} INIT ${spread(m.init)}, CPU ${spread(m.cpu)}; spawn → first answer ${spread(m.firstAnswer)}`)
  }
  console.log(`    ${"Node host (npm start)".padEnd(50)} spawn → /healthz 200 ${spread(nodeHost)}`)
  const deployedInit = median(measured[0]!.init)
  console.log(`\n  Lambda INIT (streaming.ts as deployed) median ${deployedInit.toFixed(0)} ms: goal ≤ ${INIT_GOAL_MS} ms ${deployedInit <= INIT_GOAL_MS ? "met" : "MISSED"}; ` +
    `ratio to the Node host's start ${(deployedInit / median(nodeHost)).toFixed(2)}×; INIT CPU time median ${median(measured[0]!.cpu).toFixed(0)} ms ` +
    `(the steadier figure on a busy machine)`)
} finally {
  await world.close()
  rmSync(out, { recursive: true, force: true })
}
