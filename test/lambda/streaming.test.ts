import { readFileSync } from "node:fs"
import { basename } from "node:path"
import { Readable } from "node:stream"
import { pathToFileURL } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { x402Client, x402HTTPClient } from "@x402/core/client"
import { ExactEvmScheme } from "@x402/evm/exact/client"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { BASE_WALLET } from "../support/app.js"
import { postgresProblem, REQUIRE_POSTGRES, shownUrl } from "../support/postgres.js"
import type { FakeLambda, LambdaAnswer } from "./runtime/FakeLambda.js"
import { digestOf, generatedArchive, startWorld, textOf, type World, WORLD_BASE_URL } from "./runtime/StreamingWorld.js"
import { httpEvent } from "./support.js"

/*
 * The streaming handler as deployed: hosts/lambda/streaming.ts bundled with the template's esbuild options,
 * loaded by a stand-in of the Lambda Node.js runtime in its own process (runtime/bootstrap.mjs), answering
 * through the documented streamed-response format (JSON prelude, 8 NUL bytes, body) over a stand-in of the
 * Runtime API. Production ports: real PostgreSQL and SMTP here, loopback fakes of GitHub and the facilitator.
 */

const MiB = 1024 * 1024
const ARCHIVE = generatedArchive(50 * MiB)
const HEAP_TARGET = 64 * MiB

const problem = await postgresProblem()

describe.skipIf(problem !== undefined && !REQUIRE_POSTGRES)("the bundled streaming handler (Function URL, RESPONSE_STREAM)", () => {
  let world: World
  let lambda: FakeLambda
  let expected: string

  beforeAll(async () => {
    if (problem !== undefined) throw new Error(`PostgreSQL not reachable at ${shownUrl()} (${problem}), and REQUIRE_POSTGRES=1`)
    expected = await ARCHIVE.sha256()
    world = await startWorld([
      { owner: "big-org", name: "monorepo", description: "A large repository", files: { "README.md": "# Monorepo\n" }, tarball: ARCHIVE.stream },
      { owner: "big-org", name: "handbook", description: "Docs", files: { "README.md": "# Handbook\n\nRead *me*.\n" } }
    ])
    lambda = (await world.environment("hosts/lambda/streaming.ts")).lambda
    await lambda.initDurationMs.catch((e: Error) => {
      throw new Error(`${e.message}\n${lambda.output()}`)
    })
  }, 120_000)

  afterAll(async () => {
    await world?.close()
  })

  const call = (method: string, path: string, options: Parameters<typeof httpEvent>[2] = {}) =>
    lambda.invoke(httpEvent(method, path, { kind: "function-url", ...options }))

  const json = async (answer: LambdaAnswer) => JSON.parse(await textOf(answer.body))

  const pathOf = (url: string) => {
    expect(url.startsWith(`${WORLD_BASE_URL}/`), url).toBe(true)
    return url.slice(WORLD_BASE_URL.length)
  }

  it("a paid 50 MiB archive streams intact with flat memory, and the receipt link streams the same bytes", async () => {
    const listed = await call("POST", "/repos", {
      json: { host_url: "https://github.com/big-org/monorepo", price_usd: "1.00", wallet_base: BASE_WALLET }
    })
    const created = await json(listed)
    expect(listed.statusCode, JSON.stringify(created)).toBe(201)
    const checkout = pathOf(created.checkout_url as string)

    // The 402 comes through the stream like any other answer: status and headers in the prelude.
    const offered = await call("GET", checkout)
    const body402 = await json(offered)
    expect(offered.mode).toBe("streaming")
    expect(offered.statusCode).toBe(402)
    expect(offered.headers["payment-required"]).toBeDefined()

    // The official x402 client signs a payment for the live requirement (Base, USDC).
    const http = new x402HTTPClient(new x402Client().register("eip155:*", new ExactEvmScheme(privateKeyToAccount(generatePrivateKey()))))
    const required = http.getPaymentRequiredResponse((name) => offered.headers[name.toLowerCase()], body402)
    const payment = http.encodePaymentSignatureHeader(await http.createPaymentPayload(required))
    const headers = Object.fromEntries(Object.entries(payment).map(([k, v]) => [k.toLowerCase(), v]))

    const paid = await call("GET", checkout, { headers })
    expect(paid.mode).toBe("streaming")
    expect(paid.statusCode).toBe(200)
    expect(paid.headers["content-type"]).toBe("application/gzip")
    expect(paid.headers["content-disposition"]).toMatch(/^attachment; filename="big-org-monorepo-0123456\.tar\.gz"$/i)
    expect(JSON.parse(Buffer.from(paid.headers["payment-response"]!, "base64").toString("utf8"))).toMatchObject({ success: true, network: "eip155:8453" })
    const got = await digestOf(paid.body)
    expect(await paid.ended).toEqual({})
    expect(got).toEqual({ sha256: expected, bytes: ARCHIVE.bytes })
    const report = await lambda.report(paid.requestId)
    expect(report.heapGrowthBytes, `heap growth ${(report.heapGrowthBytes / MiB).toFixed(1)} MiB`).toBeLessThan(HEAP_TARGET)
    console.log(`50 MiB paid archive: heap growth ${(report.heapGrowthBytes / MiB).toFixed(1)} MiB live (peak ${(report.peakGrowthBytes / MiB).toFixed(1)} MiB with uncollected garbage) in the function's process, ${report.durationMs.toFixed(0)} ms`)
    expect(world.facilitator.paths()).toEqual(expect.arrayContaining(["/verify", "/settle"]))

    const receipt = /^<([^>]+)>; rel="receipt"$/.exec(paid.headers["link"]!)![1]!
    const again = await call("GET", pathOf(receipt))
    expect(again.statusCode).toBe(200)
    expect(again.headers["content-type"]).toBe("application/gzip")
    expect(await digestOf(again.body)).toEqual({ sha256: expected, bytes: ARCHIVE.bytes })
    expect(await again.ended).toEqual({})
    expect((await lambda.report(again.requestId)).heapGrowthBytes).toBeLessThan(HEAP_TARGET)
  }, 180_000)

  it("a code host that breaks off mid-archive: a 503 with the receipt link before any byte where the function keeps archives; else the stream is cut with an error trailer, never a clean end", async () => {
    world.github.put({
      owner: "big-org",
      name: "flaky",
      files: { "README.md": "# Flaky\n" },
      // The codeload connection dies after 3 MiB: more than a function holds in memory (2 MiB).
      tarball: () => {
        let sent = 0
        return new Readable({
          read() {
            if (sent++ < 48) this.push(Buffer.alloc(64 * 1024, sent))
            else this.destroy(new Error("connection reset"))
          }
        })
      }
    })
    const listed = await call("POST", "/repos", { json: { host_url: "https://github.com/big-org/flaky", price_usd: "1.00", wallet_base: BASE_WALLET } })
    const created = await json(listed)
    expect(listed.statusCode, JSON.stringify(created)).toBe(201)
    const checkout = pathOf(created.checkout_url as string)
    const buy = async (through: FakeLambda) => {
      const offered = await through.invoke(httpEvent("GET", checkout, { kind: "function-url" }))
      const body402 = await json(offered)
      const http = new x402HTTPClient(new x402Client().register("eip155:*", new ExactEvmScheme(privateKeyToAccount(generatePrivateKey()))))
      const payment = http.encodePaymentSignatureHeader(await http.createPaymentPayload(http.getPaymentRequiredResponse((n) => offered.headers[n.toLowerCase()], body402)))
      return through.invoke(httpEvent("GET", checkout, { kind: "function-url", headers: Object.fromEntries(Object.entries(payment).map(([k, v]) => [k.toLowerCase(), v])) }))
    }

    // This function keeps archives under DATA_DIR: a first delivery is cut whole before its first byte (so that
    // it carries its digest), and a cut that breaks off is a 503 naming the receipt link: paid, goods owed.
    const owed = await buy(lambda)
    expect(owed.statusCode).toBe(503)
    expect(owed.headers["link"]).toMatch(/rel="receipt"/)
    expect(await json(owed)).toMatchObject({ code: "goods_unavailable" })

    // A function that keeps no archive on disk streams one larger than it holds straight from codeload: when
    // codeload breaks off, the stream is cut with an error trailer.
    const keepsNone = (await world.environment("hosts/lambda/streaming.ts", { env: { ARCHIVE_CACHE_BYTES: "0" } })).lambda
    const paid = await buy(keepsNone)
    expect(paid.statusCode).toBe(200)
    expect(paid.headers["link"]).toMatch(/rel="receipt"/)
    expect(paid.headers["repr-digest"]).toBeUndefined()
    await expect(digestOf(paid.body)).rejects.toThrow(/failed mid-stream/)
    expect((await paid.ended).errorType).toBeDefined()
  }, 120_000)

  it("everything but an archive answers as the buffered handler does (status, headers, bytes)", async () => {
    const buffered = (await world.environment("hosts/lambda/handler.ts")).lambda
    const requests: Array<[string, string, Parameters<typeof httpEvent>[2]]> = [
      ["GET", "/healthz", {}],
      ["GET", "/r/big-org/monorepo", {}],
      ["GET", "/nope", {}],
      ["GET", "/docs", {}],
      ["POST", "/repos", { raw: "{\"host_url\": " }],
      ["POST", "/repos", { json: { host_url: "https://github.com/big-org/monorepo", price_usd: "1.00", wallet_bse: BASE_WALLET } }]
    ]
    for (const [method, path, options] of requests) {
      const event = httpEvent(method, path, { kind: "function-url", ...options })
      const streamed = await lambda.invoke(event)
      const whole = await buffered.invoke(event)
      expect(streamed.mode).toBe("streaming")
      expect(whole.mode).toBe("buffered")
      const [a, b] = [await textOf(streamed.body), await textOf(whole.body)]
      // An archive's digest is learnt by the instance that streamed it whole (docs/receipts.md): the repo page of
      // an instance that sold the 50 MiB archive above names it, one that did not says null. Everything else is equal.
      const comparable = (r: { statusCode: number; headers: Record<string, string> }, body: string) =>
        path.startsWith("/r/")
          ? { status: r.statusCode, headers: { ...r.headers, "content-length": "<varies>" }, body: { ...JSON.parse(body), archive: "<learnt per instance>" } }
          : { status: r.statusCode, headers: r.headers, body }
      expect(comparable(streamed, a), `${method} ${path}`).toEqual(comparable(whole, b))
    }
  }, 120_000)

  it("/docs/scalar.js comes from scalar.mjs beside the bundle (not from the bundle); undici, nodemailer and the README renderer load from beside it too", async () => {
    const { lambda: buffered, bundle } = await world.environment("hosts/lambda/handler.ts")
    const beside = (name: string) => bundle.others.find((o) => basename(o.file) === name)!.file
    expect(bundle.others.map((o) => basename(o.file))).toEqual(["scalar.mjs", "undici.mjs", "nodemailer.mjs", "readme.mjs"])
    const undici = (await import(pathToFileURL(beside("undici.mjs")).href)) as Record<string, unknown>
    expect([typeof undici["Agent"], typeof undici["fetch"]]).toEqual(["function", "function"])
    const nodemailer = (await import(pathToFileURL(beside("nodemailer.mjs")).href)) as { default: Record<string, unknown> }
    expect(typeof nodemailer.default["createTransport"]).toBe("function")
    const readme = (await import(pathToFileURL(beside("readme.mjs")).href)) as Record<string, unknown>
    expect([typeof readme["Marked"], typeof readme["sanitizeHtml"]]).toEqual(["function", "function"])
    const bundleText = readFileSync(bundle.file, "utf8")
    expect(["require_undici", "require_nodemailer", "require_sanitize_html", "node_modules/marked/"].filter((p) => bundleText.includes(p))).toEqual([])
    const { javascript } = (await import(pathToFileURL(beside("scalar.mjs")).href)) as { javascript: string }
    expect(javascript.length).toBeGreaterThan(1_000_000)
    expect(readFileSync(bundle.file, "utf8").includes(javascript.slice(0, 2000))).toBe(false)
    const listed = await call("POST", "/repos", { json: { host_url: "https://github.com/big-org/handbook", price_usd: "1.00", wallet_base: BASE_WALLET } })
    expect(listed.statusCode, JSON.stringify(await json(listed))).toBe(201)
    for (const handler of [lambda, buffered]) {
      // The repo page's README is rendered by the packages in readme.mjs, loaded on this first use.
      const page = await handler.invoke(httpEvent("GET", "/r/big-org/handbook", { kind: "function-url", headers: { accept: "text/html" } }))
      expect(page.statusCode).toBe(200)
      expect(await textOf(page.body)).toMatch(/<h1[^>]*>Handbook<\/h1>\s*<p>Read <em>me<\/em>.<\/p>/)
      const answer = await handler.invoke(httpEvent("GET", "/docs/scalar.js", { kind: "function-url" }))
      expect(answer.statusCode).toBe(200)
      expect(answer.headers["content-type"]).toBe("text/javascript; charset=utf-8")
      expect(await textOf(answer.body)).toBe(javascript)
    }
  }, 120_000)
})
