import { ConfigProvider, Context, Effect, Layer, Option, Ref } from "effect"
import { ChainsLive } from "../adapters/chains/ChainsLive.js"
import { ReceiptSignerTest } from "../adapters/crypto/ReceiptSignerEd25519.js"
import { SecretBoxTest } from "../adapters/crypto/SecretBoxAesGcm.js"
import { CodeHostIdentityMemory } from "../adapters/memory/CodeHostIdentityMemory.js"
import { CodeHostMemory, type FakeRepo } from "../adapters/memory/CodeHostMemory.js"
import { SentMail } from "../adapters/memory/MailerMemory.js"
import { RateLimiterMemory } from "../adapters/memory/RateLimiterMemory.js"
import { StorageMemory } from "../adapters/memory/StorageMemory.js"
import { PackagerTarGz } from "../adapters/packaging/PackagerTarGz.js"
import { WebhookSenderHttp } from "../adapters/webhook/WebhookSenderHttp.js"
import { PaymentFacilitatorLive } from "../adapters/x402/PaymentFacilitatorLive.js"
import { WalletProofSiwx } from "../adapters/x402/WalletProofSiwx.js"
import { type Mail, Mailer } from "../ports/Mailer.js"
import { PublicOrigin } from "../ports/PublicOrigin.js"
import type { Storage } from "./Storage.js"

/** What {@link memoryPorts} runs on. Everything is optional. */
export interface MemoryPortsOptions {
  /**
   * The public origin of every absolute URL (checkout links, sign-in links). Default `http://localhost:3000`, or,
   * under `startNodeServer`, the address it listens on.
   */
  readonly baseUrl?: string
  /** The repositories the seeded memory code host serves (stands in for GitHub). Default none. */
  readonly repos?: ReadonlyArray<FakeRepo>
  /** Storage other than memory, e.g. your own adapter or `StorageSql` from `repomarket/adapters/sql`. */
  readonly storage?: Layer.Layer<Storage, unknown>
  /** Called with every mail the app sends (sign-in links), besides keeping it for `SentMail`. */
  readonly onMail?: (mail: Mail) => void
  /**
   * Settings the adapters read (`X402_FACILITATOR_URL`, `WEBHOOK_ALLOW_PRIVATE_NETWORKS`, …), instead of the
   * environment. The chain readers are off unless set here (`BASE_RPC_URL`, `SOLANA_RPC_URL`), so nothing
   * reaches a public RPC endpoint.
   */
  readonly settings?: Readonly<Record<string, string>>
}

/** A Mailer that keeps every mail (read them through `SentMail`) and hands each to `onMail`. */
export const MailerCapturing = (onMail: (mail: Mail) => void = () => {}): Layer.Layer<Mailer | SentMail> =>
  Layer.effectContext(
    Effect.gen(function*() {
      const sent = yield* Ref.make<ReadonlyArray<Mail>>([])
      return Context.make(Mailer, {
        send: (mail) => Effect.zipRight(Ref.update(sent, (mails) => [...mails, mail]), Effect.sync(() => onMail(mail)))
      }).pipe(
        Context.add(SentMail, {
          all: Ref.get(sent),
          last: Effect.map(Ref.get(sent), (mails) => Option.fromNullable(mails.at(-1))),
          clear: Ref.set(sent, [])
        })
      )
    })
  )

/**
 * Every port the application needs, in memory: storage, a seeded code host, a capturing mailer, a test key
 * for secrets at rest, an in-memory rate limiter and the payment facilitators (the test twin's simulated one;
 * live payments only with `X402_FACILITATOR_URL` in `settings`). For tests, demos and embedding without a
 * database or GitHub. Give it to `makeWebHandler`, `makeNodeHandler` or `startNodeServer` of `repomarket/http`.
 */
export const memoryPorts = (options: MemoryPortsOptions = {}) => {
  const config = Layer.setConfigProvider(
    ConfigProvider.fromMap(new Map(Object.entries({ BASE_RPC_URL: "off", SOLANA_RPC_URL: "off", ...options.settings })))
  )
  const origin = Layer.succeed(
    PublicOrigin,
    options.baseUrl === undefined ? { baseUrl: "http://localhost:3000", isDefault: true } : { baseUrl: options.baseUrl.replace(/\/+$/, "") }
  )
  return Layer.mergeAll(
    options.storage ?? StorageMemory,
    CodeHostMemory(options.repos ?? []),
    CodeHostIdentityMemory(),
    ChainsLive,
    SecretBoxTest,
    MailerCapturing(options.onMail),
    RateLimiterMemory,
    WebhookSenderHttp.pipe(Layer.provide(config)),
    origin,
    // A fresh signing key per app: its receipts verify with the keys it publishes.
    ReceiptSignerTest.pipe(Layer.provide(origin)),
    PaymentFacilitatorLive.pipe(Layer.provide(config)),
    PackagerTarGz,
    WalletProofSiwx
  )
}
