/*
 * Shared by the simulated-facilitator and payment-identity tests: requirements as the checkout builds them,
 * payments made by the OFFICIAL x402 client schemes, and a mocked Solana JSON-RPC for the SVM client.
 */
import { getAddressEncoder, getBase64Decoder, getBase64Encoder, type Address, type KeyPairSigner } from "@solana/kit"
import type { PaymentRequirements } from "@x402/core/types"
import { ExactEvmScheme } from "@x402/evm/exact/client"
import { ExactSvmScheme } from "@x402/svm/exact/client"
import { Effect, Option } from "effect"
import { http, HttpResponse } from "msw"
import { setupServer } from "msw/node"
import type { PrivateKeyAccount } from "viem"
import { baseFacts } from "../../../adapters/evm/BaseAddress.js"
import { solanaFacts } from "../../../adapters/solana/SolanaAddress.js"
import { AtomicAmount } from "../../../domain/Money.js"
import type { ChainFacts } from "../../../domain/Wallet.js"
import type { PaymentRequirement, SubmittedPayment } from "../../../ports/PaymentFacilitator.js"

export const PRICE = AtomicAmount.make(10_000n) // 0.01 USDC
export const TOKEN_PROGRAM = "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA"

/** A requirement as the checkout would offer it: chain facts, then the facilitator's extras. */
export const requirement = (
  facts: ChainFacts,
  overrides: Partial<Pick<PaymentRequirement, "payTo" | "amount" | "asset" | "network" | "extra">> & { payTo: string }
): PaymentRequirement => ({
  chain: facts.chain,
  livemode: facts.livemode,
  scheme: "exact",
  network: overrides.network ?? facts.network,
  v1Network: facts.v1Network,
  asset: overrides.asset ?? facts.asset,
  amount: overrides.amount ?? PRICE,
  payTo: overrides.payTo,
  maxTimeoutSeconds: 300,
  resource: "https://repomarket.test/checkout/chk_1/test",
  description: "octo/repo",
  extra: overrides.extra ?? facts.extra
})

/** The same requirement in the x402 wire shape the official clients take. */
export const toX402 = (r: PaymentRequirement): PaymentRequirements => ({
  scheme: r.scheme,
  network: r.network as PaymentRequirements["network"],
  asset: r.asset,
  amount: r.amount.toString(),
  payTo: r.payTo,
  maxTimeoutSeconds: r.maxTimeoutSeconds,
  extra: { ...r.extra }
})

/** What the HTTP layer hands the facilitator for a v2 payment: the client's payload plus `accepted`. */
export const submitted = (paidFor: PaymentRequirement, payload: unknown): SubmittedPayment => {
  const accepted = {
    scheme: paidFor.scheme,
    network: paidFor.network,
    asset: paidFor.asset,
    amount: paidFor.amount.toString(),
    payTo: paidFor.payTo
  }
  return {
    x402Version: 2,
    scheme: paidFor.scheme,
    network: paidFor.network,
    accepted: Option.some(accepted),
    payload,
    raw: { x402Version: 2, accepted, payload }
  }
}

/** Pays `paidFor` with the official @x402/evm exact client scheme (EIP-3009), signer = a viem account. */
export const payEvm = (account: PrivateKeyAccount, paidFor: PaymentRequirement) =>
  Effect.promise(async () => {
    const result = await new ExactEvmScheme(account).createPaymentPayload(2, toX402(paidFor))
    return submitted(paidFor, result.payload)
  })

export const SOLANA_RPC = "http://solana-rpc.test/"

/** Pays `paidFor` with the official @x402/svm exact client scheme; its mint lookup goes to the mocked RPC. */
export const paySolana = (buyer: KeyPairSigner, paidFor: PaymentRequirement) =>
  Effect.promise(async () => {
    const result = await new ExactSvmScheme(buyer, { rpcUrl: SOLANA_RPC }).createPaymentPayload(2, toX402(paidFor))
    return submitted(paidFor, result.payload)
  })

/** The 82-byte SPL mint layout: authority option + key, supply, decimals, initialized, freeze option + key. */
const mintAccountData = (decimals: number): string => {
  const data = new Uint8Array(82)
  const view = new DataView(data.buffer)
  view.setUint32(0, 1, true)
  data.set(getAddressEncoder().encode(TOKEN_PROGRAM as Address), 4) // any 32 bytes serve as the mint authority
  view.setBigUint64(36, 1_000_000_000_000n, true)
  data[44] = decimals
  data[45] = 1
  return getBase64Decoder().decode(data)
}

/**
 * A Solana JSON-RPC that knows the test USDC mint (Token program, 6 decimals) and nothing else: any other
 * call (such as getLatestBlockhash) is answered with an error, proving the client took the blockhash from
 * the requirement's `extra.recentBlockhash`.
 */
export const solanaRpc = setupServer(
  http.post(SOLANA_RPC, async ({ request }) => {
    const body = (await request.json()) as { id: unknown; method: string; params: ReadonlyArray<unknown> }
    if (body.method === "getAccountInfo" && body.params[0] === solanaFacts(false).asset) {
      return HttpResponse.json({
        jsonrpc: "2.0",
        id: body.id,
        result: {
          context: { slot: 1 },
          value: {
            data: [mintAccountData(6), "base64"],
            executable: false,
            lamports: 1_461_600,
            owner: TOKEN_PROGRAM,
            rentEpoch: 0,
            space: 82
          }
        }
      })
    }
    return HttpResponse.json({ jsonrpc: "2.0", id: body.id, error: { code: -32601, message: `unexpected ${body.method}` } })
  })
)

/** Flips one bit of the byte at `index` (negative counts from the end) of a base64 string's bytes. */
export const flipBase64Byte = (base64: string, index: number): string => {
  const bytes = Uint8Array.from(getBase64Encoder().encode(base64))
  const at = index < 0 ? bytes.length + index : index
  bytes[at] = bytes[at]! ^ 0x01
  return getBase64Decoder().decode(bytes)
}

export const testBase = baseFacts(false)
export const testSolana = solanaFacts(false)
