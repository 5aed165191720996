import { existsSync } from "node:fs"
import { join } from "node:path"
import { tmpdir } from "node:os"
import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Exit, Layer } from "effect"
import { vi } from "vitest"
import { HostLogFormat } from "../../hosts/node/LogFormat.js"
import { makeLambdaHandler } from "../../hosts/lambda/LambdaApp.js"
import { LambdaPortsLive, SecretBoxFromKeys } from "../../hosts/lambda/LambdaPorts.js"
import { perInstance } from "../../hosts/lambda/PerInstance.js"
import { makeScheduledHandler } from "../../hosts/lambda/ScheduledDelivery.js"
import { SecretBox } from "../../ports/SecretBox.js"
import { HTTP_API_EVENT, SCHEDULED_EVENT } from "./support.js"

const KEY = `k1:${Buffer.alloc(32, 7).toString("base64")}`
const withSettings = (settings: Record<string, string>) =>
  Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(settings))))

/** The production ports under exactly these settings (never the process environment). */
const productionPorts = (settings: Record<string, string>) => LambdaPortsLive.pipe(Layer.provide(withSettings(settings)))

describe("production ports on Lambda: required settings fail start-up clearly", () => {
  it("with nothing set, the handler rejects naming every required setting", async () => {
    const handler = makeLambdaHandler(productionPorts({}))
    await expect(handler.ready()).rejects.toThrow(
      "repomarket cannot start on AWS Lambda: (Missing data at BASE_URL: \"BASE_URL, DATABASE_URL, SECRET_KEYS, SMTP_URL are required on AWS Lambda"
    )
    // An invocation gets the same error (Lambda reports it), and the failure is not cached as a success.
    await expect(handler(HTTP_API_EVENT)).rejects.toThrow(/BASE_URL, DATABASE_URL, SECRET_KEYS, SMTP_URL are required/)
    await handler.dispose()
  })

  it("without DATABASE_URL there is no embedded PGlite fallback: start-up fails naming it, and no data dir appears", async () => {
    const dataDir = join(tmpdir(), `repomarket-lambda-${process.pid}-${Date.now()}`)
    const settings = { BASE_URL: "https://repomarket.example", SECRET_KEYS: KEY, SMTP_URL: "smtp://mail.example:587", DATA_DIR: dataDir }
    for (const handler of [makeLambdaHandler(productionPorts(settings)), makeScheduledHandler(productionPorts(settings))]) {
      await expect(handler.ready()).rejects.toThrow(/DATABASE_URL is required on AWS Lambda/)
      await handler.dispose()
    }
    await expect(makeScheduledHandler(productionPorts({ ...settings, DATABASE_URL: " " }))(SCHEDULED_EVENT)).rejects.toThrow(/DATABASE_URL is required/)
    expect(existsSync(dataDir)).toBe(false)
  })

  it("SECRET_KEYS is read from the setting only; a malformed value is named, never echoed", async () => {
    const open = (keys: string | undefined) =>
      Effect.runPromiseExit(SecretBox.pipe(
        Effect.provide(SecretBoxFromKeys),
        Effect.provide(withSettings(keys === undefined ? {} : { SECRET_KEYS: keys }))
      ))
    expect(Exit.isSuccess(await open(KEY))).toBe(true)
    const leaked = "k1:c2VjcmV0LWJ1dC1zaG9ydA=="
    const malformed = await open(leaked)
    expect(Exit.isFailure(malformed)).toBe(true)
    expect(String(malformed)).toContain("SECRET_KEYS is malformed")
    expect(String(malformed)).not.toContain("c2VjcmV0LWJ1dC1zaG9ydA")
    // No generated development key as on `npm start`: the setting must exist.
    expect(String(await open(undefined))).toContain("SECRET_KEYS")
  })
})

describe("LOG_FORMAT on Lambda, as on npm start", () => {
  const required = { BASE_URL: "https://repomarket.example", DATABASE_URL: "postgres://app@127.0.0.1:1/shop", SECRET_KEYS: KEY, SMTP_URL: "smtp://mail.example:587" }

  it("a value that is neither pretty nor json stops start-up naming LOG_FORMAT, before the database is tried", async () => {
    const handler = makeLambdaHandler(productionPorts({ ...required, LOG_FORMAT: "yaml" }))
    await expect(handler.ready()).rejects.toThrow(/LOG_FORMAT must be pretty or json \(got "yaml"\)/)
    await handler.dispose()
  })

  it("json: one JSON object per line on stdout, with the fields npm start's lines carry", async () => {
    const written: Array<string> = []
    const spy = vi.spyOn(process.stdout, "write").mockImplementation((chunk: string | Uint8Array) => {
      written.push(String(chunk))
      return true
    })
    try {
      await Effect.runPromise(Effect.logWarning("the database did not answer").pipe(Effect.provide(HostLogFormat("json"))))
    } finally {
      spy.mockRestore()
    }
    const lines = written.join("").split("\n").filter((l) => l !== "")
    expect(lines).toHaveLength(1)
    expect(JSON.parse(lines[0]!)).toMatchObject({ level: "WARN", message: "the database did not answer", pid: process.pid, host: expect.any(String), time: expect.any(String) })
  })
})

describe("per-instance build", () => {
  it("a failed build releases what it acquired and is retried on the next call; a success is kept", async () => {
    let attempts = 0
    let released = 0
    const instance = perInstance(Effect.gen(function*() {
      attempts++
      yield* Effect.addFinalizer(() => Effect.sync(() => void released++))
      if (attempts === 1) return yield* Effect.fail("database unreachable")
      return `built #${attempts}`
    }))
    await expect(instance.get()).rejects.toThrow("repomarket cannot start on AWS Lambda: database unreachable")
    expect(released).toBe(1)
    expect(await instance.get()).toBe("built #2")
    expect(await instance.get()).toBe("built #2")
    expect(attempts).toBe(2)
    expect(released).toBe(1)
    await instance.dispose()
    expect(released).toBe(2)
  })
})
