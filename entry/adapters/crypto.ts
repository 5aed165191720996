/**
 * Secrets at rest: AES-256-GCM sealing under a rotating key ring (`SECRET_KEYS`).
 *
 * @packageDocumentation
 */
export { makeSecretBox, SecretBoxAesGcm, SecretBoxTest } from "../../adapters/crypto/SecretBoxAesGcm.js"
export { type KeyRing, keyRingOf, loadKeyRing, parseSecretKeys } from "../../adapters/crypto/SecretKeys.js"
