/*
 * Everything a bundled Lambda function needs around it on this machine, real where it runs here: a fresh
 * PostgreSQL database, a loopback SMTP server, and loopback fakes of what is outside (GitHub, the x402
 * facilitator) — and one execution environment (FakeLambda) per bundle, with the production settings.
 */
import { createHash, randomBytes } from "node:crypto"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Readable } from "node:stream"
import { Effect, Exit, Scope } from "effect"
import { startFakeFacilitator, type FakeFacilitator } from "../../faults/fakeFacilitator.js"
import { type FakeGithubRepo, type FakeGithubServer, startFakeGithubServer } from "../../support/fakeGithubServer.js"
import { postgresTestDatabaseUrl } from "../../support/postgres.js"
import { startSmtpRecorder } from "../../support/smtp.js"
import { type Bundled, bundleLikeTemplate, type TemplateBuild } from "./BundleLikeTemplate.js"
import { type FakeLambda, startFakeLambda } from "./FakeLambda.js"

export const WORLD_BASE_URL = "https://repomarket.example"
const BLOCK = 64 * 1024

/**
 * A generated archive of exactly `bytes` bytes, the same every time for one `seed`: 64 KiB blocks of random
 * bytes, each stamped with its index (so a lost, repeated or reordered block changes the checksum).
 */
export const generatedArchive = (bytes: number, seed: Buffer = randomBytes(BLOCK)) => {
  const stream = () => {
    let sent = 0
    let index = 0
    return new Readable({
      read() {
        if (sent >= bytes) return void this.push(null)
        const block = Buffer.from(seed.subarray(0, Math.min(BLOCK, bytes - sent)))
        block.writeUInt32BE(index++ >>> 0, 0)
        sent += block.length
        this.push(block)
      }
    })
  }
  const sha256 = async () => {
    const hash = createHash("sha256")
    for await (const chunk of stream()) hash.update(chunk as Buffer)
    return hash.digest("hex")
  }
  return { stream, sha256, bytes }
}

/** Reads a body through SHA-256 without keeping it; resolves with the digest and the byte count. */
export const digestOf = async (body: Readable) => {
  const hash = createHash("sha256")
  let bytes = 0
  for await (const chunk of body) {
    hash.update(chunk as Buffer)
    bytes += (chunk as Buffer).length
  }
  return { sha256: hash.digest("hex"), bytes }
}

export const textOf = async (body: Readable) => {
  const chunks: Array<Buffer> = []
  for await (const chunk of body) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks).toString("utf8")
}

export interface World {
  readonly github: FakeGithubServer
  readonly facilitator: FakeFacilitator
  readonly databaseUrl: string
  /** The function's environment: the production settings pointed at this machine. */
  readonly env: Readonly<Record<string, string>>
  /** Bundles `entry` as the template does and starts an execution environment over it. */
  readonly environment: (entry: string, options?: { readonly overrides?: Partial<TemplateBuild>; readonly env?: Record<string, string> }) => Promise<{ lambda: FakeLambda; bundle: Bundled }>
  readonly close: () => Promise<void>
}

export const startWorld = async (repos: ReadonlyArray<FakeGithubRepo>): Promise<World> => {
  const scope = Effect.runSync(Scope.make())
  const closers: Array<() => Promise<unknown>> = [() => Effect.runPromise(Scope.close(scope, Exit.void))]
  const close = async () => {
    for (const closer of closers.splice(0).reverse()) await closer().catch(() => undefined)
  }
  try {
    const databaseUrl = await Effect.runPromise(Scope.extend(postgresTestDatabaseUrl, scope))
    const smtp = await startSmtpRecorder()
    closers.push(smtp.close)
    const github = await startFakeGithubServer(repos)
    closers.push(github.close)
    const facilitator = await startFakeFacilitator()
    closers.push(facilitator.close)
    const dir = mkdtempSync(join(tmpdir(), "repomarket-lambda-stream-"))
    closers.push(async () => rmSync(dir, { recursive: true, force: true }))
    const env = {
      BASE_URL: WORLD_BASE_URL,
      DATABASE_URL: databaseUrl,
      SECRET_KEYS: `k1:${randomBytes(32).toString("base64")}`,
      SMTP_URL: `smtp://127.0.0.1:${smtp.port}`,
      GITHUB_API_URL: github.url,
      X402_FACILITATOR_URL: facilitator.url,
      // No public chain RPC from a test.
      BASE_RPC_URL: "off",
      SOLANA_RPC_URL: "off",
      DATA_DIR: join(dir, "data")
    }
    let n = 0
    const environment: World["environment"] = async (entry, options = {}) => {
      const outdir = join(dir, `bundle-${n++}`)
      const bundle = await bundleLikeTemplate(entry, outdir, options.overrides)
      const lambda = await startFakeLambda({ bundle: bundle.file, env: { ...env, ...options.env } })
      closers.push(lambda.close)
      return { lambda, bundle }
    }
    return { github, facilitator, databaseUrl, env, environment, close }
  } catch (error) {
    await close()
    throw error
  }
}
