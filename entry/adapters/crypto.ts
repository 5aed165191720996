/**
 * Secrets at rest: AES-256-GCM sealing under a rotating key ring (`SECRET_KEYS`).
 *
 * @packageDocumentation
 */
export { makeSecretBox, SecretBoxAesGcm, SecretBoxTest } from "../../adapters/crypto/SecretBoxAesGcm.js"
export { type KeyRing, keyRingOf, loadKeyRing, parseSecretKeys } from "../../adapters/crypto/SecretKeys.js"

// Types of the core (the same as `repomarket`'s) and of this family that this entry's signatures name, so a
// consumer can name them too. Types only: the values come from the entry that owns them.
export type { SecretBox } from "../../ports/SecretBox.js"
