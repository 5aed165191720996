import { execFile } from "node:child_process"
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join, relative } from "node:path"
import { promisify } from "node:util"
import { describe, expect, it } from "vitest"

/**
 * The import boundaries of `.dependency-cruiser.cjs` (the layers of docs/architecture.md, see its header) can fail: a
 * wrong-way import planted in a sandbox (a temporary directory with a copy of the config and a few stub files,
 * never the working tree, so no concurrent tsc or vitest run sees it) fails the check naming its rule. And the
 * real tree passes, cruised exactly as `npm run lint:boundaries` does.
 */

const root = new URL("../../", import.meta.url).pathname
const depcruise = join(root, "node_modules/dependency-cruiser/bin/dependency-cruise.mjs")
const run = promisify(execFile)

interface Violation {
  readonly rule: { readonly name: string }
  readonly from: string
  readonly to: string
}

/** Runs dependency-cruiser in `cwd` with the config there over `dirs`: its exit code and report. */
const depcruiseIn = async (cwd: string, dirs: ReadonlyArray<string>, outputType: "err" | "json") => {
  const args = [depcruise, "--config", ".dependency-cruiser.cjs", "--output-type", outputType, ...dirs]
  try {
    const { stdout } = await run(process.execPath, args, { cwd, maxBuffer: 256 * 1024 * 1024 })
    return { code: 0, stdout }
  } catch (e) {
    // With the err reporter (the one CI reads) depcruise exits with the number of errors, its report on stdout.
    const failed = e as { code?: unknown; stdout?: string }
    if (typeof failed.code !== "number" || failed.stdout === undefined) throw e
    return { code: failed.code, stdout: failed.stdout }
  }
}

/** The errors counted and the violations found, from the JSON report (whose exit code is always 0). */
const cruise = async (cwd: string, dirs: ReadonlyArray<string>) => {
  const { summary } = JSON.parse((await depcruiseIn(cwd, dirs, "json")).stdout) as {
    summary: { error: number; violations: ReadonlyArray<Violation> }
  }
  return { errors: summary.error, violations: summary.violations.map((v) => ({ rule: v.rule.name, from: v.from, to: v.to })) }
}

/** One lawful file in every layer, each importing the layer below it: each case adds its planted files. */
const LAWFUL: Readonly<Record<string, string>> = {
  "domain/Money.ts": "export type Money = bigint\n",
  "domain/rules/Fee.ts": "import type { Money } from \"../Money.js\"\nexport const fee = (m: Money): Money => m / 100n\n",
  "ports/Chains.ts": "import type { Money } from \"../domain/Money.js\"\nexport interface Chains { readonly minimum: Money }\n",
  "ports/SecretBox.ts": "export interface SecretBox { readonly randomBytes: (n: number) => Uint8Array }\n",
  "domain/usecases/Pay.ts":
    "import type { Chains } from \"../../ports/Chains.js\"\nimport { fee } from \"../rules/Fee.js\"\n" +
    "export const pay = (chains: Chains) => fee(chains.minimum)\n",
  "codec/Wire.ts": "import type { Money } from \"../domain/Money.js\"\nexport const encode = (m: Money) => String(m)\n",
  "adapters/chains/ChainsLive.ts":
    "import type { Chains } from \"../../ports/Chains.js\"\nimport { encode } from \"../../codec/Wire.js\"\n" +
    "export const chains: Chains = { minimum: BigInt(encode(1n)) }\n",
  "app/Handlers.ts":
    "import { pay } from \"../domain/usecases/Pay.js\"\nimport { encode } from \"../codec/Wire.js\"\n" +
    "import type { Chains } from \"../ports/Chains.js\"\nexport const handle = (c: Chains) => encode(pay(c))\n",
  "hosts/Ports.ts":
    "import { chains } from \"../adapters/chains/ChainsLive.js\"\nimport { handle } from \"../app/Handlers.js\"\n" +
    "export const main = () => handle(chains)\n",
  "entry/http.ts": "export { main } from \"../hosts/Ports.js\"\nexport { handle } from \"../app/Handlers.js\"\n"
}

const LAYERS = ["domain", "ports", "codec", "adapters", "app", "hosts", "entry"]

/** Runs `check` on a sandbox holding the repo's config, the lawful files and `planted`; always deletes the sandbox. */
const inSandbox = async <A>(planted: Readonly<Record<string, string>>, check: (sandbox: string) => Promise<A>) => {
  const sandbox = mkdtempSync(join(tmpdir(), "repomarket-boundaries-"))
  try {
    copyFileSync(join(root, ".dependency-cruiser.cjs"), join(sandbox, ".dependency-cruiser.cjs"))
    const tsconfig = { compilerOptions: { target: "ES2022", module: "NodeNext", moduleResolution: "NodeNext", strict: true } }
    writeFileSync(join(sandbox, "tsconfig.json"), JSON.stringify(tsconfig))
    for (const [path, text] of Object.entries({ ...LAWFUL, ...planted })) {
      mkdirSync(dirname(join(sandbox, path)), { recursive: true })
      writeFileSync(join(sandbox, path), text)
    }
    return await check(sandbox)
  } finally {
    rmSync(sandbox, { recursive: true, force: true })
  }
}

const cruisePlanted = (planted: Readonly<Record<string, string>>) => inSandbox(planted, (sandbox) => cruise(sandbox, LAYERS))

/** A file at `from` importing `to` (a path from the sandbox's root, or a Node built-in). */
const importing = (from: string, to: string): Record<string, string> => {
  const spec = to.startsWith("node:") ? to : relative(dirname(from), to).replace(/\.ts$/, ".js").replace(/^(?!\.)/, "./")
  return { [from]: `import * as planted from "${spec}"\nexport const p = planted\n` }
}

const PORT_IMPORT = "import type { Chains } from \"../../ports/Chains.js\"\nexport type C = Chains\n"

describe("import boundaries", () => {
  it("the sandbox without a planted import passes, so a failure below is the planted import's", async () => {
    expect(await cruisePlanted({})).toEqual({ errors: 0, violations: [] })
  }, 120_000)

  it.each([
    ["a type-only import", PORT_IMPORT],
    ["an import", "import * as chains from \"../../ports/Chains.js\"\nexport const c = chains\n"]
  ])("a rule importing a port (%s) fails the check, naming the model's rule", async (_, text) => {
    const result = await cruisePlanted({ "domain/rules/Planted.ts": text })
    expect(result.errors).toBeGreaterThan(0)
    expect(result.violations).toEqual([
      { rule: "model-imports-only-itself-and-effect", from: "domain/rules/Planted.ts", to: "ports/Chains.ts" }
    ])
  }, 120_000)

  it("the check as CI runs it (the err reporter) exits non-zero on a planted port import and names the rule", async () => {
    const { code, stdout } = await inSandbox(
      { "domain/rules/Planted.ts": PORT_IMPORT },
      (sandbox) => depcruiseIn(sandbox, LAYERS, "err")
    )
    expect(code).toBe(1)
    expect(stdout).toContain("error model-imports-only-itself-and-effect: domain/rules/Planted.ts → ports/Chains.ts")
  }, 120_000)

  // Every arrow docs/architecture.md forbids, planted once: the check fails naming the rule that forbids it.
  it.each([
    ["domain/Planted.ts", "node:crypto", "model-imports-only-itself-and-effect"],
    ["domain/Planted.ts", "domain/usecases/Pay.ts", "model-imports-only-itself-and-effect"],
    ["domain/Planted.ts", "codec/Wire.ts", "model-imports-only-itself-and-effect"],
    ["ports/Planted.ts", "domain/usecases/Pay.ts", "ports-import-only-model-and-effect"],
    ["ports/Planted.ts", "adapters/chains/ChainsLive.ts", "ports-import-only-model-and-effect"],
    ["ports/Planted.ts", "node:crypto", "ports-import-only-model-and-effect"],
    ["domain/usecases/Planted.ts", "adapters/chains/ChainsLive.ts", "use-cases-import-only-model-ports-and-effect"],
    ["domain/usecases/Planted.ts", "codec/Wire.ts", "use-cases-import-only-model-ports-and-effect"],
    ["domain/usecases/Planted.ts", "app/Handlers.ts", "use-cases-import-only-model-ports-and-effect"],
    ["domain/usecases/Planted.ts", "node:crypto", "use-cases-import-only-model-ports-and-effect"],
    ["codec/Planted.ts", "domain/usecases/Pay.ts", "codec-imports-only-model-ports-and-packages"],
    ["codec/Planted.ts", "adapters/chains/ChainsLive.ts", "codec-imports-only-model-ports-and-packages"],
    ["codec/Planted.ts", "app/Handlers.ts", "codec-imports-only-model-ports-and-packages"],
    ["adapters/chains/Planted.ts", "domain/usecases/Pay.ts", "adapters-import-no-use-case-app-or-host"],
    ["adapters/chains/Planted.ts", "app/Handlers.ts", "adapters-import-no-use-case-app-or-host"],
    ["adapters/chains/Planted.ts", "hosts/Ports.ts", "adapters-import-no-use-case-app-or-host"],
    ["app/Planted.ts", "adapters/chains/ChainsLive.ts", "app-imports-no-adapter-or-host"],
    ["app/Planted.ts", "hosts/Ports.ts", "app-imports-no-adapter-or-host"],
    ["hosts/Planted.ts", "entry/http.ts", "hosts-import-no-entry"]
  ])("%s importing %s fails the check (%s)", async (from, to, rule) => {
    const result = await cruisePlanted(importing(from, to))
    expect(result.errors).toBeGreaterThan(0)
    expect(result.violations.map((v) => [v.rule, v.from])).toEqual([[rule, from]])
  }, 120_000)

  it("a cycle between model files fails the check", async () => {
    const result = await cruisePlanted({
      "domain/Planted.ts": "import { b } from \"./rules/PlantedBack.js\"\nexport const a = () => b\n",
      "domain/rules/PlantedBack.ts": "import { a } from \"../Planted.js\"\nexport const b = () => a\n"
    })
    expect(result.errors).toBeGreaterThan(0)
    expect(new Set(result.violations.map((v) => v.rule))).toEqual(new Set(["no-circular-in-core"]))
  }, 120_000)

  it("no rule may import a port, SecretBox included: minting ids is a use case's step", async () => {
    const secretBox = await cruisePlanted({
      "domain/rules/Tokens.ts": "import type { SecretBox } from \"../../ports/SecretBox.js\"\nexport type B = SecretBox\n"
    })
    expect(secretBox.violations).toEqual([
      { rule: "model-imports-only-itself-and-effect", from: "domain/rules/Tokens.ts", to: "ports/SecretBox.ts" }
    ])
    // The same import from a use case is lawful.
    expect(await cruisePlanted({
      "domain/usecases/Minting.ts": "import type { SecretBox } from \"../../ports/SecretBox.js\"\nexport type B = SecretBox\n"
    })).toEqual({ errors: 0, violations: [] })
  }, 120_000)

  it("the real tree passes, cruised as npm run lint:boundaries does", async () => {
    const script = (JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { scripts: Record<string, string> })
      .scripts["lint:boundaries"]!
    const dirs = script.split(/\s+/).slice(script.split(/\s+/).indexOf(".dependency-cruiser.cjs") + 1)
    for (const layer of LAYERS) expect(dirs).toContain(layer)
    expect(await cruise(root, dirs)).toEqual({ errors: 0, violations: [] })
  }, 240_000)
})
