import { HttpApiMiddleware, HttpApiSecurity } from "@effect/platform"
import { Context, Option, Schema } from "effect"
import type { Principal } from "../domain/Credentials.js"
import * as P from "./Problem.js"

/** The authenticated caller of a management endpoint. */
export class CurrentPrincipal extends Context.Tag("repomarket/CurrentPrincipal")<CurrentPrincipal, Principal>() {}

/** The caller of an endpoint where a credential is optional (`POST /repos`): none means anonymous. */
export class MaybePrincipal extends Context.Tag("repomarket/MaybePrincipal")<MaybePrincipal, Option.Option<Principal>>() {}

const AuthFailure = Schema.Union(P.Unauthenticated, P.RateLimited)

/** `Authorization: Bearer <session or API key>`; every management call. */
export class Authentication extends HttpApiMiddleware.Tag<Authentication>()("http/Authentication", {
  failure: AuthFailure,
  provides: CurrentPrincipal,
  security: { bearer: HttpApiSecurity.bearer }
}) {}

/**
 * An optional bearer credential. Absent: anonymous. Present but bad: 401, never a silent fall back to
 * anonymous (that would drop the account's wallet defaults without telling the seller).
 */
export class OptionalAuthentication extends HttpApiMiddleware.Tag<OptionalAuthentication>()("http/OptionalAuthentication", {
  failure: AuthFailure,
  provides: MaybePrincipal
}) {}
