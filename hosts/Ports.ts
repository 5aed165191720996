import { Layer } from "effect"
import { ChainsLive } from "../adapters/chains/ChainsLive.js"
import { SecretBoxAesGcm } from "../adapters/crypto/SecretBoxAesGcm.js"
import { MailerLive } from "../adapters/mail/MailerLive.js"
import { CodeHostGithub } from "../adapters/github/CodeHostGithub.js"
import { CodeHostIdentityGithub } from "../adapters/github/CodeHostIdentityGithub.js"
import { RateLimiterMemory } from "../adapters/memory/RateLimiterMemory.js"
import { WebhookSenderHttp } from "../adapters/webhook/WebhookSenderHttp.js"
import { PackagerTarGz } from "../adapters/packaging/PackagerTarGz.js"
import { WalletProofSiwx } from "../adapters/x402/WalletProofSiwx.js"
import { PaymentFacilitatorLive } from "../adapters/x402/PaymentFacilitatorLive.js"
import { ChangeFeedNone, ChangeFeedPg } from "../adapters/sql/ChangeFeed.js"
import { DatabaseLive, sharedDatabaseConfigured } from "../adapters/sql/DatabaseLive.js"
import { RateLimiterSql } from "../adapters/sql/RateLimiterSql.js"
import { StorageSql } from "../adapters/sql/SqlLive.js"
import { Effect } from "effect"
import { HealthCheckSql } from "../adapters/sql/HealthCheckSql.js"
import { PublicOriginFromConfig } from "./Settings.js"

/**
 * On a PostgreSQL server other hosts may share, limits are counted there and writes announced there
 * (LISTEN/NOTIFY); on the embedded PGlite (one process) limits stay in memory and there is no one to tell.
 */
const SharedOrAlone = Layer.unwrapEffect(
  Effect.map(sharedDatabaseConfigured, (shared) =>
    shared ? Layer.merge(RateLimiterSql, ChangeFeedPg()) : Layer.merge(RateLimiterMemory, ChangeFeedNone))
)

/**
 * The adapters `npm start` runs on: nothing to install or configure. Storage is PostgreSQL when
 * `DATABASE_URL` is set, else an embedded PostgreSQL (PGlite) persisted under `DATA_DIR`.
 */
export const DefaultPorts = Layer.mergeAll(
  Layer.mergeAll(StorageSql, SharedOrAlone, HealthCheckSql).pipe(Layer.provide(DatabaseLive)),
  // GitHub's public API (GITHUB_API_URL, optional GITHUB_TOKEN); no fake host is needed to start.
  CodeHostGithub,
  CodeHostIdentityGithub.pipe(Layer.provide(PublicOriginFromConfig)),
  ChainsLive,
  SecretBoxAesGcm,
  MailerLive,
  WebhookSenderHttp,
  PublicOriginFromConfig,
  PaymentFacilitatorLive,
  PackagerTarGz,
  WalletProofSiwx
)
