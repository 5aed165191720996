import { ConfigProvider, Layer, Logger } from "effect"
import { http, HttpResponse } from "msw"
import { CodeHostIdentityGithub } from "../../../adapters/github/CodeHostIdentityGithub.js"
import type { GithubTuning } from "../../../adapters/github/GithubClient.js"
import { HttpLive } from "../../../app/AppLayer.js"
import { PublicOrigin } from "../../../ports/PublicOrigin.js"
import { BASE_URL, OFFLINE_SETTINGS, ServedAsNpmStart, testPorts } from "../../support/app.js"
import { skewableClock } from "../../support/purchase.js"
import { configOf, githubHost } from "./support.js"

export const OAUTH_CONFIG = { GITHUB_CLIENT_ID: "oauth-client-id", GITHUB_CLIENT_SECRET: "oauth-client-secret" }

/**
 * The whole HTTP application as `TestApp` builds it (memory storage, captured mail), except that the code
 * host and the code-host connection are the GitHub adapters, talking to the msw fake GitHub.
 */
export const GithubTestApp = (config: Record<string, string> = OAUTH_CONFIG) =>
  HttpLive.pipe(
    Layer.provide(Layer.mergeAll(
      githubHost({}, config),
      CodeHostIdentityGithub.pipe(
        Layer.provide(Layer.succeed(PublicOrigin, { baseUrl: BASE_URL })),
        Layer.provide(configOf(config))
      )
    )),
    Layer.provideMerge(testPorts({ repos: [] })),
    Layer.provideMerge(ServedAsNpmStart())
  )

/** The live facilitator of `GithubPurchaseApp`, answered by the fake GitHub's msw server (`facilitatorHandlers`). */
export const FACILITATOR = "https://facilitator.test"

/**
 * An x402 facilitator that verifies every payment and settles it, its transaction hash being the payment's
 * nonce (so each sale has its own). Add to the fake GitHub's server with `server.use`.
 */
export const facilitatorHandlers = [
  http.post(`${FACILITATOR}/verify`, () => HttpResponse.json({ isValid: true })),
  http.post(`${FACILITATOR}/settle`, async ({ request }) => {
    const body = (await request.json()) as { paymentPayload?: { payload?: { authorization?: { nonce?: string } } } }
    const nonce = body.paymentPayload?.payload?.authorization?.nonce ?? `0x${"11".repeat(32)}`
    return HttpResponse.json({ success: true, transaction: nonce, network: "eip155:8453" })
  })
]

/**
 * The whole HTTP application, served as `npm start` serves it, with the GitHub adapter over the fake GitHub,
 * live payments through `FACILITATOR`, the app's own settings from `config` (TRUSTED_PROXIES set to loopback,
 * so a test names each client in X-Forwarded-For), and purchased archives kept on disk under `dataDir`. On a live
 * clock a test can move forward with `ClockSkew`, as `PurchaseApp`'s.
 */
export const GithubPurchaseApp = (dataDir: string, config: Record<string, string> = {}, tuning: Partial<GithubTuning> = {}) => {
  const settings = {
    ...OFFLINE_SETTINGS,
    TRUSTED_PROXIES: "127.0.0.1, ::1",
    X402_FACILITATOR_URL: FACILITATOR,
    DATA_DIR: dataDir,
    ARCHIVE_CACHE_BYTES: String(256 * 1024 * 1024),
    ...config
  }
  const { clock, skew } = skewableClock()
  return HttpLive.pipe(
    Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(settings))))),
    Layer.provideMerge(Layer.merge(testPorts({ repos: [], config: settings }), githubHost(tuning, settings))),
    Layer.provideMerge(ServedAsNpmStart()),
    Layer.merge(skew),
    Layer.provide(Layer.setClock(clock)),
    Layer.provide(Logger.remove(Logger.defaultLogger))
  )
}
