import { Effect, Redacted } from "effect"
import { createPublicClient, http, type Hex, isAddress, isHex, parseAbi } from "viem"
import type { Sale } from "../../domain/Sale.js"
import type { SettlementStatus } from "../../ports/PaymentFacilitator.js"

/** The EIP-3009 members of USDC a status read needs (FiatTokenV2). */
const USDC_EIP3009 = parseAbi([
  "function authorizationState(address authorizer, bytes32 nonce) view returns (bool)",
  "event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)",
  "event AuthorizationCanceled(address indexed authorizer, bytes32 indexed nonce)"
])
const [, AUTHORIZATION_USED, AUTHORIZATION_CANCELED] = USDC_EIP3009

/** Where and how the EIP-3009 status reader asks the chain. */
export interface Eip3009StatusOptions {
  /** The CAIP-2 network this RPC endpoint serves (only its sales are read). */
  readonly network: string
  /** Limit on each RPC call. */
  readonly timeoutMs: number
  /** How far back (in blocks) the `AuthorizationUsed` log is looked for, to name the transaction. */
  readonly logBlocks: bigint
  /** Blocks per `eth_getLogs` call (public endpoints cap the range of one call). */
  readonly logChunk: bigint
}

/** A sale's EIP-3009 authorization, from its payment key `<network>:eip3009:<from>:<nonce>`. */
export const authorizationOf = (sale: Sale): { readonly authorizer: Hex; readonly nonce: Hex } | null => {
  const prefix = `${sale.network}:eip3009:`
  if (!sale.paymentKey.startsWith(prefix)) return null
  const [authorizer, nonce, ...rest] = sale.paymentKey.slice(prefix.length).split(":")
  if (rest.length > 0 || authorizer === undefined || nonce === undefined) return null
  if (!isAddress(authorizer, { strict: false }) || !isHex(nonce) || nonce.length !== 66) return null
  return { authorizer, nonce }
}

const unknown = (reason: string): SettlementStatus => ({ _tag: "Unknown", reason })

/**
 * Reads whether a Base sale's EIP-3009 authorization was used, from the USDC contract itself
 * (`authorizationState`), over JSON-RPC at `url` with viem. Used by the transfer (its `AuthorizationUsed` log
 * within the last `logBlocks` blocks) → settled with that transaction; unused, or used by the payer's
 * cancellation (`AuthorizationCanceled`) → unsettled; used with neither log found, or no answer → unknown. The URL may hold an API key: it is opened only
 * here, and no error text of viem (which quotes the URL) is ever passed on.
 */
export const makeEip3009Status = (url: Redacted.Redacted<string>, options: Eip3009StatusOptions) => {
  const client = createPublicClient({
    transport: http(Redacted.value(url), { timeout: options.timeoutMs, retryCount: 0 })
  })

  const rpc = <A>(run: () => Promise<A>) =>
    Effect.tryPromise({ try: run, catch: () => "rpc_failed" as const }).pipe(
      // viem's own timeout covers each request; this one also bounds a call that never starts to answer.
      Effect.timeoutFail({ duration: options.timeoutMs + 1_000, onTimeout: () => "rpc_failed" as const })
    )

  /** The transaction whose log (`AuthorizationUsed` or `AuthorizationCanceled`) marks the nonce used, newest blocks first. */
  const transactionOf = (asset: Hex, authorizer: Hex, nonce: Hex, event: typeof AUTHORIZATION_USED | typeof AUTHORIZATION_CANCELED) =>
    Effect.gen(function*() {
      const latest = yield* rpc(() => client.getBlockNumber({ cacheTime: 0 }))
      const oldest = latest > options.logBlocks ? latest - options.logBlocks + 1n : 0n
      for (let to = latest; to >= oldest; to -= options.logChunk) {
        const from = to - options.logChunk + 1n > oldest ? to - options.logChunk + 1n : oldest
        const logs = yield* rpc(() =>
          client.getLogs({ address: asset, event, args: { authorizer, nonce }, fromBlock: from, toBlock: to })
        )
        const found = logs.find((log) => log.transactionHash !== null)
        if (found !== undefined) return found.transactionHash as string | null
        if (from === oldest) break
      }
      return null
    }).pipe(Effect.either)

  return (sale: Sale): Effect.Effect<SettlementStatus> =>
    Effect.gen(function*() {
      const authorization = authorizationOf(sale)
      if (sale.network !== options.network || authorization === null || !isAddress(sale.asset, { strict: false })) {
        return unknown("not an EIP-3009 payment on this network")
      }
      const asset = sale.asset as Hex
      const used = yield* rpc(() =>
        client.readContract({
          address: asset,
          abi: USDC_EIP3009,
          functionName: "authorizationState",
          args: [authorization.authorizer, authorization.nonce]
        })
      ).pipe(Effect.either)
      if (used._tag === "Left") return unknown("the Base RPC endpoint did not answer")
      if (!used.right) return { _tag: "Unsettled" } as const
      // A used nonce is not yet money moved: the payer may have cancelled the authorization
      // (`cancelAuthorization` marks the nonce used and transfers nothing). Only the transfer's own log
      // (`AuthorizationUsed`, emitted by the transfer the payer signed, to the payee and amount it names)
      // settles the sale; a cancellation means it never will.
      const transfer = yield* transactionOf(asset, authorization.authorizer, authorization.nonce, AUTHORIZATION_USED)
      if (transfer._tag === "Left") return unknown("the Base RPC endpoint did not answer the log search")
      if (transfer.right !== null) return { _tag: "Settled", transaction: transfer.right } as const
      const cancel = yield* transactionOf(asset, authorization.authorizer, authorization.nonce, AUTHORIZATION_CANCELED)
      if (cancel._tag === "Right" && cancel.right !== null) return { _tag: "Unsettled" } as const
      return unknown("the nonce is used but neither its transfer nor a cancellation is within the searched blocks")
    }).pipe(Effect.withSpan("Eip3009Status.read"))
}
