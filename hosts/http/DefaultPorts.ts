import { Layer } from "effect"
import { ChainsLive } from "../../adapters/chains/ChainsLive.js"
import { SecretBoxAesGcm } from "../../adapters/crypto/SecretBoxAesGcm.js"
import { MailerLive } from "../../adapters/mail/MailerLive.js"
import { CodeHostGithub } from "../../adapters/github/CodeHostGithub.js"
import { CodeHostIdentityGithub } from "../../adapters/github/CodeHostIdentityGithub.js"
import { RateLimiterMemory } from "../../adapters/memory/RateLimiterMemory.js"
import { WebhookSenderHttp } from "../../adapters/webhook/WebhookSenderHttp.js"
import { PackagerTarGz } from "../../adapters/packaging/PackagerTarGz.js"
import { WalletProofSiwx } from "../../adapters/x402/WalletProofSiwx.js"
import { PaymentFacilitatorLive } from "../../adapters/x402/PaymentFacilitatorLive.js"
import { DatabaseLive } from "../../adapters/sql/DatabaseLive.js"
import { StorageSql } from "../../adapters/sql/SqlLive.js"
import { PublicOriginFromConfig } from "./Settings.js"

/**
 * The adapters `npm start` runs on: nothing to install or configure. Storage is PostgreSQL when
 * `DATABASE_URL` is set, else an embedded PostgreSQL (PGlite) persisted under `DATA_DIR`.
 */
export const DefaultPorts = Layer.mergeAll(
  StorageSql.pipe(Layer.provide(DatabaseLive)),
  // GitHub's public API (GITHUB_API_URL, optional GITHUB_TOKEN); no fake host is needed to start.
  CodeHostGithub,
  CodeHostIdentityGithub.pipe(Layer.provide(PublicOriginFromConfig)),
  ChainsLive,
  SecretBoxAesGcm,
  MailerLive,
  RateLimiterMemory,
  WebhookSenderHttp,
  PublicOriginFromConfig,
  PaymentFacilitatorLive,
  PackagerTarGz,
  WalletProofSiwx
)
