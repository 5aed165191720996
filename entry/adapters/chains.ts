/**
 * The Chains port over Base and Solana: address normalisation, network facts, payment identity and the local payment check per chain.
 *
 * @packageDocumentation
 */
export { ChainsLive } from "../../adapters/chains/ChainsLive.js"
