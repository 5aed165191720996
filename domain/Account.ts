import { Schema } from "effect"
import { AccountId, SealedSecret } from "./Ids.js"
import { Wallets } from "./Wallet.js"

/**
 * A seller's account: sign-in email, storefront tagline, webhook settings, default payout wallets and the code-host
 * login it proved.
 */
export class Account extends Schema.Class<Account>("Account")({
  id: AccountId,
  /** Lower-cased at sign-in; one account per address. */
  email: Schema.String,
  storefrontTagline: Schema.NullOr(Schema.String),
  webhookUrl: Schema.NullOr(Schema.String),
  /** The webhook signing secret, sealed: it is needed again to sign each delivery, so it cannot be a hash. */
  webhookSecret: Schema.NullOr(SealedSecret),
  /** Default payout wallets, used by this account's listings for chains they name none for. */
  wallets: Wallets,
  /** The code-host login proved through the code-host connection, if any. */
  hostLogin: Schema.NullOr(Schema.String),
  /**
   * That login's own code-host token (no scope), sealed and bound to this account and login: asked at
   * takeover time whether the login administers a repo. Null without a connection (or one made before it).
   */
  hostToken: Schema.optionalWith(Schema.NullOr(SealedSecret), { default: () => null }),
  createdAt: Schema.DateFromSelf
}) {}

/** Binds the sealed webhook signing secret to its account: it opens for no other. */
export const webhookSecretAad = (account: { readonly id: AccountId }): string => `account:${account.id}:webhook_secret`

/** Binds a sealed code-host token to its account and login: it opens for nothing else. */
export const hostTokenAad = (account: { readonly id: AccountId }, login: string): string =>
  `account:${account.id}:host_token:${login.toLowerCase()}`
