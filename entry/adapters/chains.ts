/**
 * The Chains port over Base and Solana: address normalisation, network facts, payment identity and the local payment check per chain.
 *
 * @packageDocumentation
 */
export { ChainsLive } from "../../adapters/chains/ChainsLive.js"

// Types of the core (the same as `repomarket`'s) and of this family that this entry's signatures name, so a
// consumer can name them too. Types only: the values come from the entry that owns them.
export type { Chains } from "../../ports/Chains.js"
