import { builtinModules } from "node:module"
import { gzipSync } from "node:zlib"
import { build, type Metafile } from "esbuild"
import { describe, expect, it } from "vitest"

const root = new URL("../../", import.meta.url).pathname
const isBuiltin = (path: string) => path.startsWith("node:") || builtinModules.includes(path.split("/")[0]!)

/** Bundles one entry from the sources (the same module graph `dist/` holds) and reports what went in. */
const bundle = async (entry: string, platform: "neutral" | "node") => {
  const imported: Array<string> = []
  const result = await build({
    entryPoints: [entry],
    absWorkingDir: root,
    bundle: true,
    write: false,
    minify: true,
    format: "esm",
    platform,
    metafile: true,
    logLevel: "silent",
    // Neutral has no main fields by default; `effect` and friends resolve through their exports' `import`.
    ...(platform === "neutral" ? { mainFields: ["module", "main"] } : {}),
    plugins: [{
      name: "record-imports",
      setup(b) {
        // Every import path as written, so a Node built-in is seen even where the platform would resolve it.
        b.onResolve({ filter: /.*/ }, (args) => {
          imported.push(args.path)
          return isBuiltin(args.path) ? { path: args.path, external: true } : undefined
        })
      }
    }]
  })
  const code = result.outputFiles[0]!.contents
  const inputs = Object.keys((result.metafile as Metafile).inputs)
  // node_modules may be a symlink (a git worktree's), so a package's files can sit outside the root.
  const ours = inputs.filter((p) => !p.includes("node_modules/"))
  const packages = new Set(inputs.filter((p) => p.includes("node_modules/")).map((p) => {
    const parts = p.slice(p.lastIndexOf("node_modules/") + "node_modules/".length).split("/")
    return parts[0]!.startsWith("@") ? `${parts[0]}/${parts[1]}` : parts[0]!
  }))
  const bare = imported.filter((p) => !p.startsWith(".") && !p.startsWith("/"))
  return { code, ours, packages: [...packages].sort(), bare, gzipped: gzipSync(code).byteLength }
}

describe("what each entry point pulls in", () => {
  it("repomarket (the core) bundles for platform neutral with no Node built-in, no adapter and no host", async () => {
    const { bare, code, gzipped, ours, packages } = await bundle("index.ts", "neutral")
    expect(bare.filter(isBuiltin)).toEqual([])
    expect(ours.length).toBeGreaterThan(50)
    expect(ours.filter((p) => !/^(index\.ts|domain\/|ports\/|codec\/Verify(Receipt|Provenance)\.ts)/.test(p))).toEqual([])
    // Packages: effect and what effect itself depends on.
    expect(packages.filter((p) => !["effect", "fast-check", "pure-rand", "@standard-schema/spec"].includes(p))).toEqual([])
    console.log(`repomarket core, platform neutral: ${code.byteLength} bytes minified, ${gzipped} bytes gzipped`)
  }, 120_000)

  it("repomarket/webhooks depends on nothing but node:crypto", async () => {
    const { bare, ours, packages } = await bundle("entry/webhooks.ts", "node")
    expect(bare).toEqual(["node:crypto"])
    expect(packages).toEqual([])
    expect(ours.sort()).toEqual(["adapters/webhook/Signature.ts", "entry/webhooks.ts"])
  }, 60_000)

  it("the Lambda handlers carry no prom-client (metrics are the Node host's), which the Node host's entry does", async () => {
    for (const entry of ["hosts/lambda/handler.ts", "hosts/lambda/streaming.ts"]) {
      const { packages } = await bundle(entry, "node")
      expect(packages).toContain("effect")
      expect(packages.filter((p) => p === "prom-client" || p === "tdigest")).toEqual([])
    }
    expect((await bundle("hosts/node/main.ts", "node")).packages).toContain("prom-client")
  }, 240_000)

  it("the checks above can fail: the HTTP entry pulls in Node built-ins and adapters", async () => {
    const { bare, ours } = await bundle("entry/http.ts", "node")
    expect(bare.filter(isBuiltin)).toContain("node:http")
    expect(ours.some((p) => p.startsWith("adapters/"))).toBe(true)
  }, 180_000)
})
