import { mkdtempSync, readdirSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { describe, expect, it } from "@effect/vitest"
import { build } from "esbuild"
import type { Hex } from "viem"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import type * as EvmPayment from "../../adapters/evm/EvmPayment.js"

/*
 * The Lambda build bundles each entry into one .mjs with esbuild (template.yaml: ESM, node24, the same
 * banner). libsecp256k1's WebAssembly is read from a file beside its module, which a bundle leaves out:
 * the EIP-3009 check must then still load and give the same verdicts (through the pure-JS fallback).
 */

const root = fileURLToPath(new URL("../../", import.meta.url))
const BANNER = "import { createRequire as __rmCreateRequire } from 'module'; const require = __rmCreateRequire(import.meta.url);"

describe("the EVM payment check, bundled as the Lambda build bundles it", () => {
  it("loads without its .wasm file and still tells a payer's signature from another key's", async () => {
    const dir = mkdtempSync(join(tmpdir(), "repomarket-bundle-"))
    try {
      const outfile = join(dir, "evm.mjs")
      await build({
        entryPoints: [join(root, "adapters/evm/EvmPayment.ts")],
        bundle: true,
        format: "esm",
        platform: "node",
        target: "node24",
        outfile,
        banner: { js: BANNER },
        external: ["pg-native"],
        logLevel: "silent"
      })
      expect(readdirSync(dir).filter((f) => f.endsWith(".wasm"))).toEqual([])
      const bundled = (await import(pathToFileURL(outfile).href)) as typeof EvmPayment

      const domain = { name: "USDC", version: "2", chainId: 84532, verifyingContract: "0x036CbD53842c5426634e7929541eC2318f3dCF7e" as Hex }
      const buyerKey = generatePrivateKey()
      const buyer = privateKeyToAccount(buyerKey)
      const authorization = {
        from: buyer.address,
        to: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913" as Hex,
        value: 500000n,
        validAfter: 0n,
        validBefore: 4_000_000_000n,
        nonce: `0x${"5a".repeat(32)}` as Hex
      }
      const sign = (key: Hex) =>
        privateKeyToAccount(key).signTypedData({ domain, types: bundled.transferWithAuthorizationTypes, primaryType: "TransferWithAuthorization", message: authorization })
      expect(await bundled.verifyEip3009Signature({ signature: await sign(generatePrivateKey()), authorization }, domain)).toBe(false)
      expect(await bundled.verifyEip3009Signature({ signature: await sign(buyerKey), authorization }, domain)).toBe(true)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }, 60_000)
})
