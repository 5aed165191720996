/**
 * The webhook sender (`sale.settled` over HTTPS, signed, with the private-network policy) and its signature. Receivers want `repomarket/webhooks`, which depends on nothing.
 *
 * @packageDocumentation
 */
export { SIGNATURE_HEADER, signatureHeader, verifyWebhookSignature } from "../../adapters/webhook/Signature.js"
export { checkTarget, isForbiddenAddress, type TargetVerdict } from "../../adapters/webhook/TargetPolicy.js"
export { WebhookSenderHttp } from "../../adapters/webhook/WebhookSenderHttp.js"
