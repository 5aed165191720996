/*
 * The chains' JSON-RPC endpoints as msw handlers, shaped after the public JSON-RPC docs: Base (`eth_call`
 * answering USDC's `authorizationState` with an ABI-encoded bool, `eth_blockNumber`, `eth_getLogs` for
 * `AuthorizationUsed`) and Solana (`getSignatureStatuses`, `getLatestBlockhash`). Tests say what the chains know through `chain`.
 */
import { expect } from "@effect/vitest"
import { http, HttpResponse } from "msw"
import { decodeFunctionData, encodeEventTopics, type Hex, pad, parseAbi, toHex } from "viem"

export const BASE_USDC = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"
export const LATEST_BLOCK = 30_000_000n

export const USDC = parseAbi([
  "function authorizationState(address authorizer, bytes32 nonce) view returns (bool)",
  "event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)",
  "event AuthorizationCanceled(address indexed authorizer, bytes32 indexed nonce)"
])
const AUTHORIZATION_USED = encodeEventTopics({ abi: USDC, eventName: "AuthorizationUsed" })[0]!
const AUTHORIZATION_CANCELED = encodeEventTopics({ abi: USDC, eventName: "AuthorizationCanceled" })[0]!

/** What the mocked chains know. */
export const chain = {
  /** `<authorizer lowercase>:<nonce lowercase>` → the transaction and block that used it. */
  used: new Map<string, { tx: Hex; block: bigint }>(),
  /** The same for authorizations the payer cancelled (`cancelAuthorization`: nonce used, nothing moved). */
  canceled: new Map<string, { tx: Hex; block: bigint }>(),
  /** Solana signature → its status entry. */
  signatures: new Map<string, { err: unknown; confirmationStatus: string }>(),
  /** What `getLatestBlockhash` answers; null: a malformed answer (no value). */
  blockhash: { blockhash: "4sGjMW1sUnHzSxGspuhpqLDx6wiyjNtZAMdL4VZHirAn", lastValidBlockHeight: 290_000_150 } as { blockhash: string; lastValidBlockHeight: number } | null,
  down: false,
  calls: [] as Array<string>
}
export const keyOf = (authorizer: string, nonce: string) => `${authorizer.toLowerCase()}:${nonce.toLowerCase()}`

const rpcResult = (id: unknown, result: unknown) => HttpResponse.json({ jsonrpc: "2.0", id, result })

/** msw handlers for the two RPC endpoints (their URLs stand for providers' URLs holding an API key). */
export const chainRpcHandlers = (BASE_RPC: string, SOLANA_RPC: string) => [
  http.post(BASE_RPC, async ({ request }) => {
    const body: any = await request.json()
    chain.calls.push(`base:${body.method}`)
    if (chain.down) return new HttpResponse("upstream unavailable", { status: 503 })
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
        const authorizer = `0x${String(topics[1]).slice(-40)}`
        const hit = (topics[0] === AUTHORIZATION_USED ? chain.used : chain.canceled).get(keyOf(authorizer, topics[2]))
        const inRange = hit !== undefined && hit.block >= BigInt(fromBlock) && hit.block <= BigInt(toBlock)
        return rpcResult(body.id, inRange ? [{
          address: BASE_USDC.toLowerCase(),
          topics,
          data: "0x",
          blockNumber: toHex(hit.block),
          blockHash: pad("0xb10c", { size: 32 }),
          transactionHash: hit.tx,
          transactionIndex: "0x1",
          logIndex: "0x2",
          removed: false
        }] : [])
      }
      default:
        return HttpResponse.json({ jsonrpc: "2.0", id: body.id, error: { code: -32601, message: "method not found" } })
    }
  }),
  http.post(SOLANA_RPC, async ({ request }) => {
    const body: any = await request.json()
    chain.calls.push(`solana:${body.method}`)
    if (chain.down) return new HttpResponse("upstream unavailable", { status: 503 })
    if (body.method === "getLatestBlockhash") {
      expect(body.params).toEqual([{ commitment: "confirmed" }])
      if (chain.blockhash === null) return rpcResult(body.id, { context: { slot: 400 } })
      return rpcResult(body.id, { context: { slot: 400 }, value: chain.blockhash })
    }
    expect(body.method).toBe("getSignatureStatuses")
    expect(body.params[1]).toEqual({ searchTransactionHistory: true })
    const value = (body.params[0] as Array<string>).map((sig) => {
      const s = chain.signatures.get(sig)
      return s === undefined ? null : { slot: 321, confirmations: null, ...s }
    })
    return rpcResult(body.id, { context: { slot: 400 }, value })
  })
]
