import { Config, ConfigError, Effect, Either, Layer, Logger, Option } from "effect"
import { PublicOrigin } from "../ports/PublicOrigin.js"

/** `PORT` (default 3000). */
export const port = Config.port("PORT").pipe(Config.withDefault(3000))

const origin = (raw: string): Either.Either<string, ConfigError.ConfigError> => {
  try {
    const url = new URL(raw)
    if ((url.protocol === "http:" || url.protocol === "https:") && url.pathname === "/" && !url.search && !url.hash) {
      return Either.right(url.origin)
    }
  } catch {
    // fall through
  }
  return Either.left(ConfigError.InvalidData(["BASE_URL"], "BASE_URL must be an http(s) origin like https://repomarket.example"))
}

/** `BASE_URL`: the public origin of every absolute URL; defaults to `http://localhost:<PORT>`. */
export const PublicOriginFromConfig = Layer.effect(
  PublicOrigin,
  Effect.gen(function*() {
    const configured = yield* Config.option(Config.string("BASE_URL"))
    if (Option.isNone(configured) || configured.value === "") {
      return { baseUrl: `http://localhost:${yield* port}`, isDefault: true }
    }
    return { baseUrl: yield* origin(configured.value) }
  })
)

/**
 * `LOG_LEVEL`: the least severe log line written, one of `ALL`, `TRACE`, `DEBUG`, `INFO` (the default: the
 * access log is written at this level), `WARN`, `ERROR`, `FATAL`, `OFF`, in any case. An unknown name stops
 * start-up.
 */
export const LogLevelFromConfig: Layer.Layer<never, ConfigError.ConfigError> = Layer.unwrapEffect(
  Effect.map(Config.option(Config.logLevel("LOG_LEVEL")), Option.match({ onNone: () => Layer.empty, onSome: Logger.minimumLogLevel }))
)
