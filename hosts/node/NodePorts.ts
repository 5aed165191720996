import { Effect, Layer } from "effect"
import { SecretBoxAesGcm } from "../../adapters/crypto/SecretBoxAesGcm.js"
import { MailerLive } from "../../adapters/mail/MailerLive.js"
import { RateLimiterMemory } from "../../adapters/memory/RateLimiterMemory.js"
import { ChangeFeedNone, ChangeFeedPg } from "../../adapters/sql/ChangeFeed.js"
import { DatabaseLive, sharedDatabaseConfigured } from "../../adapters/sql/DatabaseLive.js"
import { HealthCheckSql } from "../../adapters/sql/HealthCheckSql.js"
import { RateLimiterSql } from "../../adapters/sql/RateLimiterSql.js"
import { StorageSql } from "../../adapters/sql/SqlLive.js"
import { composePorts } from "../Ports.js"

/**
 * On a PostgreSQL server other hosts may share, limits are counted there and writes announced there
 * (LISTEN/NOTIFY); on the embedded PGlite (one process) limits stay in memory and there is no one to tell.
 */
const SharedOrAlone = Layer.unwrapEffect(
  Effect.map(sharedDatabaseConfigured, (shared) =>
    shared ? Layer.merge(RateLimiterSql, ChangeFeedPg()) : Layer.merge(RateLimiterMemory, ChangeFeedNone))
)

/**
 * The Node host's choices, what `npm start` runs on with nothing to install or configure: PostgreSQL when
 * `DATABASE_URL` is set, else an embedded PostgreSQL (PGlite) persisted under `DATA_DIR`; keys from
 * `SECRET_KEYS` or generated under `DATA_DIR`; mail over `SMTP_URL` or into the log.
 */
export const DefaultPorts = composePorts({
  storage: Layer.mergeAll(StorageSql, SharedOrAlone, HealthCheckSql).pipe(Layer.provide(DatabaseLive)),
  secretBox: SecretBoxAesGcm,
  mailer: MailerLive
})
