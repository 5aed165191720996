import { solanaFacts } from "../../domain/ChainFacts.js"

export { caip2FromV1, v1FromCaip2 } from "../../domain/ChainFacts.js"

/** Solana mainnet: the network whose facilitator fee payer live Solana checkouts name. */
export const SOLANA_MAINNET = solanaFacts(true)
