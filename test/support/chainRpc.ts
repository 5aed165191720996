/*
 * The chains' JSON-RPC endpoints as msw handlers, shaped after the public JSON-RPC docs and modelling what the
 * status readers depend on as the chains really behave:
 * - Base (USDC's FiatToken V2): an EIP-3009 nonce is unique per payer only — nothing ties it to `to` or
 *   `value` — so `authorizationState(from, nonce)` is true after ANY authorization of that payer with that
 *   nonce was used (`transferWithAuthorization` to whoever it names, or `cancelAuthorization`). A used transfer's
 *   receipt holds `AuthorizationUsed(from, nonce)` followed by `Transfer(from, to, value)`; a cancellation's holds
 *   `AuthorizationCanceled(from, nonce)` only. `eth_getLogs`, `eth_getTransactionReceipt`, `eth_blockNumber` and
 *   `eth_getBlockByNumber("finalized")` answer from that.
 * - Solana: a transaction is known by its first signature only (its id: the fee payer's). `getSignatureStatuses`
 *   and `getTransaction` answer for ids alone; `getSignaturesForAddress` lists, newest first, the ids of the
 *   transactions whose account keys include the address.
 * Tests say what the chains hold through `chain` (and `landTransfer`, `landSolana`).
 */
import { expect } from "@effect/vitest"
import {
  getBase58Decoder,
  getBase64Decoder,
  getBase64Encoder,
  getCompiledTransactionMessageDecoder,
  getTransactionDecoder,
  getTransactionEncoder,
  type SignatureBytes
} from "@solana/kit"
import { http, HttpResponse } from "msw"
import { decodeFunctionData, encodeEventTopics, type Hex, pad, parseAbi, toHex } from "viem"

export const BASE_USDC = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"
export const LATEST_BLOCK = 30_000_000n

export const USDC = parseAbi([
  "function authorizationState(address authorizer, bytes32 nonce) view returns (bool)",
  "event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)",
  "event AuthorizationCanceled(address indexed authorizer, bytes32 indexed nonce)",
  "event Transfer(address indexed from, address indexed to, uint256 value)"
])
const AUTHORIZATION_USED = encodeEventTopics({ abi: USDC, eventName: "AuthorizationUsed" })[0]!
const AUTHORIZATION_CANCELED = encodeEventTopics({ abi: USDC, eventName: "AuthorizationCanceled" })[0]!
const TRANSFER = encodeEventTopics({ abi: USDC, eventName: "Transfer" })[0]!

/** An authorization used by a transfer: to whom and how much it moved, in which transaction and block. */
export interface UsedTransfer {
  readonly tx: Hex
  readonly block: bigint
  /** The recipient the used authorization named (not necessarily the sale's payTo). */
  readonly to: string
  /** The amount it moved, atomic units. */
  readonly value: bigint
}

/** A Solana transaction on chain: its wire form (every signature filled), outcome and commitment. */
export interface LandedSolana {
  readonly wire: string
  readonly err: unknown
  readonly confirmationStatus: "processed" | "confirmed" | "finalized"
  /** Unix seconds; null when the node does not know it (as RPC nodes answer for some blocks). */
  readonly blockTime: number | null
  readonly slot: number
}

/** What the mocked chains know. */
export const chain = {
  /** `<authorizer lowercase>:<nonce lowercase>` → the transfer that used it (whatever `to` and `value` it named). */
  used: new Map<string, UsedTransfer>(),
  /** The same for authorizations the payer cancelled (`cancelAuthorization`: nonce used, nothing moved). */
  canceled: new Map<string, { tx: Hex; block: bigint }>(),
  /** Base's `finalized` block: blocks above it may still be reorganised away. Everything is final unless a test says otherwise. */
  finalized: LATEST_BLOCK,
  /** The most blocks one `eth_getLogs` may span, as providers cap it (null: no cap). */
  maxLogRange: null as bigint | null,
  /** Solana transactions on chain, oldest first. */
  solana: [] as Array<LandedSolana>,
  /** What `getLatestBlockhash` answers; null: a malformed answer (no value). */
  blockhash: { blockhash: "4sGjMW1sUnHzSxGspuhpqLDx6wiyjNtZAMdL4VZHirAn", lastValidBlockHeight: 290_000_150 } as { blockhash: string; lastValidBlockHeight: number } | null,
  down: false,
  calls: [] as Array<string>
}
export const keyOf = (authorizer: string, nonce: string) => `${authorizer.toLowerCase()}:${nonce.toLowerCase()}`

/** Resets what the chains hold (between tests). */
export const resetChain = () => {
  chain.used.clear()
  chain.canceled.clear()
  chain.solana.length = 0
  chain.finalized = LATEST_BLOCK
  chain.maxLogRange = null
  chain.down = false
  chain.calls.length = 0
}

/** An EIP-3009 authorization (the fields a transfer's logs show) used on chain by `transferWithAuthorization`. */
export const landTransfer = (
  authorization: { readonly from: string; readonly to: string; readonly value: string | bigint; readonly nonce: string },
  at: { readonly tx: Hex; readonly block: bigint }
) => chain.used.set(keyOf(authorization.from, authorization.nonce), { ...at, to: authorization.to, value: BigInt(authorization.value) })

/** A Solana transaction's id (first signature) and account keys. */
const solanaFacts = (wire: string) => {
  const decoded = getTransactionDecoder().decode(getBase64Encoder().encode(wire))
  const signatures = Object.values(decoded.signatures)
  const first = signatures[0]
  const message = getCompiledTransactionMessageDecoder().decode(decoded.messageBytes)
  return {
    id: first == null ? "" : getBase58Decoder().decode(first),
    accounts: message.staticAccounts.map(String)
  }
}

/**
 * The buyer's partially signed payment transaction (`{ transaction }`, fee payer's slot empty) as it lands once
 * the fee payer (the facilitator) has signed slot 0: its id is that new first signature. Answers the id.
 */
export const landSolana = (
  payload: { readonly transaction: string },
  outcome: Partial<Omit<LandedSolana, "wire">> = {}
): string => {
  const decoded = getTransactionDecoder().decode(getBase64Encoder().encode(payload.transaction))
  const [feePayer] = Object.keys(decoded.signatures)
  const signatures = { ...decoded.signatures, [feePayer!]: crypto.getRandomValues(new Uint8Array(64)) as SignatureBytes }
  const wire = getBase64Decoder().decode(getTransactionEncoder().encode({ ...decoded, signatures }))
  chain.solana.push({
    wire,
    err: null,
    confirmationStatus: "finalized",
    blockTime: Math.floor(Date.now() / 1000),
    slot: 321 + chain.solana.length,
    ...outcome
  })
  return solanaFacts(wire).id
}

const rpcResult = (id: unknown, result: unknown) => HttpResponse.json({ jsonrpc: "2.0", id, result })
const rpcError = (id: unknown, code: number, message: string) => HttpResponse.json({ jsonrpc: "2.0", id, error: { code, message } })

/**
 * What every JSON-RPC node checks before the method: a JSON content type (else 415) and a JSON-RPC 2.0 request
 * (else -32600). Answers the refusal, or undefined.
 */
const refusal = (request: Request, body: any) => {
  if (!(request.headers.get("content-type") ?? "").startsWith("application/json")) {
    return new HttpResponse("Supported Content-Types are application/json", { status: 415 })
  }
  if (body?.jsonrpc !== "2.0" || typeof body.method !== "string") return rpcError(body?.id ?? null, -32600, "Invalid request")
  return undefined
}

/** Solana's commitment levels; anything else is an invalid parameter (-32602). */
const COMMITMENTS = ["processed", "confirmed", "finalized"]

const topicOf = (address: string) => pad(address.toLowerCase() as Hex, { size: 32 })

/** The logs a used authorization's transaction emitted, in order. */
const logsOf = (authorizer: string, nonce: string) => {
  const key = keyOf(authorizer, nonce)
  const used = chain.used.get(key)
  if (used !== undefined) {
    return [
      { topics: [AUTHORIZATION_USED, topicOf(authorizer), nonce.toLowerCase()], data: "0x", at: used },
      { topics: [TRANSFER, topicOf(authorizer), topicOf(used.to)], data: pad(toHex(used.value), { size: 32 }), at: used }
    ]
  }
  const canceled = chain.canceled.get(key)
  return canceled === undefined ? [] : [{ topics: [AUTHORIZATION_CANCELED, topicOf(authorizer), nonce.toLowerCase()], data: "0x", at: canceled }]
}

const rpcLog = (log: { topics: Array<string>; data: string; at: { tx: Hex; block: bigint } }, index: number) => ({
  address: BASE_USDC.toLowerCase(),
  topics: log.topics,
  data: log.data,
  blockNumber: toHex(log.at.block),
  blockHash: pad(toHex(log.at.block), { size: 32 }),
  transactionHash: log.at.tx,
  transactionIndex: "0x1",
  logIndex: toHex(index + 2),
  removed: false
})

/** Every authorization on chain, used or cancelled, as `[authorizer, nonce]`. */
const authorizations = () =>
  [...chain.used.keys(), ...chain.canceled.keys()].map((key) => key.split(":") as [string, string])

/** msw handlers for the two RPC endpoints (their URLs stand for providers' URLs holding an API key). */
export const chainRpcHandlers = (BASE_RPC: string, SOLANA_RPC: string) => [
  http.post(BASE_RPC, async ({ request }) => {
    const body: any = await request.json()
    chain.calls.push(`base:${body.method}`)
    if (chain.down) return new HttpResponse("upstream unavailable", { status: 503 })
    const refused = refusal(request, body)
    if (refused !== undefined) return refused
    switch (body.method) {
      case "eth_chainId":
        return rpcResult(body.id, "0x2105")
      case "eth_blockNumber":
        return rpcResult(body.id, toHex(LATEST_BLOCK))
      case "eth_call": {
        const [{ data, to }] = body.params
        expect(String(to).toLowerCase()).toBe(BASE_USDC.toLowerCase())
        const { args, functionName } = decodeFunctionData({ abi: USDC, data })
        expect(functionName).toBe("authorizationState")
        const [authorizer, nonce] = args as [string, string]
        const spent = chain.used.has(keyOf(authorizer, nonce)) || chain.canceled.has(keyOf(authorizer, nonce))
        return rpcResult(body.id, pad(spent ? "0x1" : "0x0"))
      }
      case "eth_getLogs": {
        const [{ address, fromBlock, toBlock, topics }] = body.params
        expect(String(address).toLowerCase()).toBe(BASE_USDC.toLowerCase())
        expect([AUTHORIZATION_USED, AUTHORIZATION_CANCELED]).toContain(topics[0])
        if (chain.maxLogRange !== null && BigInt(toBlock) - BigInt(fromBlock) + 1n > chain.maxLogRange) {
          return rpcError(body.id, -32005, `query exceeds max block range ${chain.maxLogRange}`)
        }
        const authorizer = `0x${String(topics[1]).slice(-40)}`
        const logs = logsOf(authorizer, topics[2])
          .map(rpcLog)
          .filter((log) => log.topics[0] === topics[0])
          .filter((log) => BigInt(log.blockNumber) >= BigInt(fromBlock) && BigInt(log.blockNumber) <= BigInt(toBlock))
        return rpcResult(body.id, logs)
      }
      case "eth_getTransactionReceipt": {
        const [hash] = body.params as [string]
        const found = authorizations().find(([a, n]) => logsOf(a, n)[0]?.at.tx.toLowerCase() === hash.toLowerCase())
        if (found === undefined) return rpcResult(body.id, null)
        const logs = logsOf(...found).map(rpcLog)
        return rpcResult(body.id, {
          transactionHash: hash,
          transactionIndex: "0x1",
          blockHash: logs[0]!.blockHash,
          blockNumber: logs[0]!.blockNumber,
          from: `0x${"fa".repeat(20)}`,
          to: BASE_USDC.toLowerCase(),
          cumulativeGasUsed: "0x5208",
          gasUsed: "0x5208",
          effectiveGasPrice: "0x1",
          contractAddress: null,
          logs,
          logsBloom: `0x${"0".repeat(512)}`,
          status: "0x1",
          type: "0x2"
        })
      }
      case "eth_getBlockByNumber": {
        const [tag] = body.params as [string, boolean]
        expect(tag).toBe("finalized")
        return rpcResult(body.id, {
          number: toHex(chain.finalized),
          hash: pad(toHex(chain.finalized), { size: 32 }),
          parentHash: pad(toHex(chain.finalized - 1n), { size: 32 }),
          timestamp: toHex(Math.floor(Date.now() / 1000) - 1_200),
          nonce: "0x0000000000000000",
          difficulty: "0x0",
          gasLimit: "0x1c9c380",
          gasUsed: "0x0",
          miner: `0x${"00".repeat(20)}`,
          extraData: "0x",
          baseFeePerGas: "0x1",
          logsBloom: `0x${"0".repeat(512)}`,
          transactionsRoot: pad("0x0", { size: 32 }),
          stateRoot: pad("0x0", { size: 32 }),
          receiptsRoot: pad("0x0", { size: 32 }),
          sha3Uncles: pad("0x0", { size: 32 }),
          size: "0x0",
          totalDifficulty: null,
          uncles: [],
          transactions: []
        })
      }
      default:
        return HttpResponse.json({ jsonrpc: "2.0", id: body.id, error: { code: -32601, message: "method not found" } })
    }
  }),
  http.post(SOLANA_RPC, async ({ request }) => {
    const body: any = await request.json()
    chain.calls.push(`solana:${body.method}`)
    if (chain.down) return new HttpResponse("upstream unavailable", { status: 503 })
    const refused = refusal(request, body)
    if (refused !== undefined) return refused
    const landed = chain.solana.map((tx) => ({ ...tx, ...solanaFacts(tx.wire) }))
    const visible = (tx: LandedSolana, commitment: string | undefined) =>
      commitment === "finalized" ? tx.confirmationStatus === "finalized" : commitment === "processed" || tx.confirmationStatus !== "processed"
    switch (body.method) {
      case "getLatestBlockhash": {
        expect(body.params).toEqual([{ commitment: "confirmed" }])
        if (chain.blockhash === null) return rpcResult(body.id, { context: { slot: 400 } })
        return rpcResult(body.id, { context: { slot: 400 }, value: chain.blockhash })
      }
      case "getSignatureStatuses": {
        // Known by id (first signature) only.
        const value = (body.params[0] as Array<string>).map((sig) => {
          const tx = landed.find((t) => t.id === sig)
          return tx === undefined ? null : { slot: tx.slot, confirmations: null, err: tx.err, confirmationStatus: tx.confirmationStatus }
        })
        return rpcResult(body.id, { context: { slot: 400 }, value })
      }
      case "getSignaturesForAddress": {
        const [address, config = {}] = body.params as [string, { limit?: number; before?: string; commitment?: string }]
        // getSignaturesForAddress takes confirmed or finalized only.
        if (config.commitment !== undefined && !["confirmed", "finalized"].includes(config.commitment)) return rpcError(body.id, -32602, "Invalid params: commitment")
        let newestFirst = landed.filter((t) => t.accounts.includes(address) && visible(t, config.commitment ?? "finalized")).reverse()
        if (config.before !== undefined) {
          const at = newestFirst.findIndex((t) => t.id === config.before)
          newestFirst = at === -1 ? [] : newestFirst.slice(at + 1)
        }
        const limit = Math.min(config.limit ?? 1_000, 1_000)
        return rpcResult(body.id, newestFirst.slice(0, limit).map((t) => ({
          signature: t.id,
          slot: t.slot,
          err: t.err,
          memo: null,
          blockTime: t.blockTime,
          confirmationStatus: t.confirmationStatus
        })))
      }
      case "getTransaction": {
        const [id, config = {}] = body.params as [string, { encoding?: string; commitment?: string; maxSupportedTransactionVersion?: number }]
        expect(config.encoding).toBe("base64")
        if (config.commitment !== undefined && !COMMITMENTS.slice(1).includes(config.commitment)) return rpcError(body.id, -32602, "Invalid params: commitment")
        const tx = landed.find((t) => t.id === id && visible(t, config.commitment ?? "finalized"))
        if (tx === undefined) return rpcResult(body.id, null)
        if (config.maxSupportedTransactionVersion === undefined) {
          // A version-0 transaction without maxSupportedTransactionVersion is an error, as on a real node.
          return HttpResponse.json({ jsonrpc: "2.0", id: body.id, error: { code: -32015, message: "Transaction version (0) is not supported" } })
        }
        return rpcResult(body.id, {
          slot: tx.slot,
          blockTime: tx.blockTime,
          version: 0,
          meta: { err: tx.err, fee: 5000, preBalances: [], postBalances: [], status: tx.err === null ? { Ok: null } : { Err: tx.err } },
          transaction: [tx.wire, "base64"]
        })
      }
      default:
        return HttpResponse.json({ jsonrpc: "2.0", id: body.id, error: { code: -32601, message: "method not found" } })
    }
  })
]
