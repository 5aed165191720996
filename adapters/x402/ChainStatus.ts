import { Config, ConfigError, Effect, Either, Option, Redacted } from "effect"
import type { Sale } from "../../domain/Sale.js"
import type { SettlementStatus } from "../../ports/PaymentFacilitator.js"
import { baseFacts } from "../evm/BaseAddress.js"
import { makeEip3009Status } from "../evm/Eip3009Status.js"
import { makeSignatureStatus } from "../solana/SignatureStatus.js"
import { solanaFacts } from "../solana/SolanaAddress.js"

/** Limit on each chain RPC call made to read a payment's status. */
export const RPC_TIMEOUT_MS = 5_000
/** How far back the Base reader looks for the `AuthorizationUsed` log naming the transaction (~5.5 h at 2 s). */
export const AUTHORIZATION_LOG_BLOCKS = 10_000n
const AUTHORIZATION_LOG_CHUNK = 5_000n

export const DEFAULT_BASE_RPC_URL = "https://mainnet.base.org"
export const DEFAULT_SOLANA_RPC_URL = "https://api.mainnet-beta.solana.com"

/** The value that turns a reader off: live pending sales then wait for an operator. */
export const RPC_OFF = "off"

/**
 * An RPC endpoint setting, read as a secret (providers put API keys in the path or query). Unset or blank:
 * the public endpoint; `off`: no reader; anything but an absolute http(s) URL without user info or fragment
 * fails start-up, naming the setting but never repeating the value.
 */
export const rpcUrl = (name: string, fallback: string): Config.Config<Option.Option<Redacted.Redacted<string>>> =>
  Config.redacted(name).pipe(
    Config.withDefault(Redacted.make("")),
    Config.mapOrFail((value) => {
      const raw = Redacted.value(value).trim()
      if (raw.toLowerCase() === RPC_OFF) return Either.right(Option.none())
      const url = raw === "" ? fallback : raw
      const invalid = ConfigError.InvalidData([name], `${name} must be an absolute http(s) URL without user info or fragment, or "${RPC_OFF}"`)
      if (!URL.canParse(url)) return Either.left(invalid)
      const u = new URL(url)
      const ok = (u.protocol === "https:" || u.protocol === "http:") && u.username === "" && u.password === "" && u.hash === ""
      return ok ? Either.right(Option.some(Redacted.make(url))) : Either.left(invalid)
    })
  )

export const BaseRpcUrl = rpcUrl("BASE_RPC_URL", DEFAULT_BASE_RPC_URL)
export const SolanaRpcUrl = rpcUrl("SOLANA_RPC_URL", DEFAULT_SOLANA_RPC_URL)

export type ChainStatus = (sale: Sale) => Effect.Effect<SettlementStatus>

/**
 * `Facilitator.status` for live sales: the chain itself is asked (x402's facilitator API has no status
 * call). Base: USDC's EIP-3009 `authorizationState` at `BASE_RPC_URL`; Solana: `getSignatureStatuses` at
 * `SOLANA_RPC_URL`. A reader that is off answers unknown, so its pending sales stay pending.
 */
export const chainStatusFromConfig: Effect.Effect<ChainStatus, ConfigError.ConfigError> = Effect.map(
  Config.all([BaseRpcUrl, SolanaRpcUrl]),
  ([baseUrl, solanaUrl]) => {
    const base = Option.map(baseUrl, (url) =>
      makeEip3009Status(url, {
        network: baseFacts(true).network,
        timeoutMs: RPC_TIMEOUT_MS,
        logBlocks: AUTHORIZATION_LOG_BLOCKS,
        logChunk: AUTHORIZATION_LOG_CHUNK
      }))
    const solana = Option.map(solanaUrl, (url) => makeSignatureStatus(url, { network: solanaFacts(true).network, timeoutMs: RPC_TIMEOUT_MS }))
    return (sale) => {
      const reader = sale.chain === "base" ? base : solana
      return Option.match(reader, {
        onNone: () =>
          Effect.succeed<SettlementStatus>({
            _tag: "Unknown",
            reason: `${sale.chain === "base" ? "BASE_RPC_URL" : "SOLANA_RPC_URL"} is off`
          }),
        onSome: (read) => read(sale)
      })
    }
  }
)
