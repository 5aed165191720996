import { HttpServerRequest } from "@effect/platform"
import { Effect, Option } from "effect"

/**
 * The caller's address for per-client limits: the socket's peer. Proxies' X-Forwarded-For is not trusted
 * (a caller could set it to dodge a limit); behind a proxy, limits apply to the proxy's address.
 */
export const clientAddress = Effect.map(HttpServerRequest.HttpServerRequest, (req) =>
  Option.getOrElse(req.remoteAddress, () => "unknown"))
