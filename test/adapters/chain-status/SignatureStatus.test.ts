/*
 * The Solana status reader on its own, against the stand-in of test/support/chainRpc.ts, which follows the
 * documented rule: a transaction is known only by its first signature (the fee payer's, the facilitator's),
 * while a sale knows only the buyer's. The payments are real `exact` transactions signed with @solana/kit.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "@effect/vitest"
import {
  AccountRole,
  address,
  generateKeyPairSigner,
  getBase58Decoder,
  getBase64EncodedWireTransaction,
  getBase64Encoder,
  getTransactionDecoder,
  type Instruction,
  type KeyPairSigner,
  partiallySignTransaction
} from "@solana/kit"
import { Effect, Either, Redacted } from "effect"
import { http, HttpResponse } from "msw"
import { setupServer } from "msw/node"
import { LANDING_MARGIN_MS, makeSignatureStatus, paymentInTransaction } from "../../../adapters/solana/SignatureStatus.js"
import { solanaPaymentIdentity } from "../../../adapters/solana/SolanaPayment.js"
import { AtomicAmount } from "../../../domain/Money.js"
import type { Sale } from "../../../domain/Sale.js"
import { aSale } from "../../../testing/Fixtures.js"
import { chain, chainRpcHandlers, landSolana, resetChain } from "../../support/chainRpc.js"
import { computeUnitLimit, computeUnitPrice, MEMO_PROGRAM, solanaPayload, standardHead, transferChecked } from "../../support/solanaByHand.js"

const BASE_RPC = "https://base-rpc.test/KEY"
const SOLANA_RPC = "https://solana-rpc.test/SOLKEY-0123456789"
const SOLANA = "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp"
const USDC = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"
const server = setupServer(...chainRpcHandlers(BASE_RPC, SOLANA_RPC))
beforeAll(() => server.listen({ onUnhandledRequest: "error" }))
afterEach(() => {
  server.resetHandlers()
  resetChain()
})
afterAll(() => server.close())

const readerWith = (options: { pageSize?: number; pages?: number; transactions?: number } = {}) =>
  makeSignatureStatus(Redacted.make(SOLANA_RPC), { network: SOLANA, timeoutMs: 2_000, ...options })
const read = readerWith()

const signer = () => Effect.promise(() => generateKeyPairSigner())

/** A buyer's signed payment for `amount` to `payTo`, and the pending sale a purchase records for it. */
const solanaPurchase = (options: { buyer?: KeyPairSigner; amount?: bigint; createdAt?: Date; settleBy?: Date | null } = {}) =>
  Effect.gen(function*() {
    const buyer = options.buyer ?? (yield* signer())
    const payTo = (yield* signer()).address
    const feePayer = (yield* signer()).address
    const amount = options.amount ?? 2_500_000n
    const accepted = { scheme: "exact", network: SOLANA, asset: USDC, amount: String(amount), payTo, maxTimeoutSeconds: 300, extra: { feePayer } } as any
    const payload = yield* solanaPayload(buyer, accepted, yield* standardHead(buyer, accepted))
    const key = Either.getOrThrow(solanaPaymentIdentity(payload)).key
    const createdAt = options.createdAt ?? new Date(Date.now() - 60_000)
    const sale = aSale({
      paymentKey: `${SOLANA}:${key}`,
      chain: "solana",
      network: SOLANA,
      asset: USDC,
      amount: AtomicAmount.make(amount),
      payTo,
      payer: buyer.address,
      createdAt,
      settleBy: options.settleBy === undefined ? new Date(createdAt.getTime() + 300_000) : options.settleBy
    })
    return { sale, payload, buyer, accepted }
  })

const methods = () => chain.calls.map((c) => c.replace("solana:", ""))

describe("the Solana status reader", () => {
  it.effect("landed and finalized: settled with the transaction's id (its first signature), though the sale knows only the buyer's", () =>
    Effect.gen(function*() {
      const { payload, sale } = yield* solanaPurchase()
      const id = landSolana(payload)
      expect(sale.paymentKey).not.toContain(id)
      expect(yield* read(sale)).toEqual({ _tag: "Settled", transaction: id })
      expect(methods()).toEqual(["getSignaturesForAddress", "getTransaction"])
    }))

  it.effect("not on chain: unsettled (it may land until settleBy; Settlements fails it after)", () =>
    Effect.gen(function*() {
      const { sale } = yield* solanaPurchase()
      expect(yield* read(sale)).toEqual({ _tag: "Unsettled" })
    }))

  it.effect("landed but only confirmed: not final (pending), never settled before it is final", () =>
    Effect.gen(function*() {
      const { payload, sale } = yield* solanaPurchase()
      landSolana(payload, { confirmationStatus: "confirmed" })
      expect(yield* read(sale)).toEqual({ _tag: "NotFinal", reason: "the transaction is on chain but not final yet" })
    }))

  it.effect("only processed: not listed at the confirmed commitment, so unsettled for now", () =>
    Effect.gen(function*() {
      const { payload, sale } = yield* solanaPurchase()
      landSolana(payload, { confirmationStatus: "processed" })
      expect(yield* read(sale)).toEqual({ _tag: "Unsettled" })
    }))

  it.effect("landed with an error and final: failed (the same message can never land again); not final: not final", () =>
    Effect.gen(function*() {
      const { payload, sale } = yield* solanaPurchase()
      landSolana(payload, { err: { InstructionError: [2, { Custom: 1 }] } })
      expect(yield* read(sale)).toEqual({ _tag: "Failed", reason: "transaction_failed_on_chain" })
      chain.solana[0] = { ...chain.solana[0]!, confirmationStatus: "confirmed" }
      expect((yield* read(sale))._tag).toBe("NotFinal")
    }))

  it.effect("the buyer's other transactions in the window are passed over; the sale's is found among them", () =>
    Effect.gen(function*() {
      const buyer = yield* signer()
      const mine = yield* solanaPurchase({ buyer })
      const other = yield* solanaPurchase({ buyer })
      landSolana(mine.payload)
      landSolana(other.payload)
      const another = yield* solanaPurchase({ buyer })
      landSolana(another.payload, { err: { InstructionError: [2, { Custom: 1 }] } })
      const first = yield* read(mine.sale)
      const second = yield* read(other.sale)
      expect(first).toMatchObject({ _tag: "Settled" })
      expect(second).toMatchObject({ _tag: "Settled" })
      expect(JSON.stringify(second)).not.toBe(JSON.stringify(first))
      expect(yield* read(another.sale)).toEqual({ _tag: "Failed", reason: "transaction_failed_on_chain" })
    }))

  it.effect("a transaction that carries the buyer's signature but pays other terms than the sale's fails it", () =>
    Effect.gen(function*() {
      const { payload, sale } = yield* solanaPurchase()
      landSolana(payload)
      for (const [name, other] of [
        ["amount", { ...sale, amount: AtomicAmount.make(sale.amount + 1n) }],
        ["mint", { ...sale, asset: "4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU" }],
        ["payTo", { ...sale, payTo: (yield* signer()).address }]
      ] as const) {
        expect(yield* read(other as Sale), name).toEqual({ _tag: "Failed", reason: "transaction_does_not_pay_this_sale" })
      }
    }))

  it.effect("transactions before the window end the search (unsettled) without being fetched; those after it are skipped unfetched", () =>
    Effect.gen(function*() {
      const buyer = yield* signer()
      const now = Date.now()
      const old = yield* solanaPurchase({ buyer })
      landSolana(old.payload, { blockTime: Math.floor((now - 3_600_000 - LANDING_MARGIN_MS) / 1000) })
      const sale = (yield* solanaPurchase({ buyer, createdAt: new Date(now - 3_600_000), settleBy: new Date(now - 3_600_000 + 60_000) })).sale
      const later = yield* solanaPurchase({ buyer })
      landSolana(later.payload, { blockTime: Math.floor(now / 1000) })
      expect(yield* read(sale)).toEqual({ _tag: "Unsettled" })
      expect(methods()).toEqual(["getSignaturesForAddress"])
    }))

  it.effect("the window's edges: a transaction landing exactly at createdAt − margin, or at settleBy + margin, is looked at", () =>
    Effect.gen(function*() {
      const createdAt = new Date(Math.floor(Date.now() / 1000) * 1000 - 600_000)
      const settleBy = new Date(createdAt.getTime() + 60_000)
      const early = yield* solanaPurchase({ createdAt, settleBy })
      landSolana(early.payload, { blockTime: (createdAt.getTime() - LANDING_MARGIN_MS) / 1000 })
      expect((yield* read(early.sale))._tag).toBe("Settled")
      resetChain()
      const late = yield* solanaPurchase({ createdAt, settleBy })
      landSolana(late.payload, { blockTime: (settleBy.getTime() + LANDING_MARGIN_MS) / 1000 })
      expect((yield* read(late.sale))._tag).toBe("Settled")
      resetChain()
      // A sale without settleBy: the window closes at createdAt + margin.
      const open = yield* solanaPurchase({ createdAt, settleBy: null })
      landSolana(open.payload, { blockTime: (createdAt.getTime() + LANDING_MARGIN_MS) / 1000 })
      expect((yield* read(open.sale))._tag).toBe("Settled")
      resetChain()
      const past = yield* solanaPurchase({ createdAt, settleBy: null })
      landSolana(past.payload, { blockTime: (createdAt.getTime() + LANDING_MARGIN_MS) / 1000 + 1 })
      expect(yield* read(past.sale)).toEqual({ _tag: "Unsettled" })
    }))

  it.effect("pages through the payer's history with `before`; more history than the read's bounds is unknown, never unsettled", () =>
    Effect.gen(function*() {
      const buyer = yield* signer()
      const mine = yield* solanaPurchase({ buyer })
      landSolana(mine.payload)
      for (let i = 0; i < 4; i++) landSolana((yield* solanaPurchase({ buyer })).payload)
      // Five transactions, two a page: the sale's is the oldest, on the third page.
      expect((yield* readerWith({ pageSize: 2, pages: 3 })(mine.sale))._tag).toBe("Settled")
      expect(methods().filter((m) => m === "getSignaturesForAddress")).toHaveLength(3)
      expect(yield* readerWith({ pageSize: 2, pages: 2 })(mine.sale)).toMatchObject({ _tag: "Unknown", reason: expect.stringContaining("longer") })
      // A full last page and nothing found: more may lie beyond, so unknown.
      const unseen = yield* solanaPurchase({ buyer })
      expect((yield* readerWith({ pageSize: 5, pages: 1 })(unseen.sale))._tag).toBe("Unknown")
      expect(yield* readerWith({ pageSize: 6, pages: 1 })(unseen.sale)).toEqual({ _tag: "Unsettled" })
    }))

  it.effect("fetches at most its budget of transactions per read: beyond it, unknown", () =>
    Effect.gen(function*() {
      const buyer = yield* signer()
      const mine = yield* solanaPurchase({ buyer })
      landSolana(mine.payload)
      for (let i = 0; i < 3; i++) landSolana((yield* solanaPurchase({ buyer })).payload)
      expect((yield* readerWith({ transactions: 4 })(mine.sale))._tag).toBe("Settled")
      expect(yield* readerWith({ transactions: 3 })(mine.sale)).toMatchObject({ _tag: "Unknown", reason: expect.stringContaining("more transactions") })
    }))

  it.effect("no answer, an error answer, a listed transaction it cannot fetch, or one without its outcome: unknown; the key shows nowhere", () =>
    Effect.gen(function*() {
      const { payload, sale } = yield* solanaPurchase()
      landSolana(payload)
      chain.down = true
      const down = yield* read(sale)
      expect(down).toEqual({ _tag: "Unknown", reason: "the Solana RPC endpoint did not answer" })
      expect(JSON.stringify(down)).not.toContain("SOLKEY")
      chain.down = false
      const answering = (method: string, answer: (id: unknown) => Response) =>
        server.use(http.post(SOLANA_RPC, async ({ request }) => {
          const body: any = await request.clone().json()
          return body.method === method ? answer(body.id) : undefined
        }))
      answering("getSignaturesForAddress", (id) => HttpResponse.json({ jsonrpc: "2.0", id, error: { code: -32000, message: "boom" } }))
      expect((yield* read(sale))._tag).toBe("Unknown")
      server.resetHandlers()
      answering("getSignaturesForAddress", (id) => HttpResponse.json({ jsonrpc: "2.0", id, result: { not: "a list" } }))
      expect(yield* read(sale)).toEqual({ _tag: "Unknown", reason: "the Solana RPC endpoint answered with an error" })
      server.resetHandlers()
      answering("getTransaction", (id) => HttpResponse.json({ jsonrpc: "2.0", id, result: null }))
      expect(yield* read(sale)).toMatchObject({ _tag: "Unknown", reason: expect.stringContaining("could not be read") })
      server.resetHandlers()
      answering("getTransaction", (id) => HttpResponse.json({ jsonrpc: "2.0", id, result: { transaction: "nope", meta: null } }))
      expect(yield* read(sale)).toMatchObject({ _tag: "Unknown", reason: expect.stringContaining("could not be read") })
      server.resetHandlers()
      answering("getTransaction", (id) => HttpResponse.json({ jsonrpc: "2.0", id, result: { transaction: [7, "base64"], meta: null } }))
      expect(yield* read(sale)).toMatchObject({ _tag: "Unknown", reason: expect.stringContaining("could not be read") })
      server.resetHandlers()
      answering("getTransaction", (id) => HttpResponse.json({ jsonrpc: "2.0", id, result: { transaction: [chain.solana[0]!.wire, "base64"], meta: null } }))
      expect(yield* read(sale)).toMatchObject({ _tag: "Unknown", reason: expect.stringContaining("outcome") })
      server.resetHandlers()
      answering("getTransaction", () => new HttpResponse("bad gateway", { status: 502 }))
      expect((yield* read(sale))._tag).toBe("Unknown")
    }))

  it.effect("a sale of another network, or whose payment key is not a Solana signature, is unknown and the chain is not asked", () =>
    Effect.gen(function*() {
      const { sale } = yield* solanaPurchase()
      for (const s of [
        { ...sale, network: "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1" },
        { ...sale, paymentKey: `${SOLANA}:eip3009:0xabc:0x00` },
        { ...sale, paymentKey: `${SOLANA}:solana:0OIl` },
        { ...sale, paymentKey: `${SOLANA}:solana:${"1".repeat(63)}` }
      ] as Array<Sale>) {
        expect((yield* read(s))._tag, s.paymentKey).toBe("Unknown")
      }
      expect(chain.calls).toEqual([])
    }))
})

describe("paymentInTransaction: is a landed transaction this sale's payment?", () => {
  it.effect("another payer's, an undecodable one, or one without the buyer's signature in the payer's slot: not the sale's (null)", () =>
    Effect.gen(function*() {
      const mine = yield* solanaPurchase()
      const theirs = yield* solanaPurchase()
      const signature = mine.sale.paymentKey.split(":").at(-1)!
      expect(yield* Effect.promise(() => paymentInTransaction(mine.payload.transaction, mine.sale, signature))).toBe("matches")
      expect(yield* Effect.promise(() => paymentInTransaction(theirs.payload.transaction, mine.sale, signature))).toBe(null)
      expect(yield* Effect.promise(() => paymentInTransaction("AAAA", mine.sale, signature))).toBe(null)
      // The right payer, another signature (another message the payer signed).
      const otherSignature = theirs.sale.paymentKey.split(":").at(-1)!
      expect(yield* Effect.promise(() => paymentInTransaction(mine.payload.transaction, mine.sale, otherSignature))).toBe(null)
      // The signature named by another payer's slot.
      expect(yield* Effect.promise(() => paymentInTransaction(mine.payload.transaction, { ...mine.sale, payer: theirs.sale.payer }, signature))).toBe(null)
    }))
})

/** The buyer's signature in a payload (its slot, whatever the transaction holds). */
const signatureIn = (payload: { transaction: string }, signer: string) => {
  const decoded = getTransactionDecoder().decode(getBase64Encoder().encode(payload.transaction))
  return getBase58Decoder().decode(decoded.signatures[signer as keyof typeof decoded.signatures]!)
}

describe("the Solana status reader: what a transaction carrying the buyer's signature must also do", () => {
  /** A sale for a payload the buyer signed that is not a plain payment (built by hand). */
  const saleFor = (buyer: KeyPairSigner, accepted: any, payload: { transaction: string }) =>
    aSale({
      paymentKey: `${SOLANA}:solana:${signatureIn(payload, buyer.address)}`,
      chain: "solana",
      network: SOLANA,
      asset: USDC,
      amount: AtomicAmount.make(BigInt(accepted.amount)),
      payTo: accepted.payTo,
      payer: buyer.address,
      createdAt: new Date(Date.now() - 60_000),
      settleBy: new Date(Date.now() + 240_000)
    })

  it.effect("two transfers signed by the buyer (one to payTo): not a payment of the sale; failed once final", () =>
    Effect.gen(function*() {
      const { accepted, buyer } = yield* solanaPurchase()
      const transfer = yield* transferChecked(buyer, accepted)
      const payload = yield* solanaPayload(buyer, accepted, [computeUnitLimit(20_000), computeUnitPrice(1n), transfer, transfer])
      const sale = saleFor(buyer, accepted, payload)
      landSolana(payload)
      expect(yield* read(sale)).toEqual({ _tag: "Failed", reason: "transaction_does_not_pay_this_sale" })
    }))

  it.effect("the payer signs, but the transfer is authorised by another wallet: not the payer's payment", () =>
    Effect.gen(function*() {
      const { accepted, buyer } = yield* solanaPurchase()
      const other = yield* signer()
      // The other wallet's transfer to payTo, plus a memo the buyer co-signs so that its signature is there too.
      const transfer = yield* transferChecked(other, accepted)
      const cosigned: Instruction = {
        programAddress: address(MEMO_PROGRAM),
        accounts: [{ address: buyer.address, role: AccountRole.READONLY_SIGNER }],
        data: new TextEncoder().encode("cosigned")
      }
      const payload = yield* solanaPayload(other, accepted, [computeUnitLimit(20_000), computeUnitPrice(1n), transfer, cosigned])
      // Both sign: the buyer adds its signature to the other's.
      const partial = getTransactionDecoder().decode(getBase64Encoder().encode(payload.transaction))
      const signed = yield* Effect.promise(() => partiallySignTransaction([buyer.keyPair], partial as Parameters<typeof partiallySignTransaction>[1]))
      const both = { transaction: getBase64EncodedWireTransaction(signed) }
      const sale = saleFor(buyer, accepted, both)
      landSolana(both)
      expect(yield* read(sale)).toEqual({ _tag: "Failed", reason: "transaction_does_not_pay_this_sale" })
    }))

  it.effect("a payTo that is no address can be paid nothing: failed", () =>
    Effect.gen(function*() {
      const { payload, sale } = yield* solanaPurchase()
      landSolana(payload)
      expect(yield* read({ ...sale, payTo: "not-an-address" } as Sale)).toEqual({ _tag: "Failed", reason: "transaction_does_not_pay_this_sale" })
    }))

  it.effect("a transaction whose block time the node does not know is still looked at", () =>
    Effect.gen(function*() {
      const { payload, sale } = yield* solanaPurchase()
      const id = landSolana(payload, { blockTime: null })
      expect(yield* read(sale)).toEqual({ _tag: "Settled", transaction: id })
    }))

  it.effect("a sale of another network whose key names its own network is unknown without a call (keys are per network)", () =>
    Effect.gen(function*() {
      const { sale } = yield* solanaPurchase()
      const devnet = "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1"
      const signature = sale.paymentKey.split(":").at(-1)!
      expect(yield* read({ ...sale, paymentKey: `${devnet}:solana:${signature}` } as Sale)).toEqual({ _tag: "Unknown", reason: "not a Solana payment on this network" })
      expect(yield* read({ ...sale, network: devnet, paymentKey: `${devnet}:solana:${signature}` } as Sale)).toEqual({ _tag: "Unknown", reason: "not a Solana payment on this network" })
      expect(chain.calls).toEqual([])
    }))

  it.effect("the outcome of the sale's own transaction: missing meta is unknown; meta without an error is success", () =>
    Effect.gen(function*() {
      const { payload, sale } = yield* solanaPurchase()
      const id = landSolana(payload)
      const withMeta = (meta: unknown) =>
        server.use(http.post(SOLANA_RPC, async ({ request }) => {
          const body: any = await request.clone().json()
          return body.method === "getTransaction"
            ? HttpResponse.json({ jsonrpc: "2.0", id: body.id, result: { slot: 1, blockTime: null, transaction: [chain.solana[0]!.wire, "base64"], ...(meta === undefined ? {} : { meta }) } })
            : undefined
        }))
      withMeta(undefined)
      expect(yield* read(sale)).toEqual({ _tag: "Unknown", reason: "the transaction's outcome is not known" })
      server.resetHandlers()
      withMeta({})
      expect(yield* read(sale)).toEqual({ _tag: "Settled", transaction: id })
    }))

  it.effect("answers that are not a plain result are no answer: an error beside a result, neither, or a failing HTTP status with a result", () =>
    Effect.gen(function*() {
      const { payload, sale } = yield* solanaPurchase()
      landSolana(payload)
      const listing = [{ signature: "x", err: null, blockTime: null, confirmationStatus: "finalized" }]
      for (const [name, answer] of [
        ["error and result", (id: unknown) => HttpResponse.json({ jsonrpc: "2.0", id, result: listing, error: { code: 1, message: "x" } })],
        ["neither", (id: unknown) => HttpResponse.json({ jsonrpc: "2.0", id })],
        ["HTTP 502 with a result", (id: unknown) => HttpResponse.json({ jsonrpc: "2.0", id, result: [] }, { status: 502 })]
      ] as const) {
        server.resetHandlers()
        server.use(http.post(SOLANA_RPC, async ({ request }) => {
          const body: any = await request.clone().json()
          return body.method === "getSignaturesForAddress" ? answer(body.id) : undefined
        }))
        expect(yield* read(sale), name).toEqual({ _tag: "Unknown", reason: "the Solana RPC endpoint did not answer" })
      }
    }))
})
