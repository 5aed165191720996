/*
 * Solana wallets: found through the Wallet Standard (Phantom, Solflare, Backpack… register themselves with
 * the page), asked to connect and to sign — never to send — the `exact` scheme's transaction: compute limit,
 * compute price, the USDC `TransferChecked` from the buyer's token account to the seller's, and a memo with
 * random bytes so that two purchases never share a transaction. The facilitator named in the requirement pays
 * the fee (`extra.feePayer`), adds its signature and submits it.
 */
import {
  AccountRole,
  address,
  appendTransactionMessageInstructions,
  blockhash,
  compileTransaction,
  createTransactionMessage,
  getAddressEncoder,
  getProgramDerivedAddress,
  getTransactionEncoder,
  pipe,
  setTransactionMessageFeePayer,
  setTransactionMessageLifetimeUsingBlockhash
} from "@solana/kit"
import { getWallets } from "@wallet-standard/app"
import type { Wallet, WalletAccount } from "@wallet-standard/base"
import type { Requirement } from "./X402.js"

const SIGN_TRANSACTION = "solana:signTransaction"
const CONNECT = "standard:connect"
const TOKEN_PROGRAM = address("TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA")
const ASSOCIATED_TOKEN_PROGRAM = address("ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL")
const COMPUTE_BUDGET_PROGRAM = address("ComputeBudget111111111111111111111111111111")
const MEMO_PROGRAM = address("MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr")
/** USDC has 6 decimals on every Solana cluster; TransferChecked makes the chain check it. */
const USDC_DECIMALS = 6

/** CAIP-2 genesis hashes of the checkout's requirements → the Wallet Standard's chain names. */
const WALLET_CHAIN: Readonly<Record<string, `solana:${string}`>> = {
  "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp": "solana:mainnet",
  "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1": "solana:devnet"
}

export const walletChainOf = (requirement: Requirement): `solana:${string}` | null => WALLET_CHAIN[requirement.network] ?? null

const canPay = (wallet: Wallet): boolean => SIGN_TRANSACTION in wallet.features && CONNECT in wallet.features

/** Calls `found` for every Wallet Standard wallet that can sign Solana transactions, now or later. */
export const discoverSolanaWallets = (found: (wallet: Wallet) => void): void => {
  const wallets = getWallets()
  for (const w of wallets.get()) if (canPay(w)) found(w)
  wallets.on("register", (...added) => added.filter(canPay).forEach(found))
}

interface ConnectFeature {
  readonly connect: () => Promise<{ readonly accounts: ReadonlyArray<WalletAccount> }>
}

interface SignTransactionFeature {
  readonly signTransaction: (...inputs: ReadonlyArray<{ account: WalletAccount; transaction: Uint8Array; chain?: string }>) => Promise<ReadonlyArray<{ readonly signedTransaction: Uint8Array }>>
}

export const connectSolana = async (wallet: Wallet, chain: string): Promise<WalletAccount> => {
  const { accounts } = await (wallet.features[CONNECT] as ConnectFeature).connect()
  const account = accounts.find((a) => a.chains.includes(chain as `${string}:${string}`)) ?? accounts[0]
  if (account === undefined) throw new Error("The wallet shared no account.")
  return account
}

const u32 = (n: number) => {
  const b = new Uint8Array(4)
  new DataView(b.buffer).setUint32(0, n, true)
  return b
}
const u64 = (n: bigint) => {
  const b = new Uint8Array(8)
  new DataView(b.buffer).setBigUint64(0, n, true)
  return b
}

const tokenAccountOf = async (owner: string, mint: string) => {
  const encode = getAddressEncoder()
  const [pda] = await getProgramDerivedAddress({
    programAddress: ASSOCIATED_TOKEN_PROGRAM,
    seeds: [encode.encode(address(owner)), encode.encode(TOKEN_PROGRAM), encode.encode(address(mint))]
  })
  return pda
}

/** The blockhash a transaction names, and the last block height at which the cluster accepts it. */
export interface Lifetime {
  readonly blockhash: string
  readonly lastValidBlockHeight: bigint
}

/**
 * The unsigned transaction's wire bytes (signature slots zeroed), ready for the wallet to sign. Its lifetime is
 * the requirement's `extra.recentBlockhash` (the test twin names one) or, for a live requirement that names
 * none, `recent`: what the server's blockhash endpoint answered.
 */
export const buildTransfer = async (buyer: string, requirement: Requirement, recent?: Lifetime): Promise<Uint8Array> => {
  const feePayer = requirement.extra["feePayer"]
  const named = requirement.extra["recentBlockhash"]
  const lifetime = named !== undefined ? { blockhash: named, lastValidBlockHeight: 0n } : recent
  if (feePayer === undefined) throw new Error("The checkout names no fee payer for Solana.")
  if (lifetime === undefined) throw new Error("The checkout names no recent blockhash for Solana.")
  const [source, destination] = await Promise.all([tokenAccountOf(buyer, requirement.asset), tokenAccountOf(requirement.payTo, requirement.asset)])
  const memo = new TextEncoder().encode(Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, "0")).join(""))
  const instructions = [
    { programAddress: COMPUTE_BUDGET_PROGRAM, data: Uint8Array.of(2, ...u32(20_000)) },
    { programAddress: COMPUTE_BUDGET_PROGRAM, data: Uint8Array.of(3, ...u64(1n)) },
    {
      programAddress: TOKEN_PROGRAM,
      accounts: [
        { address: source, role: AccountRole.WRITABLE },
        { address: address(requirement.asset), role: AccountRole.READONLY },
        { address: destination, role: AccountRole.WRITABLE },
        { address: address(buyer), role: AccountRole.READONLY_SIGNER }
      ],
      data: Uint8Array.of(12, ...u64(BigInt(requirement.amount)), USDC_DECIMALS)
    },
    { programAddress: MEMO_PROGRAM, data: memo }
  ]
  const message = pipe(
    createTransactionMessage({ version: 0 }),
    (m) => setTransactionMessageFeePayer(address(feePayer), m),
    (m) => setTransactionMessageLifetimeUsingBlockhash({ blockhash: blockhash(lifetime.blockhash), lastValidBlockHeight: lifetime.lastValidBlockHeight }, m),
    (m) => appendTransactionMessageInstructions(instructions, m)
  )
  return Uint8Array.from(getTransactionEncoder().encode(compileTransaction(message)))
}

/** The wallet's signature on the transaction; it may add its own assertions (Lighthouse), which the scheme allows. */
export const signTransfer = async (wallet: Wallet, account: WalletAccount, chain: string, transaction: Uint8Array): Promise<Uint8Array> => {
  const [out] = await (wallet.features[SIGN_TRANSACTION] as SignTransactionFeature).signTransaction({ account, transaction, chain })
  if (out === undefined) throw new Error("The wallet returned no signed transaction.")
  return out.signedTransaction
}
