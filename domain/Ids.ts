import { Schema } from "effect"

/** Identifiers are opaque strings with a readable prefix; the random part comes from the SecretBox port. */
export const AccountId = Schema.String.pipe(Schema.brand("AccountId"))
export type AccountId = typeof AccountId.Type
export const ListingId = Schema.String.pipe(Schema.brand("ListingId"))
export type ListingId = typeof ListingId.Type
export const CheckoutId = Schema.String.pipe(Schema.brand("CheckoutId"))
export type CheckoutId = typeof CheckoutId.Type
export const ApiKeyId = Schema.String.pipe(Schema.brand("ApiKeyId"))
export type ApiKeyId = typeof ApiKeyId.Type
export const SessionId = Schema.String.pipe(Schema.brand("SessionId"))
export type SessionId = typeof SessionId.Type
export const SaleId = Schema.String.pipe(Schema.brand("SaleId"))
export type SaleId = typeof SaleId.Type
export const EventId = Schema.String.pipe(Schema.brand("EventId"))
export type EventId = typeof EventId.Type

/** The prefixes make an id's kind obvious in logs and support tickets. */
export const IdPrefix = {
  account: "acct_",
  listing: "lst_",
  checkout: "chk_",
  apiKey: "key_",
  session: "ses_",
  sale: "sale_",
  event: "evt_"
} as const

/** A repository reference as the code host spells it (canonical case once looked up). */
export class RepoRef extends Schema.Class<RepoRef>("RepoRef")({
  owner: Schema.String,
  name: Schema.String
}) {
  get slug(): string {
    return `${this.owner}/${this.name}`
  }
  /** `<owner>/<repo>` is matched case-insensitively. */
  get key(): string {
    return repoKey(this.owner, this.name)
  }
}

export const repoKey = (owner: string, name: string): string => `${owner.toLowerCase()}/${name.toLowerCase()}`

/** Hex digest of a secret token (SHA-256); the only form in which tokens are stored. */
export const TokenDigest = Schema.String.pipe(Schema.brand("TokenDigest"))
export type TokenDigest = typeof TokenDigest.Type

/** Ciphertext produced by the SecretBox port, with its key id; opaque to the domain. */
export const SealedSecret = Schema.String.pipe(Schema.brand("SealedSecret"))
export type SealedSecret = typeof SealedSecret.Type
