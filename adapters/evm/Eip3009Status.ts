import { Effect, Redacted } from "effect"
import { createPublicClient, type Hex, http, isAddress, isHex, type Log, pad, parseAbi, toEventSelector } from "viem"
import type { Sale } from "../../domain/Sale.js"
import { AUTHORIZATION_CANCELED, AUTHORIZATION_USED_ELSEWHERE } from "../../domain/SettlementReasons.js"
import type { SettlementStatus } from "../../ports/PaymentFacilitator.js"

/** The EIP-3009 members of USDC a status read needs (FiatTokenV2), and ERC-20's `Transfer`. */
const USDC_EIP3009 = parseAbi([
  "function authorizationState(address authorizer, bytes32 nonce) view returns (bool)",
  "event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)",
  "event AuthorizationCanceled(address indexed authorizer, bytes32 indexed nonce)",
  "event Transfer(address indexed from, address indexed to, uint256 value)"
])
const [, AUTHORIZATION_USED_EVENT, AUTHORIZATION_CANCELED_EVENT, TRANSFER_EVENT] = USDC_EIP3009
const TRANSFER_TOPIC = toEventSelector(TRANSFER_EVENT)
const AUTHORIZATION_USED_TOPIC = toEventSelector(AUTHORIZATION_USED_EVENT)

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
  // Stryker disable next-line StringLiteral: defaults only for the type; an empty or any other text is refused below
  const [authorizer = "", nonce = "", ...rest] = sale.paymentKey.slice(prefix.length).split(":")
  if (rest.length > 0 || !isAddress(authorizer, { strict: false }) || !isHex(nonce) || nonce.length !== 66) return null
  // Addresses and hex in any case name the same authorization; the RPC client takes them lower-case.
  return { authorizer: authorizer.toLowerCase() as Hex, nonce: nonce.toLowerCase() as Hex }
}

const unknown = (reason: string): SettlementStatus => ({ _tag: "Unknown", reason })
const notFinal = (reason: string): SettlementStatus => ({ _tag: "NotFinal", reason })

const same = (a: string | undefined, b: string) => a !== undefined && a.toLowerCase() === b.toLowerCase()
/** An address as an indexed event topic (`pad` left-pads to 32 bytes). */
const topicOf = (address: Hex) => pad(address)

/**
 * Whether a transaction receipt's logs prove the transfer a sale was signed for: USDC's
 * `AuthorizationUsed(payer, nonce)` followed at once by USDC's `Transfer(payer, payTo, amount)`. FiatToken
 * emits exactly that pair, in that order, for each `transferWithAuthorization` (and `receiveWithAuthorization`):
 * the nonce is marked used, then the signed `value` moves from `from` to `to`. Answers whether the nonce's log
 * is in the receipt at all, and whether the transfer right after it is the sale's. Any other log after it (a
 * `Transfer` to someone else, of another amount, another token's, or none) is a transfer the sale was not for.
 */
export const transferInReceipt = (
  logs: ReadonlyArray<Pick<Log, "address" | "topics" | "data">>,
  sale: Pick<Sale, "asset" | "payTo" | "amount">,
  authorization: { readonly authorizer: Hex; readonly nonce: Hex }
): "matches" | "other_transfer" | "absent" => {
  const used = logs.findIndex((log) =>
    same(log.address, sale.asset) && same(log.topics[0], AUTHORIZATION_USED_TOPIC) &&
    same(log.topics[1], topicOf(authorization.authorizer)) && same(log.topics[2], authorization.nonce)
  )
  if (used === -1) return "absent"
  const next = logs[used + 1]
  const matches = next !== undefined && same(next.address, sale.asset) && next.topics.length === 3 &&
    same(next.topics[0], TRANSFER_TOPIC) && same(next.topics[1], topicOf(authorization.authorizer)) &&
    isAddress(sale.payTo, { strict: false }) && same(next.topics[2], topicOf(sale.payTo as Hex)) &&
    isHex(next.data) && next.data.length === 66 && BigInt(next.data) === sale.amount
  return matches ? "matches" : "other_transfer"
}

/**
 * Reads what became of a Base sale's EIP-3009 authorization, from the USDC contract itself, over JSON-RPC at
 * `url` with viem:
 * - `authorizationState(payer, nonce)` false → unsettled (it may still settle until `validBefore`).
 * - used, and the transaction holding its `AuthorizationUsed` log (searched over the last `logBlocks` blocks)
 *   moved exactly the sale's amount from the payer to the sale's `payTo` (`transferInReceipt`) → settled with
 *   that transaction; moved anything else → failed (`authorization_used_for_another_transfer`): USDC ties a
 *   nonce to its payer only, so a payer who signed the checkout's authorization and a second one with the same
 *   nonce to itself, and got the second on chain first, paid nothing. A cancellation (`AuthorizationCanceled`)
 *   → failed (`authorization_canceled`).
 * - Either only once final: the transaction's block at or below the chain's `finalized` block; until then → not
 *   final. Neither log found, or no answer → unknown. Both leave the sale pending.
 * The URL may hold an API key: it is opened only here, and no error text of viem (which quotes the URL) is
 * ever passed on.
 */
export const makeEip3009Status = (url: Redacted.Redacted<string>, options: Eip3009StatusOptions) => {
  // One attempt per call (viem would retry three times): a read that fails is unknown, and the reconciler or
  // the buyer's retry comes back later.
  const client = createPublicClient({
    transport: http(Redacted.value(url), { timeout: options.timeoutMs, retryCount: 0 })
  })

  // viem's own timeout covers each request; this one also bounds a call that never starts to answer.
  const rpc = <A>(run: () => Promise<A>) => Effect.tryPromise(run).pipe(Effect.timeout(options.timeoutMs))

  /**
   * The transaction whose log (`AuthorizationUsed` or `AuthorizationCanceled`) marks the nonce used, in the
   * `logBlocks` blocks up to `latest`, newest first.
   */
  const transactionOf = (
    asset: Hex,
    authorizer: Hex,
    nonce: Hex,
    event: typeof AUTHORIZATION_USED_EVENT | typeof AUTHORIZATION_CANCELED_EVENT,
    latest: bigint
  ) =>
    Effect.gen(function*() {
      // The last `logBlocks` blocks, newest chunk first.
      const oldest = latest >= options.logBlocks ? latest - options.logBlocks + 1n : 0n
      for (let to = latest; to >= oldest; to -= options.logChunk) {
        // Stryker disable next-line EqualityOperator: at equality both branches are the same block
        const from = to - options.logChunk + 1n > oldest ? to - options.logChunk + 1n : oldest
        const [found] = yield* rpc(() =>
          client.getLogs({ address: asset, event, args: { authorizer, nonce }, fromBlock: from, toBlock: to })
        )
        // Logs of mined blocks always name their transaction (only a pending block's do not).
        if (found !== undefined) return found.transactionHash as Hex
      }
      return null
    })

  /** Whether the block a transaction landed in is final (at or below the chain's `finalized` block). */
  const isFinal = (block: bigint) =>
    Effect.map(rpc(() => client.getBlock({ blockTag: "finalized" })), (finalized) => block <= finalized.number)

  const read = (sale: Sale) =>
    Effect.gen(function*() {
      const authorization = authorizationOf(sale)
      if (sale.network !== options.network || authorization === null || !isAddress(sale.asset, { strict: false })) {
        return unknown("not an EIP-3009 payment on this network")
      }
      const asset = sale.asset.toLowerCase() as Hex
      const used = yield* rpc(() =>
        client.readContract({
          address: asset,
          abi: USDC_EIP3009,
          // Stryker disable next-line StringLiteral: the ABI's only function; viem finds it by this name or by none
          functionName: "authorizationState",
          args: [authorization.authorizer, authorization.nonce]
        })
      )
      if (!used) return { _tag: "Unsettled" } as const
      // A used nonce is not yet this sale's money moved: the payer may have cancelled the authorization, or
      // used the nonce for another authorization of its own (to another address, or another amount).
      // One head for both searches: a cancellation is looked for in the same blocks as the transfer.
      const latest = yield* rpc(() => client.getBlockNumber({ cacheTime: 0 }))
      const transfer = yield* transactionOf(asset, authorization.authorizer, authorization.nonce, AUTHORIZATION_USED_EVENT, latest)
      if (transfer !== null) {
        const receipt = yield* rpc(() => client.getTransactionReceipt({ hash: transfer }))
        if (receipt.status !== "success") return unknown("the transaction that used the nonce did not succeed")
        if (!(yield* isFinal(receipt.blockNumber))) return notFinal("the nonce's transfer is on chain but not final yet")
        switch (transferInReceipt(receipt.logs, sale, authorization)) {
          case "matches":
            return { _tag: "Settled", transaction: transfer } as const
          case "other_transfer":
            return { _tag: "Failed", reason: AUTHORIZATION_USED_ELSEWHERE } as const
          case "absent":
            return unknown("the transaction's receipt does not hold the nonce's AuthorizationUsed log")
        }
      }
      const cancel = yield* transactionOf(asset, authorization.authorizer, authorization.nonce, AUTHORIZATION_CANCELED_EVENT, latest)
      if (cancel !== null) {
        const receipt = yield* rpc(() => client.getTransactionReceipt({ hash: cancel }))
        if (receipt.status !== "success") return unknown("the transaction that cancelled the nonce did not succeed")
        if (!(yield* isFinal(receipt.blockNumber))) return notFinal("the nonce's cancellation is on chain but not final yet")
        return { _tag: "Failed", reason: AUTHORIZATION_CANCELED } as const
      }
      return unknown("the nonce is used but neither its transfer nor a cancellation is within the searched blocks")
    }).pipe(
      Effect.catchAll(() => Effect.succeed(unknown("the Base RPC endpoint did not answer"))),
      // Stryker disable next-line StringLiteral: a span's name labels traces, it decides nothing
      Effect.withSpan("Eip3009Status.read")
    )

  return (sale: Sale): Effect.Effect<SettlementStatus> => read(sale)
}
