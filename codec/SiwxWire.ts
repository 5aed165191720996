import { declareSIWxExtension, SIGN_IN_WITH_X } from "@x402/extensions/sign-in-with-x"
import type { SiwxChallenge } from "../domain/Payment.js"

/**
 * The `extensions` entry of a v2 `PAYMENT-REQUIRED` object that asks a returning wallet to sign in: the
 * declaration @x402/extensions makes (version, statement, supportedChains, the proof's JSON schema) with this
 * challenge's fields filled in. The reference server fills them per request; here the domain issued them.
 */
export const siwxExtensions = (challenge: SiwxChallenge): Record<string, unknown> => {
  const declared = declareSIWxExtension({ statement: challenge.statement, network: challenge.networks.map((n) => n.network) })[SIGN_IN_WITH_X]!
  return {
    [SIGN_IN_WITH_X]: {
      info: {
        ...declared.info,
        domain: challenge.domain,
        uri: challenge.uri,
        nonce: challenge.nonce,
        issuedAt: challenge.issuedAt.toISOString(),
        expirationTime: challenge.expiresAt.toISOString(),
        resources: [challenge.uri]
      },
      supportedChains: declared.supportedChains.map((c) => ({
        ...c,
        signatureScheme: c.type === "ed25519" ? "siws" : "eip191"
      })),
      schema: declared.schema
    }
  }
}
