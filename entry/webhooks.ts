/**
 * For receivers of repomarket's webhooks: the signature check and the event types. Depends on nothing but
 * `node:crypto` (no `effect`, nothing else of repomarket), so a receiver's bundle stays a few hundred bytes.
 *
 * @packageDocumentation
 */
export { SIGNATURE_HEADER, signatureHeader, verifyWebhookSignature } from "../adapters/webhook/Signature.js"
export type { SaleNetwork, SaleSettledData, SaleSettledEvent, WebhookEventBody } from "../adapters/webhook/SaleSettledEvent.js"
