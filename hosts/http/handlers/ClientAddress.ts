import { HttpServerRequest } from "@effect/platform"
import { Effect, Option } from "effect"

/**
 * The caller's address for per-client limits: the socket's peer, or behind the proxies `TRUSTED_PROXIES`
 * names, the first address in X-Forwarded-For (read from the right) that is not one of them (TrustedProxies.ts).
 * Without that setting X-Forwarded-For is never read: a caller could set it to dodge a limit.
 */
export const clientAddress = Effect.map(HttpServerRequest.HttpServerRequest, (req) =>
  Option.getOrElse(req.remoteAddress, () => "unknown"))
