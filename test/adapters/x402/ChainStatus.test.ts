import { describe, expect, it } from "@effect/vitest"
import { Cause, ConfigProvider, Effect, Exit, Layer, Option, Redacted } from "effect"
import { BaseRpcUrl, SolanaRpcUrl } from "../../../adapters/x402/ChainStatus.js"
import { PaymentFacilitatorLive } from "../../../adapters/x402/PaymentFacilitatorLive.js"
import { PaymentFacilitator } from "../../../ports/PaymentFacilitator.js"
import { Sale } from "../../../domain/Sale.js"

const withSettings = (settings: Record<string, string>) => Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(settings))))

/** Builds the facilitator layer under exactly these settings; its exit. */
const start = (settings: Record<string, string>) =>
  Effect.runPromiseExit(Effect.scoped(Layer.build(PaymentFacilitatorLive.pipe(Layer.provide(withSettings(settings))))))

const read = <A>(config: Effect.Effect<A, unknown>, settings: Record<string, string>) =>
  Effect.runSync(Effect.provide(config, withSettings(settings)))

describe("BASE_RPC_URL and SOLANA_RPC_URL", () => {
  it("default to the public endpoints, held redacted", () => {
    const base = Option.getOrThrow(read(BaseRpcUrl, {}))
    const solana = Option.getOrThrow(read(SolanaRpcUrl, { SOLANA_RPC_URL: " " }))
    expect(Redacted.value(base)).toBe("https://mainnet.base.org")
    expect(Redacted.value(solana)).toBe("https://api.mainnet-beta.solana.com")
    expect(String(base)).not.toContain("mainnet")
  })

  it("`off` turns a reader off: a live sale's status is unknown, so it stays pending", async () => {
    expect(read(BaseRpcUrl, { BASE_RPC_URL: "off" })).toEqual(Option.none())
    const status = await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const facilitator = Option.getOrThrow((yield* PaymentFacilitator).live)
      return yield* facilitator.status(new Sale({
        id: "sale_1" as any,
        paymentKey: `eip155:8453:eip3009:0x${"1".repeat(40)}:0x${"2".repeat(64)}`,
        listingId: "lst_1" as any,
        checkoutId: "chk_1" as any,
        accountId: null,
        repo: "o/r",
        livemode: true,
        chain: "base",
        network: "eip155:8453",
        asset: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
        amount: 1n as any,
        payTo: `0x${"3".repeat(40)}`,
        payer: `0x${"1".repeat(40)}`,
        commitSha: null,
        transaction: null,
        status: "pending",
        failureReason: null,
        createdAt: new Date(),
        settledAt: null
      }))
    }).pipe(Effect.provide(PaymentFacilitatorLive.pipe(Layer.provide(withSettings({
      X402_FACILITATOR_URL: "https://facilitator.test",
      BASE_RPC_URL: "off",
      SOLANA_RPC_URL: "off"
    })))))))
    expect(status).toEqual({ _tag: "Unknown", reason: "BASE_RPC_URL is off" })
  })

  it("a malformed value fails start-up naming the setting, never repeating the value (it may hold a key)", async () => {
    for (const [name, value] of [
      ["BASE_RPC_URL", "mainnet.base.org/KEY-123456"],
      ["BASE_RPC_URL", "ftp://rpc.example/KEY-123456"],
      ["BASE_RPC_URL", "https://user:KEY-123456@rpc.example"],
      ["SOLANA_RPC_URL", "not a url KEY-123456"]
    ] as const) {
      const exit = await start({ [name]: value })
      expect(Exit.isFailure(exit), `${name}=${value}`).toBe(true)
      const text = Exit.isFailure(exit) ? Cause.pretty(exit.cause) : ""
      expect(text).toContain(name)
      expect(text).not.toContain("KEY-123456")
    }
    expect(Exit.isSuccess(await start({ BASE_RPC_URL: "https://base-mainnet.example/v2/KEY-123456?x=1", SOLANA_RPC_URL: "off" }))).toBe(true)
  })
})
