import { Config, ConfigError, Duration, Effect, Either, Layer, Option, Redacted } from "effect"
import { makeSecretBox } from "../../adapters/crypto/SecretBoxAesGcm.js"
import { parseSecretKeys } from "../../adapters/crypto/SecretKeys.js"
import { MailerSmtp } from "../../adapters/mail/MailerSmtp.js"
import { StorageSql } from "../../adapters/sql/SqlLive.js"
import { pgClientForUrl, pgTimeoutsConfig } from "../../adapters/sql/PgClientLive.js"
import { RateLimiterSql } from "../../adapters/sql/RateLimiterSql.js"
import { SecretBox } from "../../ports/SecretBox.js"
import { HostLogFormat, logFormatConfig } from "../node/LogFormat.js"
import { composePorts } from "../Ports.js"

/**
 * Settings the HTTP host may default but a Lambda deployment must set: there is no local disk that
 * survives or is shared between instances (so no embedded PGlite and no generated key under DATA_DIR),
 * `http://localhost` is no public origin, and the log mailer would write sign-in links into CloudWatch.
 */
export const LAMBDA_REQUIRED_SETTINGS = ["BASE_URL", "DATABASE_URL", "SECRET_KEYS", "SMTP_URL"] as const

const isSet = (name: string) =>
  Effect.map(Config.option(Config.string(name)), Option.exists((value) => value.trim() !== ""))

/** Fails start-up with one message naming every required setting that is missing. */
export const checkLambdaSettings: Effect.Effect<void, ConfigError.ConfigError> = Effect.gen(function*() {
  const missing: Array<string> = []
  for (const name of LAMBDA_REQUIRED_SETTINGS) {
    if (!(yield* isSet(name))) missing.push(name)
  }
  if (missing.length > 0) {
    return yield* Effect.fail(ConfigError.MissingData(
      [missing[0]!],
      `${missing.join(", ")} ${missing.length === 1 ? "is" : "are"} required on AWS Lambda ` +
        "(no embedded database, no generated key, no log mailer there); see hosts/lambda/template.yaml"
    ))
  }
})

/**
 * Connections per instance. An instance serves one request at a time, and many instances share one
 * database: a small pool keeps `instances × pool` under PostgreSQL's `max_connections` (or use RDS Proxy).
 */
export const LAMBDA_POOL_SIZE = 4

/**
 * PostgreSQL from `DATABASE_URL` (read as a secret: it may hold a password), with the statement and connect
 * timeouts of the Node host (`DATABASE_STATEMENT_TIMEOUT_MS`, `DATABASE_CONNECT_TIMEOUT_MS`).
 */
export const DatabaseFromUrl = Layer.unwrapEffect(
  Effect.map(Config.all([Config.redacted("DATABASE_URL"), pgTimeoutsConfig]), ([url, timeouts]) =>
    pgClientForUrl(url, timeouts, {
      applicationName: "repomarket-lambda",
      maxConnections: LAMBDA_POOL_SIZE,
      // Frozen instances keep idle sockets the server may have dropped; let them go early.
      idleTimeout: Duration.seconds(60)
    }))
)

/** AES-256-GCM keys from `SECRET_KEYS` only (every instance must seal and open with the same keys). */
export const SecretBoxFromKeys = Layer.effect(
  SecretBox,
  Effect.flatMap(Config.redacted("SECRET_KEYS"), (value) =>
    Either.match(parseSecretKeys(Redacted.value(value)), {
      onLeft: (reason) => Effect.fail(ConfigError.InvalidData(["SECRET_KEYS"], `SECRET_KEYS is malformed: ${reason}`)),
      onRight: (ring) => Effect.succeed(makeSecretBox(ring))
    }))
)

/**
 * The adapters a Lambda instance runs on: the composition root (hosts/Ports.ts) with the Lambda's choices, the
 * Node host's development fallbacks removed.
 * Rate limits are counted in PostgreSQL (RateLimiterSql, on the instance's own pool), so every limit holds
 * per deployment however many instances run, as on Node hosts sharing a database.
 */
export const LambdaPortsLive = Layer.unwrapEffect(Effect.map(
  // LOG_FORMAT as on `npm start` (pretty or json), checked with the required settings before anything is built.
  Effect.zipRight(checkLambdaSettings, logFormatConfig),
  (format) =>
    Layer.merge(
      composePorts({
        storage: Layer.merge(StorageSql, RateLimiterSql).pipe(Layer.provide(DatabaseFromUrl)),
        secretBox: SecretBoxFromKeys,
        mailer: MailerSmtp
      }),
      HostLogFormat(format)
    )
))
