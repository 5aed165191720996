import { Schema } from "effect"

/** Identifiers are opaque strings with a readable prefix; the random part comes from the SecretBox port. */
export const AccountId = Schema.String.pipe(Schema.brand("AccountId"))
/** An account's id (`acct_…`). */
export type AccountId = typeof AccountId.Type
/** Schema of a listing's id (`lst_…`). */
export const ListingId = Schema.String.pipe(Schema.brand("ListingId"))
/** A listing's id (`lst_…`). */
export type ListingId = typeof ListingId.Type
/** Schema of a checkout's id (`chk_…`); a new one is minted whenever a listing's terms change. */
export const CheckoutId = Schema.String.pipe(Schema.brand("CheckoutId"))
/** A checkout's id (`chk_…`). */
export type CheckoutId = typeof CheckoutId.Type
/** Schema of an API key's id (`key_…`). */
export const ApiKeyId = Schema.String.pipe(Schema.brand("ApiKeyId"))
/** An API key's id (`key_…`). */
export type ApiKeyId = typeof ApiKeyId.Type
/** Schema of a session's id (`ses_…`). */
export const SessionId = Schema.String.pipe(Schema.brand("SessionId"))
/** A session's id (`ses_…`). */
export type SessionId = typeof SessionId.Type
/** Schema of a sale's id (`sale_…`). */
export const SaleId = Schema.String.pipe(Schema.brand("SaleId"))
/** A sale's id (`sale_…`). */
export type SaleId = typeof SaleId.Type
/** Schema of an update delivery's id (`dlv_…`): a newer commit delivered for a sale within its update window. */
export const DeliveryId = Schema.String.pipe(Schema.brand("DeliveryId"))
/** An update delivery's id (`dlv_…`). */
export type DeliveryId = typeof DeliveryId.Type
/** Schema of a webhook event's id (`evt_…`). */
export const EventId = Schema.String.pipe(Schema.brand("EventId"))
/** A webhook event's id (`evt_…`). */
export type EventId = typeof EventId.Type

/** The prefixes make an id's kind obvious in logs and support tickets. */
export const IdPrefix = {
  account: "acct_",
  listing: "lst_",
  checkout: "chk_",
  apiKey: "key_",
  session: "ses_",
  sale: "sale_",
  delivery: "dlv_",
  event: "evt_"
} as const

/** A repository reference as the code host spells it (canonical case once looked up). */
export class RepoRef extends Schema.Class<RepoRef>("RepoRef")({
  owner: Schema.String,
  name: Schema.String
}) {
  /** `<owner>/<repo>` as the code host spells it, for display. */
  get slug(): string {
    return `${this.owner}/${this.name}`
  }
  /** `<owner>/<repo>` is matched case-insensitively. */
  get key(): string {
    return repoKey(this.owner, this.name)
  }
}

/** The case-insensitive key of `<owner>/<repo>`, under which a repo is listed at most once. */
export const repoKey = (owner: string, name: string): string => `${owner.toLowerCase()}/${name.toLowerCase()}`

/**
 * The case-insensitive key of one commit of a repo, `<owner>/<repo>@<sha>` lower case: under it a commit's archive
 * (its digest, its kept bytes, its cut) is known, whatever spelling of the names and the sha asked for it.
 */
export const commitKey = (ref: RepoRef, commitSha: string): string => `${ref.key}@${commitSha.toLowerCase()}`

/** Hex digest of a secret token (SHA-256); the only form in which tokens are stored. */
export const TokenDigest = Schema.String.pipe(Schema.brand("TokenDigest"))
/** A token's SHA-256 digest (hex). */
export type TokenDigest = typeof TokenDigest.Type

/** Ciphertext produced by the SecretBox port, with its key id; opaque to the domain. */
export const SealedSecret = Schema.String.pipe(Schema.brand("SealedSecret"))
/** A secret sealed by the SecretBox port. */
export type SealedSecret = typeof SealedSecret.Type
