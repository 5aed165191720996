/*
 * Bundles a Lambda entry point the way `sam build` does for it: the esbuild BuildProperties of the function
 * whose EntryPoints name it in hosts/lambda/template.yaml (format, target, minify, source map, externals,
 * banner, out extension), read from the template so the test and the benchmark build what is deployed.
 */
import { readFileSync, statSync } from "node:fs"
import { basename, join } from "node:path"
import { fileURLToPath } from "node:url"
import { build } from "esbuild"

const root = fileURLToPath(new URL("../../../", import.meta.url))

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
    target: scalar("Target") ?? "node20",
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
