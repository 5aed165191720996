import { HttpApi, HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import * as P from "./Problem.js"
import * as S from "./Schemas.js"
import { Authentication, OptionalAuthentication } from "./Security.js"

/**
 * The management and public API. Every endpoint of the contract except the paid checkout itself, which
 * answers raw x402 responses beside this API.
 */
export class AuthGroup extends HttpApiGroup.make("auth")
  .add(
    HttpApiEndpoint.post("requestMagicLink", "/auth/magic-link")
      .setPayload(S.MagicLinkRequest)
      .addSuccess(S.MagicLinkSent, { status: 202 })
      .addError(P.InvalidInput)
      .addError(P.RateLimited)
      .addError(P.MailUnavailable)
      .annotate(OpenApi.Summary, "Email a sign-in link")
      .annotate(OpenApi.Description, "Answers 202 for any well-formed email, whether or not an account exists. Links are single use and valid for 15 minutes. Limits: 5 per email and 20 per client address per hour.")
  )
  .add(
    HttpApiEndpoint.post("verify", "/auth/verify")
      .setPayload(S.VerifyRequest)
      .addSuccess(S.SessionResponse)
      .addError(P.InvalidInput)
      .addError(P.Unauthenticated)
      .annotate(OpenApi.Summary, "Exchange a sign-in token for a session")
      .annotate(OpenApi.Description, "The first verify of an email creates its account. Sessions are valid for 30 days.")
  )
  .add(
    HttpApiEndpoint.get("hostConnectStart", "/auth/host/start")
      .addSuccess(Schema.Void, { status: 302 })
      .addError(P.NotConfigured)
      .annotate(OpenApi.Summary, "Start the code-host (GitHub) connection")
  )
  .add(
    HttpApiEndpoint.get("hostConnectCallback", "/auth/host/callback")
      .addSuccess(Schema.Void, { status: 302 })
      .addError(P.NotConfigured)
      .annotate(OpenApi.Summary, "Finish the code-host (GitHub) connection")
  )
{}

export class KeysGroup extends HttpApiGroup.make("keys")
  .add(
    HttpApiEndpoint.post("createKey", "/my/keys")
      .addSuccess(S.CreatedKey, { status: 201 })
      .addError(P.Forbidden)
      .annotate(OpenApi.Summary, "Create an API key (session only)")
      .annotate(OpenApi.Description, "The key is returned once; only its hash is stored. A key cannot create keys.")
  )
  .add(HttpApiEndpoint.get("listKeys", "/my/keys").addSuccess(S.KeyList).annotate(OpenApi.Summary, "List active API keys"))
  .add(
    HttpApiEndpoint.del("revokeKey", "/my/keys/:id")
      .setPath(S.KeyPath)
      .addSuccess(Schema.Void, { status: 204 })
      .addError(P.NotFound)
      .annotate(OpenApi.Summary, "Revoke an API key immediately")
  )
  .middleware(Authentication)
{}

export class AccountGroup extends HttpApiGroup.make("account")
  .add(HttpApiEndpoint.get("getAccount", "/my/account").addSuccess(S.AccountView).annotate(OpenApi.Summary, "The account's settings"))
  .add(
    HttpApiEndpoint.patch("patchAccount", "/my/account")
      .setPayload(S.AccountPatchRequest)
      .addSuccess(S.AccountPatchResponse)
      .addError(P.InvalidInput)
      .addError(P.HostUnavailable)
      .annotate(OpenApi.Summary, "Change account settings (each field three-state)")
      .annotate(OpenApi.Description, "Absent keeps, a non-empty string replaces, \"\" clears. Setting webhook_url returns a new webhook_secret once. Adding a wallet rebuilds the checkouts of listings lacking that chain; listings that could not be rebuilt are reported in listings_skipped.")
  )
  .add(HttpApiEndpoint.get("stores", "/my/stores").addSuccess(S.Stores).annotate(OpenApi.Summary, "The account's inventory (legacy key `stores`)"))
  .middleware(Authentication)
{}

export class ListingsGroup extends HttpApiGroup.make("listings")
  .add(
    HttpApiEndpoint.patch("updateListing", "/repos/:owner/:repo")
      .setPath(S.RepoPath)
      .setPayload(S.UpdateListingRequest)
      .addSuccess(S.ListingView)
      .addError(P.InvalidInput)
      .addError(P.Forbidden)
      .addError(P.NotFound)
      .addError(P.HostRefused)
      .addError(P.HostUnavailable)
      .annotate(OpenApi.Summary, "Change a listing; the old checkout is voided")
  )
  .add(
    HttpApiEndpoint.del("takedown", "/repos/:owner/:repo")
      .setPath(S.RepoPath)
      .addSuccess(Schema.Void, { status: 204 })
      .addError(P.Forbidden)
      .addError(P.NotFound)
      .annotate(OpenApi.Summary, "Take a listing down; its checkout is voided and its token destroyed")
  )
  .middleware(Authentication)
{}

export class ListingCreateGroup extends HttpApiGroup.make("listingCreate")
  .add(
    HttpApiEndpoint.post("createListing", "/repos")
      .setPayload(S.CreateListingRequest)
      .addSuccess(S.CreatedListing, { status: 201 })
      .addError(P.InvalidInput)
      .addError(P.AlreadyListed)
      .addError(P.HostRefused)
      .addError(P.HostUnavailable)
      .annotate(OpenApi.Summary, "List a repository (anonymously, or with a credential for account defaults)")
      .annotate(OpenApi.Description, "Anonymous listings get no wallet fallback and are limited to 30 an hour per client address.")
  )
  .middleware(OptionalAuthentication)
{}

export class PagesGroup extends HttpApiGroup.make("pages")
  .add(
    HttpApiEndpoint.get("ownerPage", "/r/:owner")
      .setPath(S.OwnerPath)
      .addSuccess(S.OwnerPage)
      .addError(P.NotFound)
      .addError(P.HostUnavailable)
      .annotate(OpenApi.Summary, "An owner's storefront")
  )
  .add(
    HttpApiEndpoint.get("repoPage", "/r/:owner/:repo")
      .setPath(S.RepoPath)
      .addSuccess(S.RepoPage)
      .addError(P.NotFound)
      .addError(P.HostUnavailable)
      .annotate(OpenApi.Summary, "A listing's free preview: tree, README, price and checkout")
  )
{}

export class CheckoutGroup extends HttpApiGroup.make("checkout")
  .add(
    HttpApiEndpoint.get("checkout", "/checkout/:id")
      .setPath(S.CheckoutPath)
      .addSuccess(Schema.Void, { status: 402 })
      .addError(P.NotFound)
      .addError(P.CheckoutGone)
      .addError(P.NotImplemented)
      .annotate(OpenApi.Summary, "Pay for a repository over x402")
  )
  .add(
    HttpApiEndpoint.get("testCheckout", "/checkout/:id/test")
      .setPath(S.CheckoutPath)
      .addSuccess(Schema.Void, { status: 402 })
      .addError(P.NotFound)
      .addError(P.CheckoutGone)
      .addError(P.NotImplemented)
      .annotate(OpenApi.Summary, "The same checkout with simulated money")
  )
{}

export class Api extends HttpApi.make("repomarket")
  .add(AuthGroup)
  .add(KeysGroup)
  .add(AccountGroup)
  .add(ListingCreateGroup)
  .add(ListingsGroup)
  .add(PagesGroup)
  .add(CheckoutGroup)
  .addError(P.InvalidInput)
  .annotate(OpenApi.Title, "repomarket")
  .annotate(OpenApi.Version, "0.1.0")
  .annotate(OpenApi.Description, "Sell code repositories over x402. Errors are RFC 9457 problem+json.")
{}

export { HttpApiSchema }
