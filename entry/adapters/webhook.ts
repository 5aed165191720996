/**
 * The webhook sender (`sale.settled` over HTTPS, signed, with the private-network policy) and its signature. Receivers want `repomarket/webhooks`, which depends on nothing.
 *
 * @packageDocumentation
 */
export { SIGNATURE_HEADER, signatureHeader, verifyWebhookSignature } from "../../adapters/webhook/Signature.js"
export { checkTarget, isForbiddenAddress, type TargetVerdict } from "../../adapters/webhook/TargetPolicy.js"
export { WebhookSenderHttp } from "../../adapters/webhook/WebhookSenderHttp.js"

// Types of the core (the same as `repomarket`'s) and of this family that this entry's signatures name, so a
// consumer can name them too. Types only: the values come from the entry that owns them.
export type { WebhookSender } from "../../ports/WebhookSender.js"
