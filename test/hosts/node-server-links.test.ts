/*
 * `startNodeServer` (repomarket/http) builds its links — checkout URLs, sign-in links — from the address it
 * listens on when its ports name no public origin of their own (`memoryPorts()` without `baseUrl`): asked for
 * port 0, the links name the port it bound, not `http://localhost:3000`. A `baseUrl` that was given still wins.
 */
import { afterEach, describe, expect, it } from "vitest"
import { startNodeServer, type RunningNodeServer } from "../../hosts/embed/NodeServer.js"
import { memoryPorts } from "../../testing/MemoryPorts.js"
import type { Mail } from "../../ports/Mailer.js"

const WALLET = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"
const REPO = { owner: "octo-org", name: "widget", files: { "README.md": "# widget\n" } }

const running: Array<RunningNodeServer> = []
afterEach(async () => {
  await Promise.all(running.splice(0).map((server) => server.close()))
})

/** Starts a server on port 0 over memory ports; the mails it sends are kept. */
const start = async (baseUrl?: string) => {
  const mails: Array<Mail> = []
  const server = await startNodeServer(
    memoryPorts({ repos: [REPO], onMail: (mail) => mails.push(mail), ...(baseUrl === undefined ? {} : { baseUrl }) }),
    { port: 0, host: "127.0.0.1", workers: false }
  )
  running.push(server)
  return { server, mails }
}

const post = async (server: RunningNodeServer, path: string, body: unknown, token?: string) => {
  const res = await fetch(`${server.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...(token === undefined ? {} : { authorization: `Bearer ${token}` }) },
    body: JSON.stringify(body)
  })
  return { status: res.status, json: (await res.json()) as any }
}

/** Signs in through the mailed link and lists the widget; returns the sign-in link and the listing. */
const signInAndList = async (server: RunningNodeServer, mails: Array<Mail>) => {
  expect((await post(server, "/auth/magic-link", { email: "seller@example.com" })).status).toBe(202)
  const link = /https?:\/\/\S+\/auth\/verify\?token=\S+/.exec(mails.at(-1)?.text ?? "")?.[0]
  expect(link, mails.at(-1)?.text).toBeDefined()
  const token = decodeURIComponent(new URL(link!).searchParams.get("token")!)
  const session = await post(server, "/auth/verify", { token })
  expect(session.status).toBe(200)
  const listing = await post(server, "/repos", { host_url: "https://github.com/octo-org/widget", price_usd: "5.00", wallet_base: WALLET }, session.json.access_token)
  expect(listing.status, JSON.stringify(listing.json)).toBe(201)
  return { link: link!, listing: listing.json as { checkout_url: string; test_checkout_url: string } }
}

describe("startNodeServer's links", () => {
  it("on port 0 without a baseUrl, checkout and sign-in links name the port it bound; a baseUrl given is kept", async () => {
    const { mails, server } = await start()
    expect(server.port).not.toBe(3000)
    expect(server.url).toBe(`http://127.0.0.1:${server.port}`)
    const { link, listing } = await signInAndList(server, mails)
    for (const url of [link, listing.checkout_url, listing.test_checkout_url]) {
      expect(url.startsWith(`${server.url}/`), url).toBe(true)
    }
    // The link works where it points: the checkout answers there with its 402.
    const checkout = await fetch(listing.test_checkout_url)
    expect(checkout.status).toBe(402)

    // A public origin the ports were given (a proxy, a domain) is not replaced by the bound address.
    const given = await start("https://market.example")
    const named = await signInAndList(given.server, given.mails)
    expect(named.link.startsWith("https://market.example/auth/verify?token=")).toBe(true)
    expect(named.listing.checkout_url.startsWith("https://market.example/")).toBe(true)
  }, 60_000)
})
