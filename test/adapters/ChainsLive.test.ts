import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { ChainsLive } from "../../adapters/chains/ChainsLive.js"
import { Chains, InvalidAddress } from "../../ports/Chains.js"

const EVM = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"
const SOL = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"

describe("ChainsLive", () => {
  it.effect("normalizes a Base address with the EVM rules", () =>
    Effect.gen(function*() {
      const chains = yield* Chains
      expect(yield* chains.normalize("base", EVM.toLowerCase())).toBe(EVM)
    }).pipe(Effect.provide(ChainsLive)))

  it.effect("normalizes a Solana address with the base58 rules", () =>
    Effect.gen(function*() {
      const chains = yield* Chains
      expect(yield* chains.normalize("solana", SOL)).toBe(SOL)
    }).pipe(Effect.provide(ChainsLive)))

  it.effect("fails with InvalidAddress naming the chain when an address belongs to the other chain", () =>
    Effect.gen(function*() {
      const chains = yield* Chains
      const onBase = yield* Effect.flip(chains.normalize("base", SOL))
      expect(onBase).toBeInstanceOf(InvalidAddress)
      expect(onBase.chain).toBe("base")
      expect(onBase.message).toMatch(/EVM address/)
      const onSolana = yield* Effect.flip(chains.normalize("solana", EVM))
      expect(onSolana.chain).toBe("solana")
      expect(onSolana.message).toMatch(/Solana address/)
    }).pipe(Effect.provide(ChainsLive)))

  it.effect("does not trim: whitespace around an address is invalid", () =>
    Effect.gen(function*() {
      const chains = yield* Chains
      expect((yield* Effect.flip(chains.normalize("base", ` ${EVM}`)))._tag).toBe("InvalidAddress")
      expect((yield* Effect.flip(chains.normalize("solana", `${SOL} `)))._tag).toBe("InvalidAddress")
    }).pipe(Effect.provide(ChainsLive)))

  it.effect("dispatches facts per chain and mode", () =>
    Effect.gen(function*() {
      const chains = yield* Chains
      expect(chains.facts("base", true).network).toBe("eip155:8453")
      expect(chains.facts("base", false).network).toBe("eip155:84532")
      expect(chains.facts("solana", true).network).toBe("solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp")
      expect(chains.facts("solana", false).asset).toBe("4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU")
    }).pipe(Effect.provide(ChainsLive)))
})
