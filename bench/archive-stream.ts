/**
 * Memory use of a streamed archive: a fake code host on loopback serves a 1 GiB tarball (generated on the fly,
 * never held in memory) behind GitHub's redirect; the GitHub adapter (`CodeHostGithub.archive`, pointed at the
 * fake with GITHUB_API_URL) streams it through a small HTTP server to a loopback client that discards the bytes.
 * Heap is sampled during the transfer; the run passes when heap growth stays under 64 MiB. Not a test: the
 * numbers depend on the machine.
 *
 *   npx tsx bench/archive-stream.ts [--mib 1024]
 *
 * Until the paid checkout exists, the server side streams `archive()` directly; all three parties (fake host,
 * adapter, client) run in this one process, so the heap figures include all of them.
 */
import { createServer, get, type IncomingMessage, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { Readable } from "node:stream"
import type { ReadableStream as WebReadableStream } from "node:stream/web"
import { parseArgs } from "node:util"
import { ConfigProvider, Effect, Layer, Option, Stream } from "effect"
import { CodeHostGithub } from "../adapters/github/CodeHostGithub.js"
import { RepoRef } from "../domain/Ids.js"
import { CodeHost } from "../ports/CodeHost.js"

const { values } = parseArgs({ options: { mib: { type: "string", default: "1024" } } })
const total = Number.parseInt(values.mib, 10) * 1024 * 1024
if (!(total > 0)) {
  console.error("--mib must be a positive integer")
  process.exit(2)
}

const TARGET_MIB = 64
const MiB = 1024 * 1024
const SHA = "0123456789abcdef0123456789abcdef01234567"

/** One 64 KiB block, reused for every write: a tar-like 512-byte header, then data. */
const block = (() => {
  const b = Buffer.alloc(64 * 1024)
  for (let i = 0; i < b.length; i++) b[i] = (i * 31 + 7) % 251
  b.write("bench/big-file.bin\0", 0, "ascii")
  b.write("ustar\u000000", 257, "ascii")
  return b
})()

const listen = (server: Server) =>
  new Promise<number>((resolve) => server.listen(0, "127.0.0.1", () => resolve((server.address() as AddressInfo).port)))

/** The fake code host: the API's tarball endpoint redirects to a "codeload" path that streams `total` bytes. */
const fakeHost = createServer((req, res) => {
  if (req.url?.startsWith("/repos/bench/big/tarball/")) {
    res.writeHead(302, { location: `/codeload/bench/big/legacy.tar.gz/${SHA}` }).end()
    return
  }
  if (req.url?.startsWith("/codeload/")) {
    res.writeHead(200, { "content-type": "application/x-gzip", "content-length": String(total) })
    let sent = 0
    const pump = () => {
      while (sent < total) {
        const n = Math.min(block.length, total - sent)
        sent += n
        if (!res.write(n === block.length ? block : block.subarray(0, n))) {
          res.once("drain", pump)
          return
        }
      }
      res.end()
    }
    pump()
    return
  }
  res.writeHead(404).end()
})

const main = async () => {
  const hostPort = await listen(fakeHost)
  const layer = CodeHostGithub.pipe(
    // Archives are not kept on disk here: this measures the stream's memory, and 1 GiB would land in ./.data.
    Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map([["GITHUB_API_URL", `http://127.0.0.1:${hostPort}`], ["ARCHIVE_CACHE_BYTES", "0"]]))))
  )
  const host = await Effect.runPromise(Effect.provide(CodeHost, layer))

  /** The "server": streams the adapter's archive to whoever asks. */
  const server = createServer((_req, res) => {
    const archive = host.archive(new RepoRef({ owner: "bench", name: "big" }), SHA, Option.none())
    res.writeHead(200, { "content-type": "application/gzip" })
    Readable.fromWeb(Stream.toReadableStream(archive) as WebReadableStream<Uint8Array>).pipe(res)
  })
  const serverPort = await listen(server)

  const gc = (globalThis as { gc?: () => void }).gc
  gc?.()
  await new Promise((r) => setTimeout(r, 100))
  const baseline = process.memoryUsage().heapUsed
  let peak = baseline
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().heapUsed)
  }, 20)

  const started = performance.now()
  const received = await new Promise<number>((resolve, reject) => {
    get(`http://127.0.0.1:${serverPort}/download`, (res: IncomingMessage) => {
      let bytes = 0
      res.on("data", (chunk: Buffer) => {
        bytes += chunk.length
      })
      res.on("end", () => resolve(bytes))
      res.on("error", reject)
    }).on("error", reject)
  })
  const seconds = (performance.now() - started) / 1000
  clearInterval(sampler)
  peak = Math.max(peak, process.memoryUsage().heapUsed)
  server.close()
  fakeHost.close()

  const growth = (peak - baseline) / MiB
  const pass = received === total && growth < TARGET_MIB
  console.log(`archive streamed through CodeHostGithub (fake code host on loopback, redirect followed)`)
  console.log(`  bytes transferred  ${received} of ${total}${gc ? "" : "  (run with node --expose-gc for a settled baseline)"}`)
  console.log(`  baseline heap      ${(baseline / MiB).toFixed(1)} MiB`)
  console.log(`  peak heap          ${(peak / MiB).toFixed(1)} MiB`)
  console.log(`  growth             ${growth.toFixed(1)} MiB (target < ${TARGET_MIB} MiB)`)
  console.log(`  throughput         ${(received / MiB / seconds).toFixed(0)} MiB/s over ${seconds.toFixed(1)} s`)
  console.log(pass ? "PASS" : "FAIL")
  process.exitCode = pass ? 0 : 1
}

main().catch((e) => {
  console.error(e)
  process.exitCode = 1
})
