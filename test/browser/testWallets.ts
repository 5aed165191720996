/*
 * Browser wallets for the checkout tests, injected into the page as real wallets are: an EIP-1193 provider
 * announced over EIP-6963, and a Wallet Standard Solana wallet registered with the page. Their keys never
 * enter the page: every request crosses to this process (page.exposeFunction), where a viem local account or
 * a @solana/kit key pair does the signing, and where a test decides how the wallet behaves.
 */
import { generateKeyPairSigner, getAddressEncoder, getTransactionDecoder, getTransactionEncoder, type KeyPairSigner } from "@solana/kit"
import type { Page } from "playwright-core"
import type { Hex } from "viem"
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts"

export interface EthereumBehaviour {
  /** The chain the wallet starts on. */
  chainId: number
  /** `unsupported`: the wallet can neither switch nor add the chain (the person must switch by hand). */
  switchChain: "ok" | "decline" | "unsupported"
  /** `tamper`: signs other terms than it was shown, so the checkout refuses the payment. */
  sign: "ok" | "decline" | "tamper"
}

export interface TestEthereumWallet {
  readonly account: PrivateKeyAccount
  readonly behaviour: EthereumBehaviour
  readonly calls: Array<string>
}

type Answer = { result: unknown } | { error: { code: number; message: string } }

const declined = { error: { code: 4001, message: "User rejected the request." } } as const

export const injectEthereumWallet = async (page: Page, behaviour: Partial<EthereumBehaviour> = {}): Promise<TestEthereumWallet> => {
  const account = privateKeyToAccount(generatePrivateKey())
  const state: EthereumBehaviour = { chainId: 84532, switchChain: "ok", sign: "ok", ...behaviour }
  const calls: Array<string> = []
  await page.exposeFunction("__testEthereum", async (method: string, params: any): Promise<Answer> => {
    calls.push(method)
    switch (method) {
      case "eth_requestAccounts":
      case "eth_accounts":
        return { result: [account.address] }
      case "eth_chainId":
        return { result: `0x${state.chainId.toString(16)}` }
      case "wallet_switchEthereumChain":
        if (state.switchChain === "decline") return declined
        if (state.switchChain === "unsupported") return { error: { code: 4902, message: "Unrecognized chain ID." } }
        state.chainId = Number.parseInt(params[0].chainId, 16)
        return { result: null }
      case "wallet_addEthereumChain":
        return state.switchChain === "ok"
          ? (state.chainId = Number.parseInt(params[0].chainId, 16), { result: null })
          : { error: { code: -32603, message: "This wallet cannot add networks." } }
      case "eth_signTypedData_v4": {
        if (state.sign === "decline") return declined
        if (params[0].toLowerCase() !== account.address.toLowerCase()) return { error: { code: 4100, message: "Unknown account." } }
        const data = JSON.parse(params[1])
        const { EIP712Domain: _, ...types } = data.types
        const m = data.message
        const signature = await account.signTypedData({
          domain: { ...data.domain, chainId: BigInt(data.domain.chainId) },
          types,
          primaryType: data.primaryType,
          message: {
            ...m,
            value: BigInt(m.value) + (state.sign === "tamper" ? 1n : 0n),
            validAfter: BigInt(m.validAfter),
            validBefore: BigInt(m.validBefore),
            nonce: m.nonce as Hex
          }
        })
        return { result: signature }
      }
      default:
        return { error: { code: 4200, message: `unsupported method ${method}` } }
    }
  })
  await page.addInitScript({ content: ETHEREUM_IN_PAGE })
  return { account, behaviour: state, calls }
}

export interface TestSolanaWallet {
  readonly signer: KeyPairSigner
  /** Transactions the wallet was asked to sign. */
  readonly signed: Array<Uint8Array>
  decline: boolean
}

export const injectSolanaWallet = async (page: Page): Promise<TestSolanaWallet> => {
  const signer = await generateKeyPairSigner()
  const wallet: TestSolanaWallet = { signer, signed: [], decline: false }
  await page.exposeFunction("__testSolana", async (bytes: Array<number>) => {
    if (wallet.decline) return { error: "User rejected the request." }
    const transaction = getTransactionDecoder().decode(Uint8Array.from(bytes))
    wallet.signed.push(Uint8Array.from(bytes))
    const [signatures] = await signer.signTransactions([transaction as Parameters<KeyPairSigner["signTransactions"]>[0][number]])
    const signedTx = { ...transaction, signatures: { ...transaction.signatures, ...signatures } }
    return { result: Array.from(getTransactionEncoder().encode(signedTx)) }
  })
  const publicKey = Array.from(getAddressEncoder().encode(signer.address))
  await page.addInitScript({ content: solanaInPage(signer.address, publicKey) })
  return wallet
}

/* The in-page halves, run as init scripts: plain JavaScript, so nothing a transpiler adds can be missing there. */

const ICON = "data:image/svg+xml;base64,PHN2ZyB4bWxucz0iaHR0cDovL3d3dy53My5vcmcvMjAwMC9zdmciLz4="

const ETHEREUM_IN_PAGE = `(() => {
  const provider = {
    request: async ({ method, params }) => {
      const out = await window.__testEthereum(method, params ?? null)
      if (out.error !== undefined) throw Object.assign(new Error(out.error.message), { code: out.error.code })
      return out.result
    },
    on: () => undefined,
    removeListener: () => undefined
  }
  const info = Object.freeze({ uuid: "5e7ab1e0-0000-4000-8000-000000000001", name: "Test Wallet", icon: "${ICON}", rdns: "test.repomarket.wallet" })
  const announce = () => window.dispatchEvent(new CustomEvent("eip6963:announceProvider", { detail: Object.freeze({ info, provider }) }))
  window.addEventListener("eip6963:requestProvider", announce)
  announce()
})()`

const solanaInPage = (address: string, publicKey: ReadonlyArray<number>) => `(() => {
  const chains = ["solana:devnet", "solana:mainnet"]
  const account = Object.freeze({ address: ${JSON.stringify(address)}, publicKey: new Uint8Array(${JSON.stringify(publicKey)}), chains, features: ["solana:signTransaction"], label: "Test" })
  const wallet = {
    version: "1.0.0",
    name: "Test Solana Wallet",
    icon: "${ICON}",
    chains,
    accounts: [account],
    features: {
      "standard:connect": { version: "1.0.0", connect: async () => ({ accounts: [account] }) },
      "standard:events": { version: "1.0.0", on: () => () => undefined },
      "solana:signTransaction": {
        version: "1.0.0",
        supportedTransactionVersions: ["legacy", 0],
        signTransaction: (...inputs) => Promise.all(inputs.map(async (input) => {
          const out = await window.__testSolana(Array.from(input.transaction))
          if (out.error !== undefined) throw Object.assign(new Error(out.error), { code: 4001 })
          return { signedTransaction: new Uint8Array(out.result) }
        }))
      }
    }
  }
  const callback = ({ register }) => register(wallet)
  window.addEventListener("wallet-standard:app-ready", (e) => callback(e.detail))
  window.dispatchEvent(new CustomEvent("wallet-standard:register-wallet", { detail: callback }))
})()`
