import { Layer } from "effect"
import { ChainsLive } from "../adapters/chains/ChainsLive.js"
import { ReceiptSignerLive } from "../adapters/crypto/ReceiptSignerEd25519.js"
import { CodeHostGithub } from "../adapters/github/CodeHostGithub.js"
import { CodeHostIdentityGithub } from "../adapters/github/CodeHostIdentityGithub.js"
import { PackagerTarGz } from "../adapters/packaging/PackagerTarGz.js"
import { WebhookSenderHttp } from "../adapters/webhook/WebhookSenderHttp.js"
import { PaymentFacilitatorLive } from "../adapters/x402/PaymentFacilitatorLive.js"
import { WalletProofSiwx } from "../adapters/x402/WalletProofSiwx.js"
import type { Mailer } from "../ports/Mailer.js"
import type { RateLimiter } from "../ports/RateLimiter.js"
import type { SecretBox } from "../ports/SecretBox.js"
import type { StoragePorts } from "../app/AppLayer.js"
import { PublicOriginFromConfig } from "./Settings.js"

/**
 * What differs between hosts: where data lives (and what comes with it: rate limits, the change feed, the health
 * check), where the keys come from, and how mail goes out. Everything else is the same adapter on every host.
 */
export interface PortChoices<S, E1, E2, E3> {
  /** The storage ports (`StoragePorts`) and the rate limiter, with whatever else the host's storage brings. */
  readonly storage: Layer.Layer<S, E1>
  /** The secret box (AES-256-GCM) and where its keys come from. */
  readonly secretBox: Layer.Layer<SecretBox, E2>
  /** How sign-in links and other mail leave. */
  readonly mailer: Layer.Layer<Mailer, E3>
}

/**
 * The composition root: every port the application is written against, from a host's choices. GitHub's API
 * (`GITHUB_API_URL`, optional `GITHUB_TOKEN`), the chains, x402 facilitators, webhooks, packaging and
 * Sign-In-With-X are the same adapters on every host; their settings are read from the environment. The hosts'
 * choices live beside each host (hosts/node/NodePorts.ts, hosts/lambda/LambdaPorts.ts), so a host's bundle carries
 * only the adapters it chose (the Lambda bundle no embedded database, for one).
 */
export const composePorts = <S, E1, E2, E3>(choices: PortChoices<S, E1, E2, E3>) =>
  Layer.mergeAll(
    choices.storage,
    choices.secretBox,
    choices.mailer,
    CodeHostGithub,
    CodeHostIdentityGithub.pipe(Layer.provide(PublicOriginFromConfig)),
    ChainsLive,
    WebhookSenderHttp,
    PublicOriginFromConfig,
    // The marketplace's signing key for offers and receipts, derived from SECRET_KEYS (see docs/receipts.md).
    ReceiptSignerLive.pipe(Layer.provide(PublicOriginFromConfig)),
    PaymentFacilitatorLive,
    PackagerTarGz,
    WalletProofSiwx
  )
