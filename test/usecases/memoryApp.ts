/*
 * Shared wiring of the use-case tests on memory adapters (issue 28): the use cases composed as
 * app/AppLayer.ts composes them (UseCasesLive), over `memoryPorts()` of the testing kit, with the
 * memory code-host identity configured when a test gives it OAuth codes. Every test builds its own layer, so
 * tests share no state (the suite may run shuffled).
 */
import { Context, Effect, Exit, Layer, Option, Redacted, TestClock } from "effect"
import { expect } from "@effect/vitest"
import { CodeHostIdentityMemory, type IdentityMemoryOptions } from "../../adapters/memory/CodeHostIdentityMemory.js"
import type { FakeRepo } from "../../adapters/memory/CodeHostMemory.js"
import type { Account } from "../../domain/Account.js"
import type { Checkout } from "../../domain/Checkout.js"
import { Principal } from "../../domain/Credentials.js"
import { RepoRef } from "../../domain/Ids.js"
import type { Listing } from "../../domain/Listing.js"
import { receiptToken } from "../../domain/rules/Receipt.js"
import { Sale } from "../../domain/Sale.js"
import { Accounts } from "../../domain/usecases/Accounts.js"
import { Auth } from "../../domain/usecases/Auth.js"
import { HostConnection } from "../../domain/usecases/HostConnection.js"
import { Listings } from "../../domain/usecases/Listings.js"
import { Purchases } from "../../domain/usecases/Purchases.js"
import { Redownloads } from "../../domain/usecases/Redownloads.js"
import { Settlements } from "../../domain/usecases/Settlements.js"
import { AccountStore } from "../../ports/AccountStore.js"
import { CodeHost } from "../../ports/CodeHost.js"
import { CodeHostIdentity } from "../../ports/CodeHostIdentity.js"
import { ListingStore } from "../../ports/ListingStore.js"
import { Mailer } from "../../ports/Mailer.js"
import { SaleLedger } from "../../ports/SaleLedger.js"
import { SecretBox } from "../../ports/SecretBox.js"
import { memoryPorts } from "../../testing/MemoryPorts.js"
import { aCheckout, aListing, anAccount, aSale, at, unique } from "../../testing/Fixtures.js"

export const BASE_URL = "https://market.example"
/** The clock of every test: a fixed instant, so expiries are exact. */
export const NOW = at("2024-03-01T12:00:00.000Z")
export const SHA = "89abcdef0123456789abcdef0123456789abcdef"

/** A public repo. */
export const WIDGET: FakeRepo = { owner: "Octo-Org", name: "Widget", headSha: SHA, description: "A widget", files: { "README.md": "# Widget\n" } }
/** Another public repo of the same owner. */
export const GADGET: FakeRepo = { ...WIDGET, name: "Gadget", description: "A gadget" }
/** The one token that reads SECRET: obviously fake, and built at run time so nothing token-shaped is committed. */
export const SECRET_TOKEN = ["FAKE", "test", "token", "reads", "secret", String(Date.now())].join("-")
/** A private repo, readable with SECRET_TOKEN only. */
export const SECRET: FakeRepo = { owner: "Octo-Org", name: "Secret", isPrivate: true, token: SECRET_TOKEN, headSha: SHA, files: { "README.md": "# Secret\n" } }

/** Valid payout addresses (checksummed Base, Solana). */
export const BASE_WALLET = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"
export const BASE_WALLET_2 = "0x4200000000000000000000000000000000000006"
export const SOLANA_WALLET = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"

export interface MemoryAppOptions {
  /** The repos the memory code host serves; default WIDGET, GADGET and SECRET. */
  readonly repos?: ReadonlyArray<FakeRepo>
  /** OAuth codes the memory identity accepts (code → login); without them the connection is not configured. */
  readonly codes?: Readonly<Record<string, string>>
  readonly admins?: IdentityMemoryOptions["admins"]
  /** Decorates the code-host identity every use case sees (to record what it is asked). */
  readonly wrapIdentity?: (identity: Context.Tag.Service<CodeHostIdentity>) => Context.Tag.Service<CodeHostIdentity>
  /** Decorates the code host every use case sees. */
  readonly wrapHost?: (host: Context.Tag.Service<CodeHost>) => Context.Tag.Service<CodeHost>
  /** Decorates the mailer every use case sees (a mail server that fails). */
  readonly wrapMailer?: (mailer: Context.Tag.Service<Mailer>) => Context.Tag.Service<Mailer>
}

/** The ports: memoryPorts, with the identity replaced (and decorated) and the code host decorated when asked. */
export const portsOf = (options: MemoryAppOptions = {}) => {
  const base = memoryPorts({ baseUrl: BASE_URL, repos: options.repos ?? [WIDGET, GADGET, SECRET] })
  const identity = Layer.effect(CodeHostIdentity, Effect.map(CodeHostIdentity, options.wrapIdentity ?? ((i) => i))).pipe(
    Layer.provide(CodeHostIdentityMemory(options.codes, options.admins === undefined ? {} : { admins: options.admins }))
  )
  const host = Layer.effect(CodeHost, Effect.map(CodeHost, options.wrapHost ?? ((h) => h)))
  const mailer = Layer.effect(Mailer, Effect.map(Mailer, options.wrapMailer ?? ((m) => m)))
  // provideMerge: the replaced identity and the decorated host and mailer win over memoryPorts' own.
  return Layer.mergeAll(identity, host, mailer).pipe(Layer.provideMerge(base))
}

/** The use cases as AppLayer's UseCasesLive composes them, over the memory ports (kept in the context for asserts). */
export const memoryApp = (options: MemoryAppOptions = {}) =>
  Layer.mergeAll(Auth.Default, Accounts.Default, Redownloads.Default, HostConnection.Default).pipe(
    Layer.provideMerge(Purchases.Default),
    Layer.provideMerge(Listings.Default),
    Layer.provideMerge(Settlements.Default),
    Layer.provideMerge(portsOf(options))
  )

/** Sets the TestClock to NOW (it starts at the epoch). */
export const atNow = TestClock.setTime(NOW.getTime())

/** The memory host's widget listed (anonymously, Base payout) with `updatesDays`, and its current checkout, stored. */
export const listedWidget = (updatesDays = 30) =>
  Effect.gen(function*() {
    const store = yield* ListingStore
    const listing = aListing({ repo: new RepoRef({ owner: WIDGET.owner, name: WIDGET.name }), hostPat: null, updatesDays })
    const checkout = aCheckout(listing)
    yield* store.insert(listing)
    yield* store.insertCheckout(checkout)
    return { listing, checkout }
  })

export interface SoldOptions {
  readonly updatesDays?: number
  readonly settledAt?: Date
  readonly commitSha?: string | null
  readonly livemode?: boolean
  /** An existing listing to sell (else the widget is listed with the sale's window). */
  readonly of?: { readonly listing: Listing; readonly checkout: Checkout }
}

/**
 * A settled sale of the widget in the memory ledger (30 days of updates, settled at NOW, commit SHA, test mode by
 * default), and its receipt token.
 */
export const sold = (options: SoldOptions = {}) =>
  Effect.gen(function*() {
    const updatesDays = options.updatesDays ?? 30
    const { listing, checkout } = options.of ?? (yield* listedWidget(updatesDays))
    const settledAt = options.settledAt ?? NOW
    const livemode = options.livemode ?? false
    const pending = aSale({
      listingId: listing.id,
      checkoutId: checkout.id,
      accountId: null,
      repo: "Octo-Org/Widget",
      livemode,
      network: livemode ? "eip155:8453" : "eip155:84532",
      commitSha: options.commitSha === undefined ? SHA : options.commitSha,
      createdAt: settledAt,
      updatesDays
    })
    const ledger = yield* SaleLedger
    yield* ledger.recordPending(pending)
    const sale = new Sale({ ...pending, status: "settled", transaction: "0xsettled", settledAt })
    yield* ledger.settle(sale, Option.none())
    const box = yield* SecretBox
    return { listing, checkout, sale, token: receiptToken(sale.id, box.mac) }
  })

/** A stored account (unique email) and a session principal for it. */
export const signedIn = (fields: Partial<ConstructorParameters<typeof Account>[0]> = {}) =>
  Effect.gen(function*() {
    const account = yield* Effect.flatMap(AccountStore, (s) => s.insertOrGet(anAccount({ createdAt: NOW, ...fields })))
    return { account, principal: sessionOf(account) }
  })

/** A session principal of the account (the use cases take the principal the host authenticated). */
export const sessionOf = (account: { readonly id: Account["id"] }) =>
  new Principal({ accountId: account.id, via: "session", credentialId: `ses_${unique()}` })

/** An API-key principal of the account. */
export const apiKeyOf = (account: { readonly id: Account["id"] }) =>
  new Principal({ accountId: account.id, via: "api_key", credentialId: `key_${unique()}` })

/** The account as stored now. */
export const storedAccount = (id: Account["id"]) =>
  Effect.map(Effect.flatMap(AccountStore, (s) => s.findById(id)), Option.getOrThrow)

/** The failure of an effect expected to fail (its error value), failing the test if it succeeded or died. */
export const failureOf = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.map(Effect.exit(effect), (exit) => {
    if (Exit.isSuccess(exit)) expect.fail(`expected a failure, got ${shown(exit.value)}`)
    const failure = Exit.isFailure(exit) ? exit.cause : undefined
    const error = failure !== undefined && failure._tag === "Fail" ? failure.error : undefined
    if (error === undefined) expect.fail(`expected a typed failure, got ${String(failure)}`)
    return error as E
  })

/** Everything a value would show when serialized (bigints as strings): to check a secret is not in it. */
export const shown = (value: unknown): string =>
  JSON.stringify(value, (_key, v: unknown) => typeof v === "bigint" ? v.toString() : v)

/**
 * An error's tag and its own plain fields (no cause, no stack), for asserting and for readable diffs: vitest
 * cannot print some Effect errors' diffs.
 */
export const brief = (error: unknown): Record<string, unknown> => {
  const out: Record<string, unknown> = {}
  if (typeof error !== "object" || error === null) return { value: error }
  for (const [key, value] of Object.entries(error)) {
    if (key === "cause" || key === "stack") continue
    out[key] = typeof value === "object" && value !== null ? JSON.parse(shown(value)) : value
  }
  out["_tag"] = (error as { _tag?: unknown })._tag
  return out
}

/** The plain value of a Redacted. */
export const reveal = (r: Redacted.Redacted<string>) => Redacted.value(r)
