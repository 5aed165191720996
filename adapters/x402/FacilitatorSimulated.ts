import { generateKeyPairSigner, signBytes } from "@solana/kit"
import { Clock, Effect } from "effect"
import type { Chain } from "../../domain/Wallet.js"
import type { Sale } from "../../domain/Sale.js"
import { AUTHORIZATION_USED_ELSEWHERE, TRANSFER_MISMATCH } from "../../domain/SettlementReasons.js"
import type {
  Facilitator,
  PaymentRequirement,
  Settlement,
  SettlementStatus,
  SubmittedPayment,
  Verification
} from "../../ports/PaymentFacilitator.js"
import { baseFacts } from "../evm/BaseAddress.js"
import { base58 } from "../solana/SolanaPayment.js"
import { solanaFacts } from "../solana/SolanaAddress.js"
import { settleEvmSimulated, verifyEvmSimulated } from "./SimulatedEvm.js"
import { makeSimulatedLedger } from "./SimulatedLedger.js"
import { type SimulatedFeePayer, settleSolanaSimulated, verifySolanaSimulated } from "./SimulatedSolana.js"

/** What a requirement on a network the simulated facilitator does not serve is refused with. */
export const UNSUPPORTED_NETWORK = "unsupported_network"

/** The test twin's simulated facilitator: moves test USDC on a SimulatedLedger, never on a real chain. */
export interface SimulatedFacilitator {
  /** Verifies and settles on the test networks only (Base Sepolia, Solana devnet). */
  readonly facilitator: Facilitator
  /**
   * Scheme extras to put in a test requirement beyond the chain's facts. Solana: the fee payer and a
   * simulated recent blockhash (so the official SVM client needs no RPC for one). Base: nothing more.
   */
  readonly extra: (chain: Chain) => Readonly<Record<string, string>>
  /** Simulated test-USDC balances, in atomic units (every address starts with the faucet amount). */
  readonly ledger: { readonly balanceOf: (network: string, address: string) => bigint }
}

const nowSeconds = Clock.currentTimeMillis.pipe(Effect.map((ms) => BigInt(Math.floor(ms / 1000))))

/**
 * The test twin's facilitator: signatures really verified (EIP-712 with viem, ed25519 with @solana/kit),
 * settlement simulated on an in-memory ledger whose transaction ids start with `sim_`. Each call builds a
 * fresh ledger and a fresh Solana fee-payer key, so build it once per process (in a layer).
 */
export const makeFacilitatorSimulated: Effect.Effect<SimulatedFacilitator> = Effect.gen(function*() {
  const ledger = makeSimulatedLedger()
  const signer = yield* Effect.promise(() => generateKeyPairSigner())
  const feePayer: SimulatedFeePayer = {
    address: signer.address,
    sign: async (message) => Uint8Array.from(await signBytes(signer.keyPair.privateKey, message))
  }
  // Any 32 bytes do: nothing is broadcast, and verification does not pin the blockhash, so a client that
  // fetched a real devnet blockhash instead (x402 v1 clients do) is accepted too.
  const recentBlockhash = base58(crypto.getRandomValues(new Uint8Array(32)))
  const base = baseFacts(false)
  const solana = solanaFacts(false)

  const route = <A>(
    requirement: PaymentRequirement,
    onBase: (now: bigint) => Effect.Effect<A>,
    onSolana: (now: bigint) => Effect.Effect<A>,
    unsupported: A
  ): Effect.Effect<A> =>
    Effect.flatMap(nowSeconds, (now) =>
      requirement.network === base.network
        ? onBase(now)
        : requirement.network === solana.network
        ? onSolana(now)
        : Effect.succeed(unsupported))

  const verify = (payment: SubmittedPayment, requirement: PaymentRequirement): Effect.Effect<Verification> =>
    route(
      requirement,
      (now) => verifyEvmSimulated(ledger, payment, requirement, base.asset, now),
      () => verifySolanaSimulated(ledger, feePayer, payment, requirement, solana.asset),
      { valid: false, invalidReason: UNSUPPORTED_NETWORK, payer: null }
    ).pipe(Effect.withSpan("FacilitatorSimulated.verify"))

  const settle = (payment: SubmittedPayment, requirement: PaymentRequirement): Effect.Effect<Settlement> =>
    route(
      requirement,
      (now) => settleEvmSimulated(ledger, payment, requirement, base.asset, now),
      () => settleSolanaSimulated(ledger, feePayer, payment, requirement, solana.asset),
      { success: false, transaction: null, network: requirement.network, payer: null, errorReason: UNSUPPORTED_NETWORK }
    ).pipe(Effect.withSpan("FacilitatorSimulated.settle"))

  // The sale's payment key is `<network>:<key>`, the key being what the simulated chain marks used. As on the
  // real chains, a used key settles the sale only if its transfer paid the sale's amount from its payer to its
  // payTo. The ledger lives in this process: after a restart a test sale's simulated transfer is forgotten.
  const status = (sale: Sale): Effect.Effect<SettlementStatus> =>
    Effect.sync(() => {
      const key = sale.paymentKey.slice(sale.network.length + 1)
      const transfer = ledger.transferOf(sale.network, key)
      if (transfer === null) return { _tag: "Unsettled" }
      const evm = sale.chain === "base"
      const same = (a: string, b: string) => evm ? a.toLowerCase() === b.toLowerCase() : a === b
      return same(transfer.to, sale.payTo) && same(transfer.from, sale.payer) && transfer.amount === sale.amount
        ? { _tag: "Settled", transaction: transfer.transaction }
        : { _tag: "Failed", reason: evm ? AUTHORIZATION_USED_ELSEWHERE : TRANSFER_MISMATCH }
    })

  const extras: Record<Chain, Readonly<Record<string, string>>> = {
    base: {},
    solana: { feePayer: feePayer.address, recentBlockhash }
  }

  return {
    facilitator: { verify, settle, status },
    extra: (chain) => extras[chain],
    ledger: { balanceOf: ledger.balanceOf }
  }
})
