import { HttpApiBuilder } from "@effect/platform"
import { Effect, Redacted } from "effect"
import { Accounts } from "../../domain/usecases/Accounts.js"
import { Auth } from "../../domain/usecases/Auth.js"
import { Listings } from "../../domain/usecases/Listings.js"
import { PublicOrigin } from "../../ports/PublicOrigin.js"
import { Api } from "../Api.js"
import { CurrentPrincipal } from "../Security.js"
import { accountView, listingView } from "../Views.js"
import { storageAsDefect } from "../Unavailable.js"

export const KeysHandlers = HttpApiBuilder.group(Api, "keys", (handlers) =>
  Effect.gen(function*() {
    const auth = yield* storageAsDefect(Auth)
    return handlers
      .handle("createKey", () =>
        Effect.flatMap(CurrentPrincipal, auth.createApiKey).pipe(
          Effect.map(({ key, record }) => ({ id: record.id, key: Redacted.value(key), created_at: record.createdAt.toISOString() }))
        ))
      .handle("listKeys", () =>
        Effect.flatMap(CurrentPrincipal, auth.listApiKeys).pipe(
          Effect.map((keys) => ({
            keys: keys.map((k) => ({
              id: k.id,
              last4: k.last4,
              created_at: k.createdAt.toISOString(),
              last_used_at: k.lastUsedAt?.toISOString() ?? null
            }))
          }))
        ))
      .handle("revokeKey", ({ path }) => Effect.flatMap(CurrentPrincipal, (p) => auth.revokeApiKey(p, path.id)))
  }))

export const AccountHandlers = HttpApiBuilder.group(Api, "account", (handlers) =>
  Effect.gen(function*() {
    const accounts = yield* storageAsDefect(Accounts)
    const listings = yield* storageAsDefect(Listings)
    const { baseUrl } = yield* PublicOrigin
    return handlers
      .handle("getAccount", () => Effect.flatMap(CurrentPrincipal, accounts.get).pipe(Effect.map(accountView)))
      .handle("patchAccount", ({ payload }) =>
        Effect.flatMap(CurrentPrincipal, (p) => accounts.patch(p, payload)).pipe(
          Effect.map((r) => ({
            ...accountView(r.account),
            ...(r.webhookSecret === null ? {} : { webhook_secret: Redacted.value(r.webhookSecret) }),
            ...(r.listingsSkipped.length === 0 ? {} : { listings_skipped: r.listingsSkipped.map((s) => ({ ...s })) })
          }))
        ))
      .handle("stores", () =>
        Effect.flatMap(CurrentPrincipal, listings.inventory).pipe(
          Effect.map((all) => ({ stores: all.map((l) => listingView(l, baseUrl)) }))
        ))
  }))
