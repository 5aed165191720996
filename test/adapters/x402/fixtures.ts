import { AtomicAmount } from "../../../domain/Money.js"
import type { PaymentRequirement } from "../../../ports/PaymentFacilitator.js"

export const RESOURCE = "https://market.example/checkout/chk_1/test"
export const DESCRIPTION = "octo/widgets: source at the default branch"
export const BASE_PAYTO = "0x209693Bc6afc0C5328bA36FaF03C514EF312287C"
export const SOLANA_PAYTO = "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM"
export const SOLANA_FEE_PAYER = "CKPKJWNdJEqa81x7CkZ14BVPiY6y16Sxs7owznqtWYp5"

export const baseSepolia: PaymentRequirement = {
  chain: "base",
  livemode: false,
  scheme: "exact",
  network: "eip155:84532",
  v1Network: "base-sepolia",
  asset: "0x036CbD53842c5426634e7929541eC2318f3dCF7e",
  amount: AtomicAmount.make(10_000n),
  payTo: BASE_PAYTO,
  maxTimeoutSeconds: 300,
  resource: RESOURCE,
  description: DESCRIPTION,
  extra: { name: "USDC", version: "2" }
}

export const baseMainnet: PaymentRequirement = {
  ...baseSepolia,
  livemode: true,
  network: "eip155:8453",
  v1Network: "base",
  asset: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
  amount: AtomicAmount.make(12_340_000n),
  resource: "https://market.example/checkout/chk_1",
  extra: { name: "USD Coin", version: "2" }
}

export const solanaMainnet: PaymentRequirement = {
  chain: "solana",
  livemode: true,
  scheme: "exact",
  network: "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp",
  v1Network: "solana",
  asset: "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v",
  amount: AtomicAmount.make(12_340_000n),
  payTo: SOLANA_PAYTO,
  maxTimeoutSeconds: 300,
  resource: "https://market.example/checkout/chk_1",
  description: DESCRIPTION,
  extra: { feePayer: SOLANA_FEE_PAYER }
}

export const SPEC_AUTHORIZATION = {
  signature:
    "0x2d6a7588d6acca505cbf0d9a4a227e0c52c6c34008c8e8986a1283259764173608a2ce6496642e377d6da8dbbf5836e9bd15092f9ecab05ded3d6293af148b571c",
  authorization: {
    from: "0x857b06519E91e3A54538791bDbb0E22373e36b66",
    to: BASE_PAYTO,
    value: "10000",
    validAfter: "1740672089",
    validBefore: "1740672154",
    nonce: "0xf3746613c2d920b5fdabc0856f2aeb2d4f88ee6037b8cc5d04a71a4462f13480"
  }
}

/** The x402 spec's example EIP-3009 payment as a v2 `PAYMENT-SIGNATURE` object, for Base Sepolia. */
export const specPayloadV2 = () => ({
  x402Version: 2,
  resource: { url: RESOURCE, description: DESCRIPTION, mimeType: "application/gzip" },
  accepted: {
    scheme: "exact",
    network: "eip155:84532",
    amount: "10000",
    asset: "0x036CbD53842c5426634e7929541eC2318f3dCF7e",
    payTo: BASE_PAYTO,
    maxTimeoutSeconds: 300,
    extra: { name: "USDC", version: "2" }
  },
  payload: SPEC_AUTHORIZATION
})

/** The same payment as a v1 `X-PAYMENT` object. */
export const specPayloadV1 = (network = "base-sepolia") => ({
  x402Version: 1,
  scheme: "exact",
  network,
  payload: SPEC_AUTHORIZATION
})

export const b64 = (value: unknown): string => Buffer.from(JSON.stringify(value), "utf8").toString("base64")
