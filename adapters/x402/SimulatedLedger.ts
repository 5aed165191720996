import { Either } from "effect"

/**
 * What every address on a simulated network holds before its first transfer: 1 000 000 test USDC
 * (USDC has 6 decimals). A faucet for everyone, so any test wallet can rehearse a purchase without
 * being funded first; a payment above it is refused as insufficient.
 */
export const SIMULATED_FAUCET_ATOMIC = 1_000_000n * 1_000_000n

/** One transfer of test USDC on the simulated ledger. */
export interface SimulatedTransfer {
  /** The CAIP-2 network. */
  readonly network: string
  /** What the chain would mark used: the EIP-3009 `from:nonce`, or the Solana transaction signature. */
  readonly key: string
  /** The payer's address. */
  readonly from: string
  /** The recipient's address. */
  readonly to: string
  /** The amount, in atomic units. */
  readonly amount: bigint
  /** The simulated transaction id (`sim_…`) this transfer is known by. */
  readonly transaction: string
}

export type TransferRefusal = "already_used" | "insufficient_funds"

/**
 * Test USDC balances and spent payment keys, in memory, for one process. Stands in for the token contract
 * (Base Sepolia) and the token accounts (Solana devnet) behind the simulated facilitator.
 */
export interface SimulatedLedger {
  /** An address's test USDC balance on a network (`SIMULATED_FAUCET_ATOMIC` before its first transfer). */
  readonly balanceOf: (network: string, address: string) => bigint
  /** Whether the payment key was already used on the network. */
  readonly isUsed: (network: string, key: string) => boolean
  /** The simulated transaction that used the key, or null while it is unused. */
  readonly transactionOf: (network: string, key: string) => string | null
  /** The transfer that used the key (to whom, how much), or null while it is unused. */
  readonly transferOf: (network: string, key: string) => SimulatedTransfer | null
  /**
   * Marks the key used, debits `from` and credits `to`, all or nothing. Synchronous on purpose: with no
   * await between the checks and the writes, two concurrent settlements of one payment cannot both pass.
   */
  readonly transfer: (t: SimulatedTransfer) => Either.Either<void, TransferRefusal>
}

// EVM addresses are case-insensitive (the checksum is only a spelling); Solana base58 is case-sensitive.
const accountId = (network: string, address: string): string =>
  `${network}|${network.startsWith("eip155:") ? address.toLowerCase() : address}`

/** A new, empty simulated ledger. */
export const makeSimulatedLedger = (): SimulatedLedger => {
  const balances = new Map<string, bigint>()
  // Used key → the simulated transfer that used it, so a status read can name it and check its terms.
  const used = new Map<string, SimulatedTransfer>()
  const balanceOf = (network: string, address: string): bigint =>
    balances.get(accountId(network, address)) ?? SIMULATED_FAUCET_ATOMIC
  return {
    balanceOf,
    isUsed: (network, key) => used.has(`${network}|${key}`),
    transactionOf: (network, key) => used.get(`${network}|${key}`)?.transaction ?? null,
    transferOf: (network, key) => used.get(`${network}|${key}`) ?? null,
    transfer: (t) => {
      const { amount, from, key, network, to } = t
      const usedKey = `${network}|${key}`
      if (used.has(usedKey)) return Either.left("already_used")
      const fromBalance = balanceOf(network, from)
      if (fromBalance < amount) return Either.left("insufficient_funds")
      used.set(usedKey, t)
      balances.set(accountId(network, from), fromBalance - amount)
      // Read `to` after the debit: a payment to oneself must leave the balance unchanged.
      balances.set(accountId(network, to), balanceOf(network, to) + amount)
      return Either.right(undefined)
    }
  }
}
