/*
 * `npm run build:lambda [-- <outdir>]`: the Lambda bundles without SAM, built exactly as `sam build` builds them,
 * because the esbuild settings are read from hosts/lambda/template.yaml (each function's Metadata
 * BuildProperties: entry points, format, target, minify, source map, externals, banner, out extension), never
 * copied. One folder per function under <outdir> (default `.lambda/`), holding what SAM would put in its
 * artifact: the handler's bundle and the files imported beside it on first use. The tests and the cold-start
 * benchmark bundle through the same functions (test/lambda/runtime/BundleLikeTemplate.ts).
 */
import { readFileSync, statSync } from "node:fs"
import { basename, join, relative, resolve } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { build } from "esbuild"

const root = fileURLToPath(new URL("../", import.meta.url))

export interface TemplateBuild {
  /** Every entry point of the function, its own first (`scalar.mjs` rides beside the API handlers). */
  readonly entryPoints: ReadonlyArray<string>
  readonly format: "esm" | "cjs"
  readonly target: string
  readonly minify: boolean
  readonly sourcemap: boolean
  readonly external: ReadonlyArray<string>
  readonly banner: string | undefined
  readonly outExtension: string
}

/** The BuildProperties of the function that bundles `entry` (e.g. `hosts/lambda/streaming.ts`). */
export const templateBuildOf = (entry: string): TemplateBuild => {
  const template = readFileSync(join(root, "hosts/lambda/template.yaml"), "utf8")
  const at = template.indexOf(`EntryPoints:\n          - ${entry}\n`)
  if (at < 0) throw new Error(`no function in template.yaml bundles ${entry}`)
  const block = template.slice(template.lastIndexOf("\n", at) + 1, template.indexOf("\n\n", at) < 0 ? undefined : template.indexOf("\n\n", at))
  const scalar = (name: string) => new RegExp(`^ {8}${name}: (.+)$`, "m").exec(block)?.[1]?.trim()
  const list = (name: string) => {
    const match = new RegExp(`^ {8}${name}:\\n((?: {10}- .+\\n?)+)`, "m").exec(block)
    return match === null ? [] : match[1]!.trim().split("\n").map((l) => l.trim().replace(/^- /, ""))
  }
  const banner = list("Banner").find((b) => b.startsWith("js="))?.slice(3)
  const out = list("OutExtension").find((o) => o.startsWith(".js="))?.slice(4)
  return {
    entryPoints: list("EntryPoints"),
    format: scalar("Format") === "esm" ? "esm" : "cjs",
    target: scalar("Target") ?? "node24",
    minify: scalar("Minify") === "true",
    sourcemap: scalar("Sourcemap") === "true",
    external: list("External"),
    banner,
    outExtension: out ?? ".js"
  }
}

export interface Bundled {
  /** The absolute path of the bundle. */
  readonly file: string
  readonly bytes: number
  /** Bytes of the source map beside it (0 without one). */
  readonly mapBytes: number
  /** The other outputs of the function's other entry points (e.g. `scalar.mjs`), by file name. */
  readonly others: ReadonlyArray<{ readonly file: string; readonly bytes: number }>
}

/** Bundles `entry` into `outdir` as the template says, with `overrides` (e.g. `{ minify: false }`). */
export const bundleLikeTemplate = async (entry: string, outdir: string, overrides: Partial<TemplateBuild> = {}): Promise<Bundled> => {
  const options = { ...templateBuildOf(entry), ...overrides }
  const file = join(outdir, basename(entry).replace(/\.ts$/, options.outExtension))
  await build({
    entryPoints: options.entryPoints.map((e) => join(root, e)),
    bundle: true,
    platform: "node",
    format: options.format,
    target: options.target,
    minify: options.minify,
    sourcemap: options.sourcemap,
    external: [...options.external],
    ...(options.banner === undefined ? {} : { banner: { js: options.banner } }),
    outdir,
    outExtension: { ".js": options.outExtension },
    logLevel: "silent"
  })
  const size = (path: string) => {
    try {
      return statSync(path).size
    } catch {
      return 0
    }
  }
  const others = options.entryPoints.filter((e) => e !== entry).map((e) => join(outdir, basename(e).replace(/\.m?[jt]s$/, options.outExtension)))
  return { file, bytes: size(file), mapBytes: size(`${file}.map`), others: others.map((o) => ({ file: o, bytes: size(o) })) }
}

/** Every function the template bundles, by resource name, with its own entry point (the first one listed). */
export const templateFunctions = (): ReadonlyArray<{ readonly name: string; readonly entry: string }> => {
  const template = readFileSync(join(root, "hosts/lambda/template.yaml"), "utf8")
  return [...template.matchAll(/^ {2}(\w+):\n {4}Type: AWS::Serverless::Function\n[\s\S]*?EntryPoints:\n {10}- (\S+)\n/gm)]
    .map((m) => ({ name: m[1]!, entry: m[2]! }))
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const outdir = resolve(process.argv[2] ?? join(root, ".lambda"))
  for (const { entry, name } of templateFunctions()) {
    const bundled = await bundleLikeTemplate(entry, join(outdir, name))
    const mb = (bytes: number) => `${(bytes / 1_000_000).toFixed(2)} MB`
    console.log(`${name.padEnd(18)} ${relative(process.cwd(), bundled.file)} ${mb(bundled.bytes)}${
      bundled.others.map((o) => `, ${basename(o.file)} ${mb(o.bytes)}`).join("")
    }`)
  }
}
