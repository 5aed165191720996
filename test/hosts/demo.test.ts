/*
 * `npm run demo`, through real child processes as a newcomer runs it: with nothing set (no GitHub token, no SMTP,
 * no wallet, no database) it lists the sample repositories of its stand-in code host, buys one on the test twin
 * with examples/buy.mjs and leaves the archive on disk, printing each step; while it serves, the home page, the
 * catalog and the repo pages show the samples and sign-in links are written to its output. A wrong PORT is
 * one line naming it, as with `npm start`.
 */
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { gunzipSync } from "node:zlib"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { DEMO_REPOS } from "../../scripts/demo/repos.js"
import { closedPort } from "../faults/fakeFacilitator.js"
import { type DemoProcess, startDemo } from "../support/demoProcess.js"

const dirs: Array<string> = []
afterAll(async () => {
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })))
})

describe("npm run demo -- --once", () => {
  it("lists the samples, buys one on the test twin with examples/buy.mjs, and leaves the archive on disk", async () => {
    const dir = await mkdtemp(join(tmpdir(), "repomarket-demo-"))
    dirs.push(dir)
    const port = await closedPort()
    const run = startDemo(["--once"], { PORT: String(port), DEMO_DIR: dir })
    const timer = setTimeout(() => void run.kill(), 150_000)
    const code = await run.exited
    clearTimeout(timer)
    const out = run.stdout()
    expect(code, `${out}\n${run.stderr()}`).toBe(0)

    // The banner: where it is, that it is a demo, where sign-in links go, that money is simulated.
    expect(out).toContain(`repomarket demo is answering on http://localhost:${port} (nothing here reaches the network)`)
    expect(out).toContain("mail       none: sign-in links are written to this output")
    expect(out).toContain("payments   test twin only: simulated USDC, nothing real is paid")
    for (const { priceUsd, repo } of DEMO_REPOS) {
      expect(out).toMatch(new RegExp(`${repo.owner}/${repo.name} +\\$ *${priceUsd.replace(".", "\\.")} +http://localhost:${port}/r/${repo.owner}/${repo.name}`))
    }
    // Each step of the purchase, in order.
    const steps = ["1. quote", "2. pay", "3. settled", "4. saved"].map((step) => out.indexOf(step))
    expect(steps.every((at) => at > 0), out).toBe(true)
    expect([...steps].sort((a, b) => a - b)).toEqual(steps)
    expect(out).toMatch(/1\. quote +402: 12\.00 USDC on eip155:84532 to 0x/i)
    expect(out).toMatch(/3\. settled +transaction sim_/)

    // The archive: the test twin's goods (a manifest and a note, never the repo's bytes), named by the server.
    const files = await readdir(dir)
    expect(files).toHaveLength(1)
    expect(files[0]).toMatch(/^acme-tools-json-stream-3f2a9c1\.tar\.gz$/)
    expect(out).toContain(join(dir, files[0]!))
    const bytes = await readFile(join(dir, files[0]!))
    expect([...bytes.subarray(0, 2)]).toEqual([0x1f, 0x8b])
    const tar = gunzipSync(bytes)
    expect(tar.subarray(257, 262).toString("latin1")).toBe("ustar")
    expect(tar.toString("utf8")).not.toContain("export const parse")
  }, 160_000)

  it("PORT=abc: one line naming PORT, nothing started", async () => {
    const run = startDemo(["--once"], { PORT: "abc" })
    const code = await run.exited
    expect(code).not.toBe(0)
    expect(run.stdout()).toBe("")
    expect(run.stderr().trim().split("\n")).toEqual(["PORT=abc: not a port number (1–65535)"])
  }, 60_000)
})

describe("npm run demo, serving", () => {
  let run: DemoProcess
  let origin: string

  beforeAll(async () => {
    const port = await closedPort()
    run = startDemo(["--no-buy"], { PORT: String(port) })
    await run.waitFor((out) => out.includes("Ctrl-C stops the demo."), 120_000)
    origin = `http://127.0.0.1:${port}`
  }, 130_000)
  afterAll(() => run?.kill())

  it("the home page and the catalog list the sample repositories; each repo page previews its README", async () => {
    const home = await (await fetch(`${origin}/`, { headers: { accept: "text/html" } })).text()
    const catalog = (await (await fetch(`${origin}/listings?limit=100`)).json()) as { listings: ReadonlyArray<{ repo: string }> }
    for (const { repo } of DEMO_REPOS) {
      expect(home).toContain(`/r/${repo.owner}/${repo.name}`)
      expect(catalog.listings.map((l) => l.repo)).toContain(`${repo.owner}/${repo.name}`)
      const page = await fetch(`${origin}/r/${repo.owner}/${repo.name}`, { headers: { accept: "text/html" } })
      expect(page.status).toBe(200)
      expect(await page.text()).toContain(repo.description!.replace(/'/g, "&#39;"))
    }
    const found = (await (await fetch(`${origin}/listings?q=parser`)).json()) as { listings: ReadonlyArray<{ repo: string }> }
    expect(found.listings.map((l) => l.repo)).toEqual(["acme-tools/json-stream"])
  })

  it("a sign-in link is written to the demo's output, and the API and page say so", async () => {
    const res = await fetch(`${origin}/auth/magic-link`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: "seller@example.com" })
    })
    expect(res.status).toBe(202)
    expect(await res.json()).toEqual({ sent: true, delivery: "log" })
    await run.waitFor((out) => /sign-in link for seller@example\.com: http:\/\/localhost:\d+\/auth\/verify\?token=/.test(out), 10_000)
    const form = await (await fetch(`${origin}/signin`, { headers: { accept: "text/html" } })).text()
    expect(form).toContain("writes the sign-in link to its own log")
  })

})

// A demo of its own: the tests above share one, and a shuffled run may take them in any order.
describe("npm run demo, stopped", () => {
  it("stops on SIGTERM (as on Ctrl-C), quietly, and lets go of its port", async () => {
    const port = await closedPort()
    const run = startDemo(["--no-buy"], { PORT: String(port) })
    try {
      await run.waitFor((out) => out.includes("Ctrl-C stops the demo."), 120_000)
      const origin = `http://127.0.0.1:${port}`
      expect((await fetch(`${origin}/healthz`)).status).toBe(200)
      await run.kill("SIGTERM")
      expect(run.child.exitCode ?? run.child.signalCode, "still running").not.toBeNull()
      expect(run.stderr()).toBe("")
      await expect(fetch(`${origin}/healthz`)).rejects.toThrow()
    } finally {
      await run.kill()
    }
  }, 130_000)
})
