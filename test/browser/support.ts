/*
 * Wiring for the browser tests: real headless Chromium (Debian's package, driven by playwright-core), the
 * whole app on a real loopback port, a real SMTP server on loopback receiving the magic-link mail through
 * the MailerSmtp adapter, and a webhook receiver. Code host and payments are the in-memory and simulated ones.
 */
import { HttpServer } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { describe, it } from "vitest"
import { ConfigProvider, Effect, Layer, Logger, LogLevel, ManagedRuntime } from "effect"
import { existsSync, mkdirSync } from "node:fs"
import { createServer, type IncomingMessage } from "node:http"
import type { AddressInfo } from "node:net"
import { join } from "node:path"
import { type Browser, chromium, type Page } from "playwright-core"
import { ChainsLive } from "../../adapters/chains/ChainsLive.js"
import { ReceiptSignerTest } from "../../adapters/crypto/ReceiptSignerEd25519.js"
import { SecretBoxTest } from "../../adapters/crypto/SecretBoxAesGcm.js"
import { MailerSmtp } from "../../adapters/mail/MailerSmtp.js"
import { CodeHostIdentityGithub } from "../../adapters/github/CodeHostIdentityGithub.js"
import { CodeHostIdentityMemory } from "../../adapters/memory/CodeHostIdentityMemory.js"
import { CodeHostMemory, type FakeRepo } from "../../adapters/memory/CodeHostMemory.js"
import { RateLimiterMemory } from "../../adapters/memory/RateLimiterMemory.js"
import { PackagerTarGz } from "../../adapters/packaging/PackagerTarGz.js"
import { WalletProofSiwx } from "../../adapters/x402/WalletProofSiwx.js"
import { WebhookSenderHttp } from "../../adapters/webhook/WebhookSenderHttp.js"
import { PaymentFacilitatorLive } from "../../adapters/x402/PaymentFacilitatorLive.js"
import { Webhooks } from "../../domain/usecases/Webhooks.js"
import { HttpLive } from "../../app/AppLayer.js"
import { StorageMemory } from "../../adapters/memory/StorageMemory.js"
import { DeliveryWorkerLive } from "../../hosts/workers/DeliveryWorker.js"
import type { CodeHost } from "../../ports/CodeHost.js"
import { PublicOrigin } from "../../ports/PublicOrigin.js"
import { DEFAULT_REPOS } from "../support/app.js"
import { startSmtpRecorder } from "../support/smtp.js"

// ---------------------------------------------------------------------------------------------- Chromium

export const CHROMIUM = "/usr/bin/chromium"
const available = existsSync(CHROMIUM)
const required = process.env["REQUIRE_BROWSER"] === "1"

/**
 * `describe` for a browser suite. Without Chromium it prints why and skips, unless REQUIRE_BROWSER=1 (CI),
 * where the missing browser is a failing test instead.
 */
/**
 * A browser suite: one person's journey in one browser (sign in, then list, then reprice, ...), so its steps
 * run in the order written even when the rest of the suite is shuffled (`--sequence.shuffle`).
 */
export const describeBrowser = (name: string, body: () => void) => {
  if (available) return describe(name, { shuffle: false }, body)
  if (required) {
    return describe(name, () => {
      it(`needs Chromium at ${CHROMIUM} (REQUIRE_BROWSER=1)`, () => {
        throw new Error(`REQUIRE_BROWSER=1 but ${CHROMIUM} is missing: install Debian's chromium package`)
      })
    })
  }
  console.warn(`[browser tests] SKIPPED "${name}": ${CHROMIUM} not found. Install Debian's chromium; set REQUIRE_BROWSER=1 to fail instead.`)
  return describe.skip(name, body)
}

export const launchChromium = (): Promise<Browser> =>
  chromium.launch({
    executablePath: CHROMIUM,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-quic", "--no-first-run", "--disable-component-update", "--disable-sync"]
  })

/**
 * Records every request the page could not complete (`failed: <url> (<reason>)`) into `into`. A request the
 * browser itself cancelled because the page navigated away (`net::ERR_ABORTED`, e.g. the favicon of the page
 * just left) is not a failure of the app and is not recorded; a refused connection, a reset or a timeout is.
 */
export const recordFailedRequests = (page: Page, into: Array<string>) => {
  page.on("requestfailed", (r) => {
    const reason = r.failure()?.errorText ?? "unknown"
    if (reason !== "net::ERR_ABORTED") into.push(`failed: ${r.url()} (${reason})`)
  })
}

export const DESKTOP = { width: 1280, height: 900 } as const
export const PHONE = { width: 390, height: 844 } as const

const SHOTS = join(process.cwd(), "test-results", "screenshots")

/** A full-page screenshot kept as a test artifact (test-results/ is not committed). */
export const screenshot = async (page: Page, name: string) => {
  mkdirSync(SHOTS, { recursive: true })
  await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true })
}

// ------------------------------------------------------------------------------------------------- SMTP

export interface CapturedMail {
  readonly to: ReadonlyArray<string>
  readonly subject: string
  readonly text: string
}

const decodeQuotedPrintable = (s: string) =>
  Buffer.from(s.replace(/=\r?\n/g, "").replace(/=([0-9A-F]{2})/gi, (_, h: string) => String.fromCharCode(parseInt(h, 16))), "latin1").toString("utf8")

/** Just enough MIME for our own mail: headers, and a text/plain body in 7bit, quoted-printable or base64. */
export const parseMail = (raw: string, to: ReadonlyArray<string>): CapturedMail => {
  const split = raw.search(/\r?\n\r?\n/)
  const head = raw.slice(0, split).replace(/\r?\n[ \t]+/g, " ")
  const body = raw.slice(split).replace(/^\r?\n\r?\n/, "")
  const header = (name: string) => new RegExp(`^${name}:\\s*(.*)$`, "im").exec(head)?.[1]?.trim() ?? ""
  const encoding = header("Content-Transfer-Encoding").toLowerCase()
  const text = encoding === "quoted-printable" ? decodeQuotedPrintable(body)
    : encoding === "base64" ? Buffer.from(body.replace(/\s+/g, ""), "base64").toString("utf8")
    : body
  return { to, subject: header("Subject"), text }
}

export interface SmtpCapture {
  readonly port: number
  readonly mails: ReadonlyArray<CapturedMail>
  /** The next mail to `to` (counting from `after` mails already seen), waiting for it to arrive. */
  readonly waitFor: (to: string, after: number, timeoutMs?: number) => Promise<CapturedMail>
  readonly close: () => Promise<void>
}

/** A real SMTP server on loopback (no TLS, no auth) that keeps every message it accepts. */
export const startSmtp = async (): Promise<SmtpCapture> => {
  const recorder = await startSmtpRecorder()
  const mails = () => recorder.received.map((m) => parseMail(m.raw, m.to.map((address) => address.toLowerCase())))
  const waitFor = async (to: string, after: number, timeoutMs = 10_000) => {
    const until = Date.now() + timeoutMs
    for (;;) {
      const seen = mails()
      const found = seen.slice(after).find((m) => m.to.includes(to.toLowerCase()))
      if (found) return found
      if (Date.now() > until) throw new Error(`no mail to ${to} within ${timeoutMs} ms (got ${seen.length})`)
      await new Promise((r) => setTimeout(r, 50))
    }
  }
  return {
    port: recorder.port,
    get mails() {
      return mails()
    },
    waitFor,
    close: recorder.close
  }
}

/** The sign-in link in a magic-link mail. */
export const linkIn = (mail: CapturedMail): string => {
  const match = /https?:\/\/\S+\/auth\/verify\?token=[A-Za-z0-9_%-]+/.exec(mail.text)
  if (!match) throw new Error(`no sign-in link in: ${mail.text}`)
  return match[0]
}

// --------------------------------------------------------------------------------------------- Webhooks

export interface WebhookReceiver {
  readonly url: string
  readonly received: ReadonlyArray<{ readonly headers: IncomingMessage["headers"]; readonly body: string }>
  readonly close: () => Promise<void>
}

/** A seller's endpoint on loopback that answers 200 to every delivery and keeps what it got. */
export const startWebhookReceiver = async (): Promise<WebhookReceiver> => {
  const received: Array<{ headers: IncomingMessage["headers"]; body: string }> = []
  const server = createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString("utf8") })
      res.writeHead(200).end("ok")
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()))
  const port = (server.address() as AddressInfo).port
  return {
    url: `http://127.0.0.1:${port}/hooks/repomarket`,
    received,
    close: () => new Promise<void>((resolve) => server.close(() => resolve()))
  }
}

// -------------------------------------------------------------------------------------------------- App

export interface BrowserAppOptions {
  readonly repos?: ReadonlyArray<FakeRepo>
  /** Replaces the in-memory code host (e.g. one whose README HTML holds a script). */
  readonly codeHost?: Layer.Layer<CodeHost>
  /**
   * The code-host connection through the GitHub adapter with this OAuth app (GITHUB_CLIENT_ID/SECRET), talking
   * to github.com as the test mocks it (msw in this process, page.route in Chromium). Unset: no OAuth app.
   */
  readonly githubOAuth?: { readonly clientId: string; readonly clientSecret: string }
  /** More settings, e.g. `X402_FACILITATOR_URL` for live payments through a loopback facilitator. */
  readonly config?: Readonly<Record<string, string>>
}

export interface BrowserApp {
  /** `http://127.0.0.1:<port>`: also the app's BASE_URL, so every link it hands out opens here. */
  readonly origin: string
  readonly smtp: SmtpCapture
  readonly run: <A, E>(effect: Effect.Effect<A, E, never>) => Promise<A>
  readonly close: () => Promise<void>
}

/**
 * The HTTP host as `npm start` wires it, on 127.0.0.1 and a free port, with the webhook delivery worker,
 * mail through MailerSmtp to the loopback SMTP server, loopback webhooks allowed, and a real clock.
 */
export const startBrowserApp = async (options: BrowserAppOptions = {}): Promise<BrowserApp> => {
  const smtp = await startSmtp()
  const config = ConfigProvider.fromMap(new Map([
    ["SMTP_URL", `smtp://127.0.0.1:${smtp.port}`],
    ["MAIL_FROM", "repomarket <no-reply@repomarket.test>"],
    ["WEBHOOK_ALLOW_PRIVATE_NETWORKS", "true"],
    // No public chain RPC from a test.
    ["BASE_RPC_URL", "off"],
    ["SOLANA_RPC_URL", "off"],
    ...Object.entries(options.config ?? {}),
    ...(options.githubOAuth === undefined
      ? []
      : [["GITHUB_CLIENT_ID", options.githubOAuth.clientId], ["GITHUB_CLIENT_SECRET", options.githubOAuth.clientSecret]] as const)
  ]))
  const server = NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" })
  const origin = Layer.effect(PublicOrigin, Effect.map(HttpServer.HttpServer, (s) => ({
    baseUrl: `http://127.0.0.1:${(s.address as HttpServer.TcpAddress).port}`
  })))
  const ports = Layer.mergeAll(
    StorageMemory,
    options.codeHost ?? CodeHostMemory(options.repos ?? DEFAULT_REPOS),
    options.githubOAuth === undefined ? CodeHostIdentityMemory() : CodeHostIdentityGithub.pipe(Layer.provide(origin)),
    ChainsLive,
    SecretBoxTest,
    MailerSmtp,
    RateLimiterMemory,
    WebhookSenderHttp,
    origin,
    ReceiptSignerTest.pipe(Layer.provide(origin)),
    PaymentFacilitatorLive,
    PackagerTarGz,
    WalletProofSiwx
  ).pipe(Layer.provide(Layer.setConfigProvider(config)))
  // The host's own settings (SOLANA_RPC_URL for the blockhash endpoint) from the same map as the adapters'.
  const app = Layer.merge(HttpLive.pipe(Layer.provide(Layer.setConfigProvider(config))), DeliveryWorkerLive.pipe(Layer.provide(Webhooks.Default))).pipe(
    Layer.provideMerge(ports),
    Layer.provideMerge(server),
    Layer.provide(Logger.minimumLogLevel(LogLevel.Warning))
  )
  const runtime = ManagedRuntime.make(app)
  const { baseUrl } = await runtime.runPromise(PublicOrigin)
  return {
    origin: baseUrl,
    smtp,
    run: (effect) => runtime.runPromise(effect),
    close: async () => {
      await runtime.dispose()
      await smtp.close()
    }
  }
}

// ------------------------------------------------------------------------------------------------ Flows

/** Signs in as a person does: the form, the mail, the link, the button. Ends on the dashboard. */
export const signInThroughMail = async (page: Page, app: BrowserApp, email: string, shots?: { signin: string; sent: string; confirm: string }) => {
  const seen = app.smtp.mails.length
  await page.goto(`${app.origin}/signin`)
  if (shots) await screenshot(page, shots.signin)
  await page.fill("#email", email)
  await page.getByRole("button", { name: "Email me a sign-in link" }).click()
  await page.getByRole("heading", { name: "Check your mail" }).waitFor()
  if (shots) await screenshot(page, shots.sent)
  const mail = await app.smtp.waitFor(email, seen)
  const link = linkIn(mail)
  if (!link.startsWith(`${app.origin}/auth/verify?token=`)) throw new Error(`link not on ${app.origin}: ${link}`)
  await page.goto(link)
  if (shots) await screenshot(page, shots.confirm)
  await Promise.all([page.waitForURL(`${app.origin}/dashboard`), page.getByRole("button", { name: "Sign in" }).click()])
  return { mail, link }
}

/** Signs in over the JSON API with the link from the real mail; returns the bearer session. */
export const apiSession = async (app: BrowserApp, email: string): Promise<string> => {
  const seen = app.smtp.mails.length
  const asked = await fetch(`${app.origin}/auth/magic-link`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ email }) })
  if (asked.status !== 202) throw new Error(`magic link: ${asked.status}`)
  const token = new URL(linkIn(await app.smtp.waitFor(email, seen))).searchParams.get("token")!
  const verified = await fetch(`${app.origin}/auth/verify`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ token }) })
  if (verified.status !== 200) throw new Error(`verify: ${verified.status}`)
  return ((await verified.json()) as { access_token: string }).access_token
}

/** A JSON API call from the test process. */
export const api = async (app: BrowserApp, method: string, path: string, bearer?: string, body?: unknown) => {
  const res = await fetch(`${app.origin}${path}`, {
    method,
    headers: { accept: "application/json", ...(bearer ? { authorization: `Bearer ${bearer}` } : {}), ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  const text = await res.text()
  let json: any
  try {
    json = text === "" ? undefined : JSON.parse(text)
  } catch {
    json = undefined
  }
  return { status: res.status, headers: res.headers, text, json }
}
