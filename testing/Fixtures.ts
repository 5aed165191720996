import { randomBytes } from "node:crypto"
import { Account } from "../domain/Account.js"
import { Checkout } from "../domain/Checkout.js"
import { ApiKey, MagicLinkToken, Session } from "../domain/Credentials.js"
import {
  AccountId,
  ApiKeyId,
  CheckoutId,
  EventId,
  ListingId,
  RepoRef,
  SaleId,
  SealedSecret,
  SessionId,
  TokenDigest
} from "../domain/Ids.js"
import { Listing } from "../domain/Listing.js"
import { AtomicAmount } from "../domain/Money.js"
import { Sale } from "../domain/Sale.js"
import { Address } from "../domain/Wallet.js"
import { WebhookEvent } from "../domain/WebhookEvent.js"

/**
 * Builders of domain values for store tests. Every call gets fresh random ids, emails and repo names, so tests
 * sharing one database never see each other's rows.
 */
export const unique = (): string => randomBytes(6).toString("hex")

/** The fields a model class is made from (its constructor's argument): what the builders below take overrides of. */
export type Fields<C extends abstract new(...args: any) => any> = ConstructorParameters<C>[0]

/** A valid Base address (the USDC contract's) for fixtures. */
export const BASE_ADDRESS = Address.make("0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913")
/** A valid Solana address (the USDC mint's) for fixtures. */
export const SOLANA_ADDRESS = Address.make("EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v")
/** 2^53 + 1: a double cannot hold it, so it only survives a store that never converts through a number. */
export const BEYOND_DOUBLE = AtomicAmount.make(9_007_199_254_740_993n)

/** Milliseconds on purpose: stores must keep them. */
export const at = (iso: string): Date => new Date(iso)

/** An account with a unique id and email; `fields` override any field. */
export const anAccount = (fields: Partial<Fields<typeof Account>> = {}): Account =>
  new Account({
    id: AccountId.make(`acct_${unique()}`),
    email: `seller-${unique()}@example.com`,
    storefrontTagline: null,
    webhookUrl: null,
    webhookSecret: null,
    wallets: { base: null, solana: null },
    hostLogin: null,
    createdAt: at("2024-03-01T10:00:00.123Z"),
    ...fields
  })

/** A live listing of a unique repo, priced and with a Base payout address; `fields` override any field. */
export const aListing = (fields: Partial<Fields<typeof Listing>> = {}): Listing =>
  new Listing({
    id: ListingId.make(`lst_${unique()}`),
    repo: new RepoRef({ owner: `Owner-${unique()}`, name: "Widget" }),
    accountId: null,
    hostUrl: "https://github.com/owner/widget",
    isPrivate: false,
    description: "A widget",
    language: "TypeScript",
    price: AtomicAmount.make(12_340_000n),
    payTo: { base: BASE_ADDRESS, solana: null },
    hostPat: SealedSecret.make(`v1.a.${unique()}.ciphertext.tag`),
    checkoutId: CheckoutId.make(`chk_${unique()}`),
    status: "live",
    createdAt: at("2024-03-01T10:00:00.123Z"),
    updatedAt: at("2024-03-01T10:00:00.123Z"),
    takenDownAt: null,
    ...fields
  })

/** The current checkout of `listing`; `fields` override any field. */
export const aCheckout = (listing: Listing, fields: Partial<Fields<typeof Checkout>> = {}): Checkout =>
  new Checkout({
    id: listing.checkoutId,
    listingId: listing.id,
    repo: listing.repo,
    price: listing.price,
    payTo: listing.payTo,
    createdAt: listing.updatedAt,
    voidedAt: null,
    ...fields
  })

/** A random token digest. */
export const aDigest = (): TokenDigest => TokenDigest.make(randomBytes(32).toString("hex"))

/**
 * A magic-link token for a unique email, created 2024-03-01 and expiring 15 minutes later; `fields` override any
 * field.
 */
export const aMagicToken = (fields: Partial<Fields<typeof MagicLinkToken>> = {}): MagicLinkToken =>
  new MagicLinkToken({
    digest: aDigest(),
    email: `buyer-${unique()}@example.com`,
    createdAt: at("2024-03-01T10:00:00.000Z"),
    expiresAt: at("2024-03-01T10:15:00.000Z"),
    ...fields
  })

/** A session of the account; `fields` override any field. */
export const aSession = (accountId: AccountId, fields: Partial<Fields<typeof Session>> = {}): Session =>
  new Session({
    id: SessionId.make(`ses_${unique()}`),
    digest: aDigest(),
    accountId,
    createdAt: at("2024-03-01T10:00:00.000Z"),
    expiresAt: at("2024-03-31T10:00:00.000Z"),
    ...fields
  })

/** An active API key of the account; `fields` override any field. */
export const anApiKey = (accountId: AccountId, fields: Partial<Fields<typeof ApiKey>> = {}): ApiKey =>
  new ApiKey({
    id: ApiKeyId.make(`key_${unique()}`),
    digest: aDigest(),
    accountId,
    last4: "Ab12",
    createdAt: at("2024-03-01T10:00:00.000Z"),
    lastUsedAt: null,
    revokedAt: null,
    ...fields
  })

/** A pending sale; `fields` override any field. */
export const aSale = (fields: Partial<Fields<typeof Sale>> = {}): Sale =>
  new Sale({
    id: SaleId.make(`sale_${unique()}`),
    paymentKey: `eip155:84532:0x${randomBytes(32).toString("hex")}`,
    listingId: ListingId.make(`lst_${unique()}`),
    checkoutId: CheckoutId.make(`chk_${unique()}`),
    accountId: AccountId.make(`acct_${unique()}`),
    repo: "owner/widget",
    livemode: true,
    chain: "base",
    network: "eip155:8453",
    asset: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
    amount: AtomicAmount.make(12_340_000n),
    payTo: BASE_ADDRESS,
    payer: "0x1111111111111111111111111111111111111111",
    commitSha: "0123456789abcdef0123456789abcdef01234567",
    transaction: null,
    status: "pending",
    failureReason: null,
    createdAt: at("2024-03-01T10:00:00.123Z"),
    settledAt: null,
    ...fields
  })

/** A pending `sale.settled` webhook event; `fields` override any field. */
export const anEvent = (fields: Partial<Fields<typeof WebhookEvent>> = {}): WebhookEvent =>
  new WebhookEvent({
    id: EventId.make(`evt_${unique()}`),
    accountId: AccountId.make(`acct_${unique()}`),
    saleId: SaleId.make(`sale_${unique()}`),
    body: "{\"type\":\"sale.settled\"}",
    status: "pending",
    attempts: 0,
    lastError: null,
    createdAt: at("2024-03-01T10:00:00.000Z"),
    firstAttemptAt: null,
    nextAttemptAt: at("2024-03-01T10:00:00.000Z"),
    ...fields
  })
