/*
 * The Base status reader on its own, against the USDC stand-in of test/support/chainRpc.ts (a nonce unique per
 * payer only; a transfer's receipt holds AuthorizationUsed then Transfer; `finalized` below the tip). Every
 * outcome that decides a sale's fate is pinned here, so that a change to the reader that would settle a sale on
 * weaker evidence fails a test (`npm run test:mutation:money`).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import { http, HttpResponse } from "msw"
import { setupServer } from "msw/node"
import { encodeEventTopics, type Hex, pad, toHex } from "viem"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { makeEip3009Status, transferInReceipt } from "../../../adapters/evm/Eip3009Status.js"
import { AtomicAmount } from "../../../domain/Money.js"
import type { Sale } from "../../../domain/Sale.js"
import { aSale } from "../../../testing/Fixtures.js"
import { BASE_USDC, chain, chainRpcHandlers, keyOf, landTransfer, LATEST_BLOCK, resetChain, USDC } from "../../support/chainRpc.js"

const BASE_RPC = "https://base-rpc.test/KEY-0123456789"
const SOLANA_RPC = "https://solana-rpc.test/KEY"
const server = setupServer(...chainRpcHandlers(BASE_RPC, SOLANA_RPC))
beforeAll(() => server.listen({ onUnhandledRequest: "error" }))
afterEach(() => {
  server.resetHandlers()
  resetChain()
})
afterAll(() => server.close())

const read = makeEip3009Status(Redacted.make(BASE_RPC), { network: "eip155:8453", timeoutMs: 2_000, logBlocks: 10_000n, logChunk: 4_000n })

const address = () => privateKeyToAccount(generatePrivateKey()).address
const nonce = () => toHex(crypto.getRandomValues(new Uint8Array(32)))
const TX = `0x${"ab".repeat(32)}` as Hex
const OTHER_TX = `0x${"cd".repeat(32)}` as Hex

/** A pending live Base sale and the authorization it was signed for. */
const baseSale = (fields: Partial<Sale> = {}) => {
  const from = address()
  const n = nonce()
  const payTo = address()
  const sale = aSale({ paymentKey: `eip155:8453:eip3009:${from.toLowerCase()}:${n}`, payer: from, payTo, amount: AtomicAmount.make(12_340_000n), ...fields })
  return { sale, authorization: { from, to: payTo, value: 12_340_000n, nonce: n } }
}

describe("the Base status reader", () => {
  it.effect("an unused nonce is unsettled (it may still settle until validBefore)", () =>
    Effect.gen(function*() {
      const { sale } = baseSale()
      expect(yield* read(sale)).toEqual({ _tag: "Unsettled" })
    }))

  it.effect("the sale's own transfer, final, settles it with that transaction", () =>
    Effect.gen(function*() {
      const { authorization, sale } = baseSale()
      landTransfer(authorization, { tx: TX, block: LATEST_BLOCK - 10n })
      expect(yield* read(sale)).toEqual({ _tag: "Settled", transaction: TX })
    }))

  it.effect("the sale's own transfer in exactly the finalized block settles; one block above it is unknown (a reorg may still drop it)", () =>
    Effect.gen(function*() {
      const { authorization, sale } = baseSale()
      landTransfer(authorization, { tx: TX, block: LATEST_BLOCK - 10n })
      chain.finalized = LATEST_BLOCK - 10n
      expect(yield* read(sale)).toEqual({ _tag: "Settled", transaction: TX })
      chain.finalized = LATEST_BLOCK - 11n
      const status = yield* read(sale)
      expect(status).toEqual({ _tag: "NotFinal", reason: "the nonce's transfer is on chain but not final yet" })
    }))

  it.effect("a nonce twin: the payer's other authorization with the same nonce, to another address, fails the sale (nothing reached payTo)", () =>
    Effect.gen(function*() {
      const { authorization, sale } = baseSale()
      landTransfer({ ...authorization, to: address() }, { tx: OTHER_TX, block: LATEST_BLOCK - 10n })
      expect(yield* read(sale)).toEqual({ _tag: "Failed", reason: "authorization_used_for_another_transfer" })
    }))

  it.effect("a nonce twin to payTo for one unit less, or one more, is not the sale's transfer either", () =>
    Effect.gen(function*() {
      for (const value of [12_339_999n, 12_340_001n, 0n]) {
        resetChain()
        const { authorization, sale } = baseSale()
        landTransfer({ ...authorization, value }, { tx: OTHER_TX, block: LATEST_BLOCK - 10n })
        expect(yield* read(sale), String(value)).toEqual({ _tag: "Failed", reason: "authorization_used_for_another_transfer" })
      }
    }))

  it.effect("a nonce twin that is not final yet is not final (pending), never failed or settled", () =>
    Effect.gen(function*() {
      const { authorization, sale } = baseSale()
      landTransfer({ ...authorization, to: address() }, { tx: OTHER_TX, block: LATEST_BLOCK - 1n })
      chain.finalized = LATEST_BLOCK - 2n
      expect((yield* read(sale))._tag).toBe("NotFinal")
    }))

  it.effect("a cancelled authorization fails the sale once the cancellation is final; before, not final", () =>
    Effect.gen(function*() {
      const { authorization, sale } = baseSale()
      chain.canceled.set(keyOf(authorization.from, authorization.nonce), { tx: OTHER_TX, block: LATEST_BLOCK - 5n })
      chain.finalized = LATEST_BLOCK - 6n
      expect(yield* read(sale)).toEqual({ _tag: "NotFinal", reason: "the nonce's cancellation is on chain but not final yet" })
      chain.finalized = LATEST_BLOCK - 5n
      expect(yield* read(sale)).toEqual({ _tag: "Failed", reason: "authorization_canceled" })
    }))

  it.effect("a used nonce whose log is older than the searched blocks is unknown, never settled on the nonce alone", () =>
    Effect.gen(function*() {
      const { authorization, sale } = baseSale()
      landTransfer(authorization, { tx: TX, block: LATEST_BLOCK - 10_000n })
      expect(yield* read(sale)).toMatchObject({ _tag: "Unknown", reason: expect.stringContaining("searched blocks") })
    }))

  it.effect("the log is found in every chunk of the searched range, down to its oldest block", () =>
    Effect.gen(function*() {
      for (const block of [LATEST_BLOCK, LATEST_BLOCK - 3_999n, LATEST_BLOCK - 4_000n, LATEST_BLOCK - 8_500n, LATEST_BLOCK - 9_999n]) {
        resetChain()
        const { authorization, sale } = baseSale()
        landTransfer(authorization, { tx: TX, block })
        expect(yield* read(sale), String(LATEST_BLOCK - block)).toEqual({ _tag: "Settled", transaction: TX })
      }
    }))

  it.effect("a chain younger than the searched range is searched from block 0", () =>
    Effect.gen(function*() {
      const young = makeEip3009Status(Redacted.make(BASE_RPC), { network: "eip155:8453", timeoutMs: 2_000, logBlocks: LATEST_BLOCK * 2n, logChunk: LATEST_BLOCK })
      const { authorization, sale } = baseSale()
      landTransfer(authorization, { tx: TX, block: 0n })
      expect(yield* young(sale)).toEqual({ _tag: "Settled", transaction: TX })
    }))

  it.effect("a receipt that does not succeed, or does not hold the nonce's log, is unknown", () =>
    Effect.gen(function*() {
      const { authorization, sale } = baseSale()
      landTransfer(authorization, { tx: TX, block: LATEST_BLOCK - 10n })
      const receiptOf = (patch: Record<string, unknown>) => ({
        transactionHash: TX,
        transactionIndex: "0x1",
        blockHash: pad("0x1", { size: 32 }),
        blockNumber: toHex(LATEST_BLOCK - 10n),
        from: address(),
        to: BASE_USDC,
        cumulativeGasUsed: "0x1",
        gasUsed: "0x1",
        effectiveGasPrice: "0x1",
        contractAddress: null,
        logs: [],
        logsBloom: `0x${"0".repeat(512)}`,
        status: "0x1",
        type: "0x2",
        ...patch
      })
      server.use(http.post(BASE_RPC, async ({ request }) => {
        const body: any = await request.clone().json()
        if (body.method !== "eth_getTransactionReceipt") return undefined
        return HttpResponse.json({ jsonrpc: "2.0", id: body.id, result: receiptOf({ status: "0x0" }) })
      }))
      expect(yield* read(sale)).toMatchObject({ _tag: "Unknown", reason: expect.stringContaining("did not succeed") })
      server.resetHandlers()
      server.use(http.post(BASE_RPC, async ({ request }) => {
        const body: any = await request.clone().json()
        if (body.method !== "eth_getTransactionReceipt") return undefined
        return HttpResponse.json({ jsonrpc: "2.0", id: body.id, result: receiptOf({}) })
      }))
      expect(yield* read(sale)).toMatchObject({ _tag: "Unknown", reason: expect.stringContaining("does not hold") })
    }))

  it.effect("a cancellation whose receipt did not succeed is unknown", () =>
    Effect.gen(function*() {
      const { authorization, sale } = baseSale()
      chain.canceled.set(keyOf(authorization.from, authorization.nonce), { tx: OTHER_TX, block: LATEST_BLOCK - 5n })
      server.use(http.post(BASE_RPC, async ({ request }) => {
        const body: any = await request.clone().json()
        if (body.method !== "eth_getTransactionReceipt") return undefined
        return HttpResponse.json({ jsonrpc: "2.0", id: body.id, result: {
          transactionHash: OTHER_TX, transactionIndex: "0x1", blockHash: pad("0x1", { size: 32 }), blockNumber: toHex(LATEST_BLOCK - 5n),
          from: address(), to: BASE_USDC, cumulativeGasUsed: "0x1", gasUsed: "0x1", effectiveGasPrice: "0x1", contractAddress: null,
          logs: [], logsBloom: `0x${"0".repeat(512)}`, status: "0x0", type: "0x2"
        } })
      }))
      expect(yield* read(sale)).toMatchObject({ _tag: "Unknown", reason: expect.stringContaining("did not succeed") })
    }))

  it.effect("no answer, or an error answer, is unknown; the URL and its key show nowhere", () =>
    Effect.gen(function*() {
      const { authorization, sale } = baseSale()
      landTransfer(authorization, { tx: TX, block: LATEST_BLOCK - 10n })
      chain.down = true
      const down = yield* read(sale)
      expect(down).toEqual({ _tag: "Unknown", reason: "the Base RPC endpoint did not answer" })
      expect(JSON.stringify(down)).not.toContain("KEY-0123456789")
      chain.down = false
      // Each call the reader makes, failing alone, leaves the answer unknown.
      for (const method of ["eth_call", "eth_blockNumber", "eth_getLogs", "eth_getTransactionReceipt", "eth_getBlockByNumber"]) {
        server.resetHandlers()
        server.use(http.post(BASE_RPC, async ({ request }) => {
          const body: any = await request.clone().json()
          return body.method === method ? HttpResponse.json({ jsonrpc: "2.0", id: body.id, error: { code: -32000, message: "boom" } }) : undefined
        }))
        expect((yield* read(sale))._tag, method).toBe("Unknown")
      }
    }))

  it.effect("a sale of another network, a payment key that is not an EIP-3009 one, or an asset that is not an address is unknown, and the chain is not asked", () =>
    Effect.gen(function*() {
      const { sale } = baseSale()
      const bad = [
        { ...sale, network: "eip155:84532" },
        { ...sale, paymentKey: `eip155:8453:solana:${"1".repeat(64)}` },
        { ...sale, paymentKey: `${sale.paymentKey}:extra` },
        { ...sale, paymentKey: "eip155:8453:eip3009:0x1234:0x00" },
        { ...sale, paymentKey: `eip155:8453:eip3009:${sale.payer}` },
        { ...sale, paymentKey: `eip155:8453:eip3009:${sale.payer}:0x${"0".repeat(62)}` },
        { ...sale, paymentKey: `eip155:8453:eip3009:${sale.payer}:${"z".repeat(66)}` },
        { ...sale, asset: "USDC" }
      ] as Array<Sale>
      // A sale of another network, keyed for its own network (the reader serves one network).
      bad.push({ ...sale, network: "eip155:84532", paymentKey: sale.paymentKey.replace("eip155:8453", "eip155:84532") } as Sale)
      // A key that names another network of the same length (the network is part of the key).
      bad.push({ ...sale, paymentKey: sale.paymentKey.replace("eip155:8453", "eip155:8888") } as Sale)
      for (const s of bad) {
        expect(yield* read(s), s.paymentKey).toEqual({ _tag: "Unknown", reason: "not an EIP-3009 payment on this network" })
      }
      expect(chain.calls).toEqual([])
    }))

  it.effect("a payment key or asset whose address is written in upper case (no checksum) is read all the same", () =>
    Effect.gen(function*() {
      const { authorization, sale } = baseSale()
      landTransfer(authorization, { tx: TX, block: LATEST_BLOCK - 10n })
      const upper = (address: string) => `0x${address.slice(2).toUpperCase()}`
      expect(yield* read({ ...sale, paymentKey: `eip155:8453:eip3009:${upper(authorization.from)}:${authorization.nonce}` } as Sale)).toEqual({ _tag: "Settled", transaction: TX })
      expect(yield* read({ ...sale, asset: upper(BASE_USDC) } as Sale)).toEqual({ _tag: "Settled", transaction: TX })
    }))

  it.effect("the log search keeps within the provider's range cap, chunk by chunk, and covers exactly the last logBlocks blocks", () =>
    Effect.gen(function*() {
      chain.maxLogRange = 4_000n
      const { authorization, sale } = baseSale()
      landTransfer(authorization, { tx: TX, block: LATEST_BLOCK - 9_999n })
      expect(yield* read(sale)).toEqual({ _tag: "Settled", transaction: TX })
      expect(chain.calls.filter((c) => c === "base:eth_getLogs")).toHaveLength(3)
      // Two chunks and two blocks: the last chunk is the two oldest blocks alone, never a wider range.
      const near = makeEip3009Status(Redacted.make(BASE_RPC), { network: "eip155:8453", timeoutMs: 2_000, logBlocks: 8_002n, logChunk: 4_000n })
      resetChain()
      chain.maxLogRange = 4_000n
      const edge = baseSale()
      landTransfer(edge.authorization, { tx: TX, block: LATEST_BLOCK - 8_001n })
      expect(yield* near(edge.sale)).toEqual({ _tag: "Settled", transaction: TX })
      // logBlocks = the chain's length + 1 reaches block 0; = its length stops at block 1.
      const whole = (logBlocks: bigint) =>
        makeEip3009Status(Redacted.make(BASE_RPC), { network: "eip155:8453", timeoutMs: 2_000, logBlocks, logChunk: LATEST_BLOCK * 2n })
      chain.maxLogRange = null
      for (const [block, logBlocks, tag] of [[0n, LATEST_BLOCK + 1n, "Settled"], [0n, LATEST_BLOCK, "Unknown"], [1n, LATEST_BLOCK, "Settled"]] as const) {
        resetChain()
        const { authorization, sale } = baseSale()
        landTransfer(authorization, { tx: TX, block })
        const status = yield* whole(logBlocks)(sale)
        expect(status._tag, `block ${block}, logBlocks ${logBlocks}`).toBe(tag)
      }
    }))

  it.effect("each call is made once: an endpoint that fails a call is unknown for this read (the reconciler comes back), never retried into a burst", () =>
    Effect.gen(function*() {
      const read = makeEip3009Status(Redacted.make(BASE_RPC), { network: "eip155:8453", timeoutMs: 2_000, logBlocks: 10_000n, logChunk: 4_000n })
      const { authorization, sale } = baseSale()
      landTransfer(authorization, { tx: TX, block: LATEST_BLOCK - 10n })
      let failed = 0
      server.use(http.post(BASE_RPC, async ({ request }) => {
        const body: any = await request.clone().json()
        if (body.method !== "eth_call" || failed > 0) return undefined
        failed++
        return new HttpResponse("busy", { status: 503 })
      }))
      expect(yield* read(sale)).toEqual({ _tag: "Unknown", reason: "the Base RPC endpoint did not answer" })
      expect(chain.calls.filter((c) => c === "base:eth_call")).toHaveLength(0)
      expect(yield* read(sale)).toEqual({ _tag: "Settled", transaction: TX })
    }))
})

const AU = encodeEventTopics({ abi: USDC, eventName: "AuthorizationUsed" })[0]!
const TRANSFER = encodeEventTopics({ abi: USDC, eventName: "Transfer" })[0]!
const topic = (a: string) => pad(a.toLowerCase() as Hex, { size: 32 })
const amount = (v: bigint) => pad(toHex(v), { size: 32 })

describe("transferInReceipt: the logs that prove a sale's transfer", () => {
  const from = address()
  const payTo = address()
  const n = nonce()
  const sale = { asset: BASE_USDC, payTo, amount: AtomicAmount.make(5_000_000n) }
  const authorization = { authorizer: from, nonce: n }
  const used = (who = from, at: string = BASE_USDC, what = n) => ({ address: at as Hex, topics: [AU, topic(who), what] as [Hex, ...Array<Hex>], data: "0x" as Hex })
  const transfer = (to = payTo, value = 5_000_000n, at: string = BASE_USDC, who = from) => ({ address: at as Hex, topics: [TRANSFER, topic(who), topic(to)] as [Hex, ...Array<Hex>], data: amount(value) })

  it("AuthorizationUsed then Transfer(payer, payTo, amount), both USDC's: matches (case does not matter)", () => {
    expect(transferInReceipt([used(), transfer()], sale, authorization)).toBe("matches")
    expect(transferInReceipt([used(), transfer()], { ...sale, asset: BASE_USDC.toLowerCase(), payTo: payTo.toUpperCase().replace("0X", "0x") }, authorization)).toBe("matches")
  })

  it("the nonce's log absent (another payer's, another nonce's, or a look-alike contract's): absent", () => {
    expect(transferInReceipt([], sale, authorization)).toBe("absent")
    expect(transferInReceipt([used(address()), transfer()], sale, authorization)).toBe("absent")
    expect(transferInReceipt([used(from, BASE_USDC, nonce()), transfer()], sale, authorization)).toBe("absent")
    expect(transferInReceipt([used(from, address()), transfer()], sale, authorization)).toBe("absent")
    expect(transferInReceipt([{ ...used(), topics: [TRANSFER, topic(from), n] as [Hex, ...Array<Hex>] }, transfer()], sale, authorization)).toBe("absent")
  })

  it("a bundle: the nonce's transfer went elsewhere and another transfer paid payTo later in the same transaction: not the sale's", () => {
    const other = nonce()
    const logs = [used(), transfer(address()), used(from, BASE_USDC, other), transfer()]
    expect(transferInReceipt(logs, sale, authorization)).toBe("other_transfer")
    // The same bundle is the proof for the other nonce's sale.
    expect(transferInReceipt(logs, sale, { authorizer: from, nonce: other as Hex })).toBe("matches")
  })

  it("whatever follows the nonce's log but the exact transfer is another transfer", () => {
    for (const [name, next] of [
      ["nothing", undefined],
      ["to another address", transfer(address())],
      ["one unit less", transfer(payTo, 4_999_999n)],
      ["one unit more", transfer(payTo, 5_000_001n)],
      ["another token's Transfer", transfer(payTo, 5_000_000n, address())],
      ["from another payer", transfer(payTo, 5_000_000n, BASE_USDC, address())],
      ["an ERC-721-shaped Transfer (four topics)", { ...transfer(), topics: [...transfer().topics, topic(payTo)] as [Hex, ...Array<Hex>] }],
      ["another event", { ...transfer(), topics: [AU, topic(from), topic(payTo)] as [Hex, ...Array<Hex>] }],
      ["malformed data", { ...transfer(), data: "0x01" as Hex }],
      ["data that is not hex", { ...transfer(), data: `0x${"zz".repeat(32)}` as Hex }]
    ] as const) {
      const logs = next === undefined ? [used()] : [used(), next]
      expect(transferInReceipt(logs, sale, authorization), name).toBe("other_transfer")
    }
    expect(transferInReceipt([used(), transfer()], { ...sale, payTo: "not an address" }, authorization)).toBe("other_transfer")
    // The right value, not ABI-encoded as 32 bytes.
    expect(transferInReceipt([used(), { ...transfer(), data: toHex(5_000_000n) }], sale, authorization)).toBe("other_transfer")
  })

  it("logs with fewer topics than the events have are read without error", () => {
    const bare = { address: BASE_USDC as Hex, topics: [AU] as [Hex, ...Array<Hex>], data: "0x" as Hex }
    expect(transferInReceipt([bare, transfer()], sale, authorization)).toBe("absent")
    expect(transferInReceipt([used(), { ...transfer(), topics: [TRANSFER, topic(from)] as [Hex, ...Array<Hex>] }], sale, authorization)).toBe("other_transfer")
    expect(transferInReceipt([{ ...used(), topics: [] as unknown as [Hex] }, transfer()], sale, authorization)).toBe("absent")
  })
})
