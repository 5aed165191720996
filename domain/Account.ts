import { Schema } from "effect"
import { AccountId, SealedSecret } from "./Ids.js"
import { Wallets } from "./Wallet.js"

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
  createdAt: Schema.DateFromSelf
}) {}

export const webhookSecretAad = (account: { readonly id: AccountId }): string => `account:${account.id}:webhook_secret`
