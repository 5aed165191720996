import { afterAll, beforeAll, expect, it } from "vitest"
import { readFile } from "node:fs/promises"
import { gunzipSync } from "node:zlib"
import type { Browser, BrowserContext, Page } from "playwright-core"
import { Effect, Layer, Stream } from "effect"
import { CodeHostMemory } from "../../adapters/memory/CodeHostMemory.js"
import { CodeHost, CodeHostError } from "../../ports/CodeHost.js"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { getBase58Encoder, getCompiledTransactionMessageDecoder, getTransactionDecoder } from "@solana/kit"
import { type FakeFacilitator, SOLANA_MAINNET, startFakeFacilitator, transactionOf } from "../faults/fakeFacilitator.js"
import { BASE_WALLET, DEFAULT_REPOS, SOLANA_WALLET, SOLANA_WALLET_2 } from "../support/app.js"
import { api, apiSession, type BrowserApp, describeBrowser, DESKTOP, launchChromium, PHONE, screenshot, signInThroughMail, startBrowserApp } from "./support.js"
import { type EthereumBehaviour, injectEthereumWallet, injectSolanaWallet } from "./testWallets.js"

const SELLER = "checkout-seller@example.com"
/** The live facilitator's Solana fee payer (any well-formed address: nothing is submitted). */
const FEE_PAYER = SOLANA_WALLET_2
/** What the loopback Solana RPC endpoint answers to getLatestBlockhash. */
const BLOCKHASH = { blockhash: "4sGjMW1sUnHzSxGspuhpqLDx6wiyjNtZAMdL4VZHirAn", lastValidBlockHeight: 290_000_150 }

/** The server's Solana RPC endpoint (SOLANA_RPC_URL) on loopback: answers getLatestBlockhash, counts the calls. */
const startSolanaRpc = async () => {
  const methods: Array<string> = []
  const state = { down: false }
  const server: Server = createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8"))
      methods.push(body.method)
      if (state.down) return void res.writeHead(503).end("upstream unavailable")
      res.writeHead(200, { "content-type": "application/json" })
      res.end(JSON.stringify(body.method === "getLatestBlockhash"
        ? { jsonrpc: "2.0", id: body.id, result: { context: { slot: 400 }, value: BLOCKHASH } }
        : { jsonrpc: "2.0", id: body.id, error: { code: -32601, message: "method not found" } }))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/rpc`,
    methods,
    state,
    close: () => new Promise<void>((resolve) => server.close(() => resolve()))
  }
}

/**
 * The in-memory code host, except that the next archive asked for while `breakNext` is set sends its first
 * chunk, pauses (so the status line, headers and those bytes reach the browser) and then fails, as a code host
 * dropping the connection mid-archive does; the server then cuts the buyer's connection (CheckoutHandlers'
 * abortOnFailure). One archive only: the receipt link asked next gets it whole.
 */
const archives = { breakNext: false }
const breakingCodeHost = Layer.effect(CodeHost, Effect.map(CodeHost, (host) => ({
  ...host,
  archive: (...args: Parameters<typeof host.archive>) => {
    const whole = host.archive(...args)
    if (!archives.breakNext) return whole
    archives.breakNext = false
    return whole.pipe(
      Stream.take(1),
      Stream.concat(Stream.drain(Stream.fromEffect(Effect.sleep("300 millis")))),
      Stream.concat(Stream.fail(new CodeHostError({ reason: "unavailable", message: "The code host dropped the archive." })))
    )
  }
}))).pipe(Layer.provide(CodeHostMemory(DEFAULT_REPOS)))

/** Names of the files in a tar archive (ustar headers: the name is the first 100 bytes of each 512-byte header). */
const tarNames = (tar: Buffer): Array<string> => {
  const names: Array<string> = []
  for (let at = 0; at + 512 <= tar.length;) {
    const header = tar.subarray(at, at + 512)
    if (header.every((b) => b === 0)) break
    const name = header.subarray(0, 100).toString("utf8").replace(/\0.*$/s, "")
    const size = Number.parseInt(header.subarray(124, 136).toString("utf8").replace(/\0.*$/s, "").trim() || "0", 8)
    names.push(name)
    at += 512 + Math.ceil(size / 512) * 512
  }
  return names
}

describeBrowser("a person buys in Chromium with the wallet they have", () => {
  let app: BrowserApp
  let facilitator: FakeFacilitator
  let solanaRpc: Awaited<ReturnType<typeof startSolanaRpc>>
  let browser: Browser
  const contexts: Array<BrowserContext> = []
  const urls = { live: "", test: "" }

  beforeAll(async () => {
    facilitator = await startFakeFacilitator({ solanaFeePayer: FEE_PAYER })
    solanaRpc = await startSolanaRpc()
    // A short limit on facilitator calls, so a settle that never answers is a pending sale within the test.
    app = await startBrowserApp({
      codeHost: breakingCodeHost,
      config: { X402_FACILITATOR_URL: facilitator.url, X402_FACILITATOR_TIMEOUT_MS: "3000", SOLANA_RPC_URL: solanaRpc.url }
    })
    browser = await launchChromium()
    const session = await apiSession(app, SELLER)
    const listed = await api(app, "POST", "/repos", session, { host_url: "https://github.com/octo-org/widget", price_usd: "0.75", wallet_base: BASE_WALLET, wallet_solana: SOLANA_WALLET })
    expect(listed.status, listed.text).toBe(201)
    urls.live = listed.json.checkout_url
    urls.test = listed.json.test_checkout_url
  })

  afterAll(async () => {
    await browser?.close()
    await app?.close()
    await facilitator?.close()
    await solanaRpc?.close()
  })

  /**
   * A fresh browser with the given wallets, on a checkout page, recording every CSP violation the page
   * reports (console and `securitypolicyviolation` events) and every script error.
   */
  const open = async (url: string, wallets: { ethereum?: Partial<EthereumBehaviour>; solana?: boolean } = {}, viewport: { width: number; height: number } = DESKTOP) => {
    const context = await browser.newContext({ viewport, acceptDownloads: true })
    contexts.push(context)
    const page = await context.newPage()
    const problems: Array<string> = []
    page.on("console", (m) => {
      // Chromium logs every 402 as a failed resource: that is the checkout answering, not a fault.
      if (/Content Security Policy|CSP violation|Refused to|Trusted Type/i.test(m.text()) || (m.type() === "error" && !/status of 402/.test(m.text()) && !m.location().url.endsWith("/favicon.ico"))) {
        problems.push(`console: ${m.text()}`)
      }
    })
    page.on("pageerror", (e) => problems.push(`page error: ${e.message}`))
    await page.addInitScript({ content: `document.addEventListener("securitypolicyviolation", (e) => console.error("CSP violation: " + e.violatedDirective + " " + e.blockedURI))` })
    const ethereum = wallets.ethereum === undefined ? undefined : await injectEthereumWallet(page, wallets.ethereum)
    const solana = wallets.solana === true ? await injectSolanaWallet(page) : undefined
    await page.goto(url)
    return { page, problems, ethereum, solana }
  }

  /** Keyboard only: Tab to the button whose text matches, then Enter. */
  const pressButton = async (page: Page, name: RegExp) => {
    await page.locator("#wallet-list button").first().waitFor()
    for (let i = 0; i < 60; i++) {
      await page.keyboard.press("Tab")
      const focused = await page.evaluate<string>(`document.activeElement?.textContent ?? ""`)
      if (name.test(focused)) return page.keyboard.press("Enter")
    }
    throw new Error(`no button ${name} reachable with Tab`)
  }

  const outcome = async (page: Page, state: string) => {
    const status = page.locator(`#status[data-state="${state}"]`)
    await status.waitFor({ timeout: 20_000 }).catch(async (e) => {
      const now = await page.locator("#status").evaluate((el) => `${el.getAttribute("data-state")}: ${el.textContent}`).catch(() => "no status")
      throw new Error(`waited for "${state}", the page shows ${now}`, { cause: e })
    })
    return (await status.textContent()) ?? ""
  }

  it("on the test twin with an Ethereum wallet, by keyboard: the archive downloads, the receipt is shown, the sale is on the seller's dashboard as test", async () => {
    const { page, problems, ethereum } = await open(urls.test, { ethereum: { chainId: 1 } })
    await expect(page.locator("[data-testmode]").textContent()).resolves.toContain("simulated money")
    await screenshot(page, "checkout-01-test-twin")
    const download = page.waitForEvent("download")
    await pressButton(page, /Pay \$0\.75 USDC with Test Wallet \(Base\)/)
    const file = await download
    const text = await outcome(page, "paid")
    await screenshot(page, "checkout-02-paid-test")
    expect(file.suggestedFilename()).toMatch(/^Octo-Org-Widget-[0-9a-f]{7}\.tar\.gz$/)
    const bytes = await readFile((await file.path())!)
    expect([...bytes.subarray(0, 2)]).toEqual([0x1f, 0x8b])
    const names = tarNames(gunzipSync(bytes))
    expect(names.some((n) => /MANIFEST|manifest/.test(n))).toBe(true)
    expect(text).toContain(`Paid and downloaded ${file.suggestedFilename()}`)
    const receipt = page.locator('#status a[href*="/downloads/"]')
    await expect(receipt.getAttribute("href")).resolves.toMatch(new RegExp(`^${app.origin}/downloads/`))
    expect(text).toMatch(/without paying until about/)
    // The wallet was asked to move to Base Sepolia and signed once; the result has keyboard focus.
    expect(ethereum!.calls).toContain("wallet_switchEthereumChain")
    expect(ethereum!.calls.filter((c) => c === "eth_signTypedData_v4")).toHaveLength(1)
    await expect(page.evaluate<string>("document.activeElement?.id")).resolves.toBe("status")
    expect(problems).toEqual([])

    const seller = await (await browser.newContext({ viewport: DESKTOP })).newPage()
    await signInThroughMail(seller, app, SELLER)
    await seller.goto(`${app.origin}/dashboard#sales`)
    const row = seller.locator("#test-sales tbody tr")
    await expect(row.count()).resolves.toBe(1)
    await expect(row.textContent()).resolves.toContain(ethereum!.account.address.slice(0, 6))
    await expect(seller.locator("#live-sales").textContent()).resolves.toBe("No live sales yet.")
    await screenshot(seller, "checkout-03-dashboard-test-sale")
    await seller.context().close()
  })

  it("live on Base through a loopback facilitator: the repository's own archive downloads", async () => {
    const { page, problems, ethereum } = await open(urls.live, { ethereum: { chainId: 84532 } })
    await expect(page.locator("[data-testmode]").count()).resolves.toBe(0)
    const download = page.waitForEvent("download")
    await page.getByRole("button", { name: /Pay \$0\.75 USDC with Test Wallet \(Base\)/ }).click()
    const file = await download
    await outcome(page, "paid")
    await screenshot(page, "checkout-04-paid-live")
    // The in-memory code host's stand-in archive: the pinned commit's files as it serves them, byte for byte.
    const bytes = (await readFile((await file.path())!)).toString("utf8")
    expect(bytes).toMatch(/^[0-9a-f]{7} README\.md\n/)
    expect(file.suggestedFilename()).toBe(`Octo-Org-Widget-${bytes.slice(0, 7)}.tar.gz`)
    expect(facilitator.paths()).toEqual(expect.arrayContaining(["/verify", "/settle"]))
    const settled = facilitator.calls.find((c) => c.path === "/settle")!
    expect(settled.body.paymentPayload.payload.authorization.from.toLowerCase()).toBe(ethereum!.account.address.toLowerCase())
    expect(settled.body.paymentRequirements.network).toBe("eip155:8453")
    // The buyer's payment-identifier never goes to the facilitator.
    expect(JSON.stringify(settled.body)).not.toContain("payment-identifier")
    expect(problems).toEqual([])
  })

  it("paid but the download broke off: the page says so, and its receipt link downloads the archive", async () => {
    const { page, problems, ethereum } = await open(urls.live, { ethereum: { chainId: 8453 } })
    const settled = facilitator.calls.filter((c) => c.path === "/settle").length
    archives.breakNext = true
    try {
      const paid = page.waitForResponse((r) => r.request().headers()["payment-signature"] !== undefined)
      await page.getByRole("button", { name: /Pay \$0\.75 USDC with Test Wallet \(Base\)/ }).click()
      // The paid answer started as a delivery (200, receipt link exposed), and its body was then cut.
      const answer = await paid
      expect(answer.status()).toBe(200)
      expect(answer.headers()["link"]).toMatch(/rel="receipt"/)
      const text = await outcome(page, "download-failed")
      await screenshot(page, "checkout-13-download-broke")
      expect(archives.breakNext).toBe(false)
      expect(text).toMatch(/^Paid, but the download broke off\. Your receipt link downloads it again without paying until about .+: download again\.$/)
      // The sale really settled on the server, once, for this buyer.
      const settles = facilitator.calls.filter((c) => c.path === "/settle")
      expect(settles).toHaveLength(settled + 1)
      expect(settles.at(-1)!.body.paymentPayload.payload.authorization.from.toLowerCase()).toBe(ethereum!.account.address.toLowerCase())
      // The receipt link, by keyboard: the whole archive of the pinned commit, with no second payment.
      const receipt = page.locator('#status a[href*="/downloads/"]')
      await expect(receipt.getAttribute("href")).resolves.toMatch(new RegExp(`^${app.origin}/downloads/`))
      const download = page.waitForEvent("download")
      await receipt.focus()
      await page.keyboard.press("Enter")
      const file = await download
      const bytes = (await readFile((await file.path())!)).toString("utf8")
      expect(bytes).toMatch(/^[0-9a-f]{7} README\.md\n# Widget\n/)
      expect(bytes).toContain(`${bytes.slice(0, 7)} src/index.ts\nexport {}\n`)
      expect(file.suggestedFilename()).toBe(`Octo-Org-Widget-${bytes.slice(0, 7)}.tar.gz`)
      expect(facilitator.calls.filter((c) => c.path === "/settle")).toHaveLength(settled + 1)
      // Chromium reports the cut connection itself (short of its Content-Length, or of its last chunk when the length
      // was not known); nothing else may be reported.
      expect(problems.filter((p) => !/Failed to load resource: net::ERR_(CONTENT_LENGTH_MISMATCH|INCOMPLETE_CHUNKED_ENCODING)/.test(p))).toEqual([])
    } finally {
      archives.breakNext = false
    }
  }, 45_000)

  it("the person declines in the wallet: says so, nothing is paid", async () => {
    const { page, problems } = await open(urls.test, { ethereum: { sign: "decline" } })
    await page.getByRole("button", { name: /Test Wallet/ }).click()
    await expect(outcome(page, "declined")).resolves.toBe("You declined in Test Wallet. Nothing was paid.")
    await screenshot(page, "checkout-05-declined")
    expect(problems).toEqual([])
  })

  it("the wallet is on another network and cannot switch: says which, and what to do", async () => {
    const { page, problems } = await open(urls.test, { ethereum: { chainId: 1, switchChain: "unsupported" } })
    await page.getByRole("button", { name: /Test Wallet/ }).click()
    await expect(outcome(page, "wrong-network")).resolves.toBe("Test Wallet is on Ethereum, not Base Sepolia. Switch the network in Test Wallet and pay again.")
    await screenshot(page, "checkout-06-wrong-network")
    expect(problems).toEqual([])
  })

  it("the checkout refuses the payment: the server's own detail is shown, nothing is charged", async () => {
    const before = facilitator.calls.length
    const { page, problems } = await open(urls.live, { ethereum: { chainId: 8453, sign: "tamper" } })
    await page.getByRole("button", { name: /Test Wallet/ }).click()
    const text = await outcome(page, "refused")
    expect(text, text).toMatch(/^The payment was refused: .+ Nothing was charged\.$/)
    expect(text, text).toContain("not validly signed by its payer")
    await screenshot(page, "checkout-07-refused")
    // Refused locally: the facilitator never saw it.
    expect(facilitator.calls.length).toBe(before)
    expect(problems).toEqual([])
  })

  it("on the test twin with a Wallet Standard Solana wallet: signs the exact-scheme transfer, the archive downloads", async () => {
    const { page, problems, solana } = await open(urls.test, { solana: true }, PHONE)
    const download = page.waitForEvent("download")
    await page.getByRole("button", { name: /Pay \$0\.75 USDC with Test Solana Wallet \(Solana\)/ }).click()
    const file = await download
    await outcome(page, "paid")
    await screenshot(page, "checkout-08-paid-solana-phone")
    expect(solana!.signed).toHaveLength(1)
    const bytes = await readFile((await file.path())!)
    expect([...bytes.subarray(0, 2)]).toEqual([0x1f, 0x8b])
    expect(problems).toEqual([])
  })

  it("live on Solana through a loopback facilitator: the server's blockhash endpoint gives the transaction its lifetime, the facilitator settles the signed transfer, the archive downloads", async () => {
    const before = facilitator.calls.length
    const { page, problems, solana } = await open(urls.live, { solana: true })
    const asked = page.waitForRequest((r) => new URL(r.url()).pathname === "/checkout/solana/blockhash")
    const download = page.waitForEvent("download")
    await page.getByRole("button", { name: /Pay \$0\.75 USDC with Test Solana Wallet \(Solana\)/ }).click()
    // Same origin (connect-src 'self'): the page asked the server, the server asked its RPC endpoint.
    expect(new URL((await asked).url()).origin).toBe(app.origin)
    const file = await download
    const text = await outcome(page, "paid")
    await screenshot(page, "checkout-14-paid-live-solana")
    expect(text).toContain(`Paid and downloaded ${file.suggestedFilename()}`)
    expect(solanaRpc.methods).toContain("getLatestBlockhash")
    const bytes = (await readFile((await file.path())!)).toString("utf8")
    expect(bytes).toMatch(/^[0-9a-f]{7} README\.md\n/)
    expect(file.suggestedFilename()).toBe(`Octo-Org-Widget-${bytes.slice(0, 7)}.tar.gz`)

    // What the facilitator received: verify, then settle, of the transaction the wallet signed, for the live
    // Solana requirement.
    const calls = facilitator.calls.slice(before).filter((c) => c.path === "/verify" || c.path === "/settle")
    expect(calls.map((c) => c.path)).toEqual(["/verify", "/settle"])
    const settled = calls[1]!.body
    expect(settled.paymentRequirements).toMatchObject({ scheme: "exact", network: SOLANA_MAINNET, amount: "750000", extra: { feePayer: FEE_PAYER } })
    expect(settled.paymentRequirements.extra.recentBlockhash).toBeUndefined()
    expect(solana!.signed).toHaveLength(1)
    const wire = Buffer.from(settled.paymentPayload.payload.transaction, "base64")
    const transaction = getTransactionDecoder().decode(wire)
    // The fee payer's slot is left for the facilitator; the buyer's is filled by the wallet.
    expect(Object.keys(transaction.signatures)).toEqual([FEE_PAYER, solana!.signer.address])
    expect(transaction.signatures[FEE_PAYER as keyof typeof transaction.signatures]).toBeNull()
    expect(transaction.signatures[solana!.signer.address as keyof typeof transaction.signatures]).not.toBeNull()
    // The message the wallet was asked to sign, with the blockhash the server's RPC endpoint answered.
    expect(Buffer.from(transaction.messageBytes)).toEqual(Buffer.from(getTransactionDecoder().decode(solana!.signed[0]!).messageBytes))
    const message = getCompiledTransactionMessageDecoder().decode(transaction.messageBytes)
    expect(message.lifetimeToken).toBe(BLOCKHASH.blockhash)
    expect(Buffer.from(getBase58Encoder().encode(message.lifetimeToken))).toHaveLength(32)
    // The receipt names the transaction the facilitator settled (the payer's signature).
    expect(transactionOf(settled)).toMatch(/^[1-9A-HJ-NP-Za-km-z]{64,88}$/)
    // The buyer's payment-identifier never goes to the facilitator.
    expect(JSON.stringify(settled)).not.toContain("payment-identifier")
    expect(problems).toEqual([])
  })

  it("live on Solana with the server's RPC endpoint down: says the payment could not be prepared, nothing is signed or charged", async () => {
    const before = facilitator.calls.length
    solanaRpc.state.down = true
    try {
      const { page, problems, solana } = await open(urls.live, { solana: true })
      await page.getByRole("button", { name: /Test Solana Wallet/ }).click()
      const text = await outcome(page, "error")
      await screenshot(page, "checkout-15-solana-blockhash-unavailable")
      expect(text).toBe("The payment could not be prepared: The server's Solana RPC endpoint did not answer with a recent blockhash. Try again shortly. Nothing was charged.")
      expect(solana!.signed).toHaveLength(0)
      expect(facilitator.calls.length).toBe(before)
      // Chromium logs the 503 answer itself; nothing else may be reported.
      expect(problems.filter((p) => !/status of 503/.test(p))).toEqual([])
    } finally {
      solanaRpc.state.down = false
    }
  })

  it("no wallet in the browser: says what to install, and the x402 way is on the page", async () => {
    const { page, problems } = await open(urls.test)
    const text = await outcome(page, "no-wallet")
    expect(text).toContain("MetaMask")
    expect(text).toContain("Phantom")
    await screenshot(page, "checkout-09-no-wallet")
    expect(problems).toEqual([])
    // The watch for violations works: script put into the page the way an injection would is refused and reported.
    await page.evaluate(`try { document.createElement("script").textContent = "1" } catch {}`)
    await page.evaluate(`new Promise((r) => setTimeout(r, 200))`)
    expect(problems.join("\n")).toMatch(/Trusted|CSP violation/)
  })

  it("the answer is lost after the payment settled: trying again sends the same payment, which downloads without a second charge", async () => {
    const { page, problems } = await open(urls.test, { ethereum: {} })
    let cut = 0
    // The first paid request reaches the server and settles; its answer never reaches the page.
    await page.route(/\/checkout\//, async (route) => {
      if (route.request().headers()["payment-signature"] !== undefined && cut++ === 0) {
        await route.fetch()
        return route.abort("connectionreset")
      }
      return route.continue()
    })
    await page.getByRole("button", { name: /Test Wallet/ }).click()
    const lost = await outcome(page, "no-answer")
    expect(lost).toContain("you will not be charged twice")
    await screenshot(page, "checkout-11-no-answer")
    const download = page.waitForEvent("download")
    await page.locator("#status").getByRole("button", { name: "Try again" }).click()
    const file = await download
    await outcome(page, "paid")
    expect(file.suggestedFilename()).toMatch(/^Octo-Org-Widget-[0-9a-f]{7}\.tar\.gz$/)
    expect(cut).toBe(2)
    expect(problems.filter((p) => !/ERR_CONNECTION_RESET|Failed to fetch/.test(p))).toEqual([])
  })

  it("without JavaScript the page still explains the checkout and how to pay it with an x402 client", async () => {
    const context = await browser.newContext({ viewport: DESKTOP, javaScriptEnabled: false })
    contexts.push(context)
    const page = await context.newPage()
    const res = await page.goto(urls.test)
    expect(res?.status()).toBe(402)
    await expect(page.locator("h1").textContent()).resolves.toBe("Buy Octo-Org/Widget")
    await expect(page.locator("#pay").textContent()).resolves.toContain("Paying with a browser wallet needs JavaScript")
    await expect(page.locator("#wallets").isVisible()).resolves.toBe(false)
    await expect(page.locator("#x402").textContent()).resolves.toContain("wrapFetchWithPayment")
    await screenshot(page, "checkout-10-no-javascript")
  })

  it("the settle gets no answer: the page says the outcome is not known yet and offers to try again, never 'nothing was charged'", async () => {
    facilitator.settle = "hang"
    try {
      const { page, problems } = await open(urls.live, { ethereum: { chainId: 8453 } })
      await page.getByRole("button", { name: /Test Wallet/ }).click()
      const text = await outcome(page, "pending")
      expect(text).toMatch(/outcome is not known yet, and it will not be charged twice/)
      expect(text).not.toMatch(/Nothing was charged/)
      await expect(page.locator("#status").getByRole("button", { name: "Try again" }).count()).resolves.toBe(1)
      await screenshot(page, "checkout-12-settlement-pending")
      // Chromium logs the 503 answer itself; nothing else may be reported.
      expect(problems.filter((p) => !/status of 503/.test(p))).toEqual([])
    } finally {
      facilitator.settle = "ok"
    }
  })

  it("the repo page's Buy action leads to the checkout page", async () => {
    const { page, problems } = await open(`${app.origin}/r/Octo-Org/Widget`)
    await Promise.all([page.waitForURL(urls.live), page.getByRole("link", { name: "Buy for $0.75" }).click()])
    await expect(page.locator("h1").textContent()).resolves.toBe("Buy Octo-Org/Widget")
    expect(problems).toEqual([])
  })
})
