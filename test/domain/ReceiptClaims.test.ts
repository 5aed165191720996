import { describe, expect, it } from "@effect/vitest"
import {
  echoedCommit,
  fromBase64Url,
  isArchiveDigest,
  offerClaimsOf,
  parseJws,
  receiptClaimsOf,
  receiptClaimsProblem,
  toBase64Url,
  unixSeconds,
  updatesUntil
} from "../../domain/ReceiptClaims.js"
import { AtomicAmount } from "../../domain/Money.js"
import { Sale } from "../../domain/Sale.js"
import type { PaymentRequirement } from "../../domain/Payment.js"
import type { CheckoutId, ListingId, SaleId } from "../../domain/Ids.js"

const COMMIT = "0123456789abcdef0123456789abcdef01234567"
const DIGEST = { sha256: "ab".repeat(32), size: 123 }
const SETTLED_AT = new Date("2026-01-02T03:04:05.678Z")

const aSale = (over: Partial<ConstructorParameters<typeof Sale>[0]> = {}) =>
  new Sale({
    id: "sale_1" as SaleId,
    paymentKey: "eip155:8453:0xnonce",
    listingId: "lst_1" as ListingId,
    checkoutId: "chk_1" as CheckoutId,
    accountId: null,
    repo: "octo/widget",
    livemode: true,
    chain: "base",
    network: "eip155:8453",
    asset: "0xUSDC",
    amount: AtomicAmount.make(750_000n),
    payTo: "0xSeller",
    payer: "0xBuyer",
    commitSha: COMMIT,
    transaction: "0xtx",
    status: "settled",
    failureReason: null,
    createdAt: SETTLED_AT,
    settledAt: SETTLED_AT,
    ...over
  })

const claims = () => receiptClaimsOf(aSale(), "https://market.example", DIGEST)!

const jws = (header: unknown, payload: unknown, signature = "c2ln") =>
  `${toBase64Url(new TextEncoder().encode(JSON.stringify(header)))}.${toBase64Url(new TextEncoder().encode(JSON.stringify(payload)))}.${signature}`

describe("receipt claims", () => {
  it("bind the payment, what it bought and the delivery time (the settlement), in unix seconds", () => {
    expect(claims()).toEqual({
      version: 1,
      network: "eip155:8453",
      resourceUrl: "https://market.example/checkout/chk_1",
      payer: "0xBuyer",
      issuedAt: 1767323045,
      transaction: "0xtx",
      asset: "0xUSDC",
      amount: "750000",
      payTo: "0xSeller",
      sale: "sale_1",
      listing: "lst_1",
      repository: "octo/widget",
      commit: COMMIT,
      archive: DIGEST,
      deliveredAt: 1767323045,
      livemode: true
    })
    expect(receiptClaimsProblem(claims())).toBeNull()
    expect(receiptClaimsProblem({ ...claims(), archive: null })).toBeNull()
    // A test sale's receipt names the test checkout it was paid at.
    expect(receiptClaimsOf(aSale({ livemode: false }), "https://market.example", null)).toMatchObject({ resourceUrl: "https://market.example/checkout/chk_1/test", livemode: false, archive: null })
  })

  it("are none for a sale not settled, without a settlement time, a pinned commit or a transaction", () => {
    expect(receiptClaimsOf(aSale({ status: "pending" }), "u", DIGEST)).toBeNull()
    expect(receiptClaimsOf(aSale({ status: "failed" }), "u", DIGEST)).toBeNull()
    expect(receiptClaimsOf(aSale({ settledAt: null }), "u", DIGEST)).toBeNull()
    expect(receiptClaimsOf(aSale({ commitSha: null }), "u", DIGEST)).toBeNull()
    expect(receiptClaimsOf(aSale({ transaction: null }), "u", DIGEST)).toBeNull()
  })

  it("name the first field that is not a receipt's", () => {
    expect(receiptClaimsProblem("x")).toBe("the payload is not a JSON object")
    expect(receiptClaimsProblem(null)).toBe("the payload is not a JSON object")
    expect(receiptClaimsProblem([claims()])).toBe("the payload is not a JSON object")
    expect(receiptClaimsProblem({ ...claims(), version: 2 })).toBe("version is not 1")
    for (const field of ["network", "resourceUrl", "payer", "transaction", "asset", "amount", "payTo", "sale", "listing", "repository"]) {
      expect(receiptClaimsProblem({ ...claims(), [field]: undefined }), field).toBe(`${field} is missing or not a string`)
      expect(receiptClaimsProblem({ ...claims(), [field]: "" }), field).toBe(`${field} is missing or not a string`)
      expect(receiptClaimsProblem({ ...claims(), [field]: 1 }), field).toBe(`${field} is missing or not a string`)
    }
    expect(receiptClaimsProblem({ ...claims(), amount: "1.5" })).toBe("amount is not atomic units")
    expect(receiptClaimsProblem({ ...claims(), amount: "1".repeat(79) })).toBe("amount is not atomic units")
    expect(receiptClaimsProblem({ ...claims(), commit: "main" })).toBe("commit is not a 40-digit commit id")
    expect(receiptClaimsProblem({ ...claims(), commit: COMMIT.toUpperCase() })).toBe("commit is not a 40-digit commit id")
    expect(receiptClaimsProblem({ ...claims(), commit: `${COMMIT}0` })).toBe("commit is not a 40-digit commit id")
    expect(receiptClaimsProblem({ ...claims(), commit: 1 })).toBe("commit is not a 40-digit commit id")
    expect(receiptClaimsProblem({ ...claims(), archive: undefined })).toBe("archive is not {sha256, size} nor null")
    expect(receiptClaimsProblem({ ...claims(), issuedAt: "1" })).toBe("issuedAt is not unix seconds")
    expect(receiptClaimsProblem({ ...claims(), issuedAt: -1 })).toBe("issuedAt is not unix seconds")
    expect(receiptClaimsProblem({ ...claims(), issuedAt: 1.5 })).toBe("issuedAt is not unix seconds")
    expect(receiptClaimsProblem({ ...claims(), deliveredAt: undefined })).toBe("deliveredAt is not unix seconds")
    expect(receiptClaimsProblem({ ...claims(), livemode: "true" })).toBe("livemode is not a boolean")
    expect(receiptClaimsProblem({ ...claims(), issuedAt: 0, deliveredAt: 0 })).toBeNull()
  })

  it("carry an archive as a lower-case SHA-256 and a size, or null", () => {
    expect(isArchiveDigest(null)).toBe(true)
    expect(isArchiveDigest(DIGEST)).toBe(true)
    expect(isArchiveDigest({ sha256: "AB".repeat(32), size: 1 })).toBe(false)
    expect(isArchiveDigest({ sha256: "ab".repeat(31), size: 1 })).toBe(false)
    expect(isArchiveDigest({ sha256: `${"ab".repeat(32)}0`, size: 1 })).toBe(false)
    expect(isArchiveDigest({ sha256: 1, size: 1 })).toBe(false)
    expect(isArchiveDigest({ sha256: DIGEST.sha256, size: -1 })).toBe(false)
    expect(isArchiveDigest({ sha256: DIGEST.sha256 })).toBe(false)
    expect(isArchiveDigest([DIGEST])).toBe(false)
    expect(isArchiveDigest(undefined)).toBe(false)
  })
})

describe("the update window (issue 30)", () => {
  const DAY_MS = 24 * 60 * 60 * 1000

  it("closes updatesDays whole days after settlement; none for a sale without updates or not settled", () => {
    expect(updatesUntil(aSale({ updatesDays: 30 }))).toStrictEqual(new Date(SETTLED_AT.getTime() + 30 * DAY_MS))
    expect(updatesUntil(aSale({ updatesDays: 1 }))).toStrictEqual(new Date("2026-01-03T03:04:05.678Z"))
    expect(updatesUntil(aSale({ updatesDays: 3650 }))).toStrictEqual(new Date(SETTLED_AT.getTime() + 3650 * DAY_MS))
    expect(updatesUntil(aSale({ updatesDays: 0 }))).toBeNull()
    expect(updatesUntil(aSale())).toBeNull()
    expect(updatesUntil(aSale({ updatesDays: 30, status: "pending", settledAt: null }))).toBeNull()
  })

  it("a receipt names when the window closes (unix seconds), and only when there is one", () => {
    const withWindow = receiptClaimsOf(aSale({ updatesDays: 30 }), "https://market.example", DIGEST)!
    expect(withWindow.updatesUntil).toBe(unixSeconds(new Date(SETTLED_AT.getTime() + 30 * DAY_MS)))
    expect(withWindow.updatesUntil).toBe(1767323045 + 30 * 86400)
    expect(withWindow).not.toHaveProperty("delivery")
    expect(receiptClaimsProblem(withWindow)).toBeNull()
    expect(Object.keys(claims())).not.toContain("updatesUntil")
    expect(Object.keys(claims())).not.toContain("delivery")
  })

  it("an update delivery's receipt: the same payment, the update's commit, time and id, and the window", () => {
    const NEWER = "fedcba9876543210fedcba9876543210fedcba98"
    const at = new Date("2026-01-20T10:00:00.999Z")
    const update = { id: "dlv_1", commitSha: NEWER, deliveredAt: at }
    const other = { sha256: "cd".repeat(32), size: 456 }
    const sale = aSale({ updatesDays: 30 })
    // The purchase's own claims (checked in full above), with the update's commit, archive, time and id.
    expect(receiptClaimsOf(sale, "https://market.example", other, update)).toStrictEqual({
      ...claims(),
      issuedAt: 1768903200,
      commit: NEWER,
      archive: other,
      deliveredAt: 1768903200,
      delivery: "dlv_1",
      updatesUntil: 1767323045 + 30 * 86400
    })
    expect(receiptClaimsProblem(receiptClaimsOf(sale, "https://market.example", other, update))).toBeNull()
    // Still none for a sale that is not settled, update or not.
    expect(receiptClaimsOf(aSale({ status: "pending" }), "u", other, update)).toBeNull()
  })

  it("receipt claims with a delivery that is not a non-empty string, or an updatesUntil that is not unix seconds, are refused", () => {
    const base = { ...claims(), delivery: "dlv_1", updatesUntil: 1 }
    expect(receiptClaimsProblem(base)).toBeNull()
    expect(receiptClaimsProblem({ ...base, updatesUntil: 0 })).toBeNull()
    expect(receiptClaimsProblem({ ...base, delivery: undefined, updatesUntil: undefined })).toBeNull()
    for (const delivery of ["", 1, null, true, {}]) {
      expect(receiptClaimsProblem({ ...base, delivery }), String(delivery)).toBe("delivery is not a string")
    }
    for (const until of ["1", -1, 1.5, null, Number.MAX_SAFE_INTEGER + 1]) {
      expect(receiptClaimsProblem({ ...base, updatesUntil: until }), String(until)).toBe("updatesUntil is not unix seconds")
    }
    // The fields before them are checked first.
    expect(receiptClaimsProblem({ ...base, livemode: 1, delivery: "" })).toBe("livemode is not a boolean")
    expect(receiptClaimsProblem({ ...base, delivery: "", updatesUntil: -1 })).toBe("delivery is not a string")
  })
})

describe("offer claims", () => {
  it("are the requirement's terms, the checkout paid, and what it buys", () => {
    const requirement = {
      chain: "base",
      livemode: false,
      scheme: "exact",
      network: "eip155:84532",
      v1Network: "base-sepolia",
      asset: "0xUSDC",
      amount: AtomicAmount.make(5n),
      payTo: "0xSeller",
      maxTimeoutSeconds: 300,
      resource: "https://market.example/checkout/chk_1/test",
      description: "d",
      extra: {}
    } satisfies PaymentRequirement
    expect(offerClaimsOf(requirement, { listing: "lst_1", repository: "octo/widget", updatesDays: 30 }, { commit: COMMIT, archive: DIGEST }, 42)).toEqual({
      version: 1,
      resourceUrl: "https://market.example/checkout/chk_1/test",
      scheme: "exact",
      network: "eip155:84532",
      asset: "0xUSDC",
      payTo: "0xSeller",
      amount: "5",
      validUntil: 42,
      listing: "lst_1",
      repository: "octo/widget",
      commit: COMMIT,
      archive: DIGEST,
      livemode: false,
      updatesDays: 30
    })
  })
})

describe("JWS parts", () => {
  it("base64url round-trips and refuses other alphabets and impossible lengths", () => {
    const bytes = new Uint8Array([0, 1, 250, 251, 252, 253, 254, 255])
    expect(toBase64Url(bytes)).toBe("AAH6-_z9_v8")
    expect(fromBase64Url("AAH6-_z9_v8")).toEqual(bytes)
    expect(fromBase64Url("")).toEqual(new Uint8Array())
    expect(fromBase64Url("AAH6+/z9")).toBeNull()
    expect(fromBase64Url("AAH6=")).toBeNull()
    expect(fromBase64Url("AAAAA")).toBeNull()
  })

  it("parse into header, payload, signing input and signature, or null", () => {
    const parsed = parseJws(jws({ alg: "EdDSA" }, { a: 1 }))!
    expect(parsed.header).toEqual({ alg: "EdDSA" })
    expect(parsed.payload).toEqual({ a: 1 })
    expect(parsed.signingInput).toBe(jws({ alg: "EdDSA" }, { a: 1 }).split(".").slice(0, 2).join("."))
    expect(parsed.signature).toEqual(new TextEncoder().encode("sig"))
    expect(parseJws("a.b")).toBeNull()
    expect(parseJws("a.b.c.d")).toBeNull()
    expect(parseJws(jws({ alg: "EdDSA" }, { a: 1 }, "+"))).toBeNull()
    expect(parseJws(`!.${jws({}, {}).split(".").slice(1).join(".")}`)).toBeNull()
    expect(parseJws(`${jws({}, {}).split(".")[0]}.!.c2ln`)).toBeNull()
    expect(parseJws(jws([1], { a: 1 }))).toBeNull()
    expect(parseJws(jws("alg", { a: 1 }))).toBeNull()
    expect(parseJws(`${toBase64Url(new TextEncoder().encode("{"))}.e30.c2ln`)).toBeNull()
    expect(parseJws(`e30.${toBase64Url(new Uint8Array([0xff]))}.c2ln`)).toBeNull()
  })
})

describe("the commit a payment echoes", () => {
  const offer = (claims: unknown) => ({ format: "jws", signature: jws({ alg: "EdDSA" }, claims) })
  const paid = (offers: unknown) => ({ extensions: { "offer-receipt": { info: { version: 1, offers } } } })

  it("is absent without an offer-receipt extension (x402 v1, or no extensions sent)", () => {
    expect(echoedCommit({}, "eip155:8453")).toEqual({ _tag: "absent" })
    expect(echoedCommit(null, "eip155:8453")).toEqual({ _tag: "absent" })
    expect(echoedCommit({ extensions: { bazaar: {} } }, "eip155:8453")).toEqual({ _tag: "absent" })
    expect(echoedCommit({ extensions: "x" }, "eip155:8453")).toEqual({ _tag: "absent" })
  })

  it("is the one the echoed offer for the payment's network names", () => {
    const offers = [offer({ network: "solana:x", commit: "s".repeat(40) }), offer({ network: "eip155:8453", commit: COMMIT })]
    expect(echoedCommit(paid(offers), "eip155:8453")).toEqual({ _tag: "names", commit: COMMIT })
    expect(echoedCommit(paid(offers), "solana:x")).toEqual({ _tag: "names", commit: "s".repeat(40) })
  })

  it("is unreadable when the extension is there but no offer for the network names one", () => {
    expect(echoedCommit(paid([offer({ network: "eip155:8453", commit: COMMIT })]), "eip155:1")).toEqual({ _tag: "unreadable" })
    expect(echoedCommit(paid([offer({ network: "eip155:8453", commit: 1 })]), "eip155:8453")).toEqual({ _tag: "unreadable" })
    expect(echoedCommit(paid([offer("x")]), "eip155:8453")).toEqual({ _tag: "unreadable" })
    expect(echoedCommit(paid([{ format: "eip712", signature: jws({}, { network: "eip155:8453", commit: COMMIT }) }]), "eip155:8453")).toEqual({ _tag: "unreadable" })
    expect(echoedCommit(paid([{ format: "jws", signature: 1 }, "x", null]), "eip155:8453")).toEqual({ _tag: "unreadable" })
    expect(echoedCommit(paid([{ format: "jws", signature: "a.b" }]), "eip155:8453")).toEqual({ _tag: "unreadable" })
    expect(echoedCommit(paid("offers"), "eip155:8453")).toEqual({ _tag: "unreadable" })
    expect(echoedCommit({ extensions: { "offer-receipt": "x" } }, "eip155:8453")).toEqual({ _tag: "unreadable" })
    expect(echoedCommit({ extensions: { "offer-receipt": { info: "x" } } }, "eip155:8453")).toEqual({ _tag: "unreadable" })
  })
})

describe("unix seconds", () => {
  it("drop the milliseconds", () => {
    expect(unixSeconds(new Date(1_999))).toBe(1)
    expect(unixSeconds(new Date(2_000))).toBe(2)
  })
})
