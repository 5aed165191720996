/*
 * Where neither libsecp256k1 build loads (a bundle carries no native binding and no .wasm file beside it),
 * verifyEip3009Signature falls back to noble, viem's own recovery, with the same verdicts.
 */
import { describe, expect, it } from "@effect/vitest"
import { vi } from "vitest"
import { loadNativeRecover, loadWasmRecover, verifyEip3009Signature } from "../../../adapters/evm/EvmPayment.js"
import { authorizationOf, domainFor, newAccount, newAddress, sign, termsFor } from "./evmSupport.js"

vi.mock("secp256k1/bindings.js", () => {
  throw new Error("no native binding for this platform")
})
vi.mock("tiny-secp256k1", () => {
  throw new Error("ENOENT: secp256k1.wasm")
})

describe("verifyEip3009Signature without libsecp256k1", () => {
  it("neither build loads here, yet a signature is verified (with noble): the buyer's holds, a forgery does not", async () => {
    await expect(loadNativeRecover()).rejects.toThrow()
    await expect(loadWasmRecover()).rejects.toThrow()
    const terms = termsFor(newAddress())
    const buyer = newAccount()
    const authorization = authorizationOf(buyer, terms)
    const domain = domainFor(terms)
    expect(await verifyEip3009Signature({ signature: await sign(buyer, authorization, domain), authorization }, domain)).toBe(true)
    expect(await verifyEip3009Signature({ signature: await sign(newAccount(), authorization, domain), authorization }, domain)).toBe(false)
  })
})
