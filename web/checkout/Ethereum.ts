/*
 * Ethereum wallets: found through EIP-6963 (every injected wallet announces itself; several can coexist),
 * with `window.ethereum` as the fallback for wallets that predate it. Paying is one EIP-712 signature of an
 * EIP-3009 `TransferWithAuthorization` (`eth_signTypedData_v4`): the wallet sends nothing on chain and needs
 * no gas; the facilitator submits the transfer.
 */
import type { Requirement } from "./X402.js"

export interface Eip1193Provider {
  request(args: { readonly method: string; readonly params?: ReadonlyArray<unknown> | object }): Promise<unknown>
}

export interface EthereumWallet {
  readonly id: string
  readonly name: string
  /** A data: URI (EIP-6963 requires one); anything else is not shown. */
  readonly icon: string | null
  readonly provider: Eip1193Provider
}

interface AnnounceDetail {
  readonly info?: { readonly uuid?: unknown; readonly name?: unknown; readonly icon?: unknown; readonly rdns?: unknown }
  readonly provider?: Eip1193Provider
}

/** Calls `found` for every wallet that announces itself, now or later. */
export const discoverEthereumWallets = (found: (wallet: EthereumWallet) => void): void => {
  const seen = new Set<string>()
  let announced = false
  window.addEventListener("eip6963:announceProvider", (event) => {
    const detail = (event as CustomEvent<AnnounceDetail>).detail
    const info = detail?.info
    if (detail?.provider === undefined || typeof detail.provider.request !== "function" || typeof info?.uuid !== "string") return
    if (seen.has(info.uuid)) return
    seen.add(info.uuid)
    announced = true
    const icon = typeof info.icon === "string" && /^data:image\/(svg\+xml|png|webp|gif|jpeg);/.test(info.icon) ? info.icon : null
    found({ id: info.uuid, name: typeof info.name === "string" && info.name !== "" ? info.name : "Ethereum wallet", icon, provider: detail.provider })
  })
  window.dispatchEvent(new Event("eip6963:requestProvider"))
  // A wallet injected the old way only: offered when nothing announced itself shortly after load.
  setTimeout(() => {
    const legacy = (window as { ethereum?: Eip1193Provider }).ethereum
    if (!announced && legacy !== undefined && typeof legacy.request === "function") {
      found({ id: "window.ethereum", name: "Browser wallet", icon: null, provider: legacy })
    }
  }, 500)
}

/** An EIP-1193 error code, if the wallet gave one (4001: the person declined; 4902: unknown chain). */
export const errorCode = (e: unknown): number | null => {
  const code = (e as { code?: unknown } | null)?.code
  return typeof code === "number" ? code : null
}

interface ChainParams {
  readonly chainName: string
  readonly rpcUrls: ReadonlyArray<string>
  readonly blockExplorerUrls: ReadonlyArray<string>
}

const CHAINS: Readonly<Record<number, ChainParams>> = {
  8453: { chainName: "Base", rpcUrls: ["https://mainnet.base.org"], blockExplorerUrls: ["https://basescan.org"] },
  84532: { chainName: "Base Sepolia", rpcUrls: ["https://sepolia.base.org"], blockExplorerUrls: ["https://sepolia.basescan.org"] }
}

export const chainIdOf = (requirement: Requirement): number => Number(requirement.network.split(":")[1])
const OTHER_CHAINS: Readonly<Record<number, string>> = { 1: "Ethereum", 10: "OP Mainnet", 137: "Polygon", 42161: "Arbitrum One", 11155111: "Sepolia" }
export const chainName = (chainId: number): string => CHAINS[chainId]?.chainName ?? OTHER_CHAINS[chainId] ?? `chain ${chainId}`

/** Thrown when the wallet stays on another network after being asked to switch. */
export class WrongNetwork extends Error {
  constructor(readonly wanted: number, readonly current: number | null) {
    super(`wrong network: ${current} instead of ${wanted}`)
  }
}

const hex = (n: number) => `0x${n.toString(16)}`

/** Asks the wallet to switch to the requirement's chain, adding it first if the wallet does not know it. */
export const ensureChain = async (provider: Eip1193Provider, chainId: number): Promise<void> => {
  const current = async () => Number.parseInt(String(await provider.request({ method: "eth_chainId" })), 16)
  if ((await current()) === chainId) return
  try {
    await provider.request({ method: "wallet_switchEthereumChain", params: [{ chainId: hex(chainId) }] })
  } catch (e) {
    if (errorCode(e) !== 4902 || CHAINS[chainId] === undefined) throw e
    const params = CHAINS[chainId]!
    await provider.request({
      method: "wallet_addEthereumChain",
      params: [{ chainId: hex(chainId), chainName: params.chainName, nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 }, rpcUrls: params.rpcUrls, blockExplorerUrls: params.blockExplorerUrls }]
    })
  }
  const now = await current()
  if (now !== chainId) throw new WrongNetwork(chainId, Number.isFinite(now) ? now : null)
}

export const connect = async (provider: Eip1193Provider): Promise<string> => {
  const accounts = await provider.request({ method: "eth_requestAccounts" })
  const first = Array.isArray(accounts) ? accounts[0] : undefined
  if (typeof first !== "string") throw new Error("The wallet shared no account.")
  return first
}

const randomNonce = (): string =>
  `0x${Array.from(crypto.getRandomValues(new Uint8Array(32)), (b) => b.toString(16).padStart(2, "0")).join("")}`

/**
 * The `exact` EVM payload: the authorization and the wallet's signature over it. Valid from ten minutes ago
 * (clock skew between the person's machine and the chain) until the requirement's own time limit.
 */
export const signPayment = async (provider: Eip1193Provider, from: string, requirement: Requirement) => {
  const chainId = chainIdOf(requirement)
  const now = Math.floor(Date.now() / 1000)
  const authorization = {
    from,
    to: requirement.payTo,
    value: requirement.amount,
    validAfter: String(now - 600),
    validBefore: String(now + requirement.maxTimeoutSeconds),
    nonce: randomNonce()
  }
  const typedData = {
    types: {
      EIP712Domain: [
        { name: "name", type: "string" },
        { name: "version", type: "string" },
        { name: "chainId", type: "uint256" },
        { name: "verifyingContract", type: "address" }
      ],
      TransferWithAuthorization: [
        { name: "from", type: "address" },
        { name: "to", type: "address" },
        { name: "value", type: "uint256" },
        { name: "validAfter", type: "uint256" },
        { name: "validBefore", type: "uint256" },
        { name: "nonce", type: "bytes32" }
      ]
    },
    primaryType: "TransferWithAuthorization",
    domain: { name: requirement.extra["name"], version: requirement.extra["version"], chainId, verifyingContract: requirement.asset },
    message: authorization
  }
  const signature = await provider.request({ method: "eth_signTypedData_v4", params: [from, JSON.stringify(typedData)] })
  if (typeof signature !== "string") throw new Error("The wallet returned no signature.")
  return { signature, authorization }
}
