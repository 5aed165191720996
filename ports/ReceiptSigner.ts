import { Context, type Effect } from "effect"

/** One published verification key: a JWK (Ed25519, `kty: "OKP"`) with the DID URL that names it as `kid`. */
export interface PublicKeyJwk {
  /** Key type: octet key pair. */
  readonly kty: "OKP"
  /** The curve. */
  readonly crv: "Ed25519"
  /** The public key, base64url. */
  readonly x: string
  /** The key's DID URL (`did:web:<host>#<id>`), the `kid` of every JWS it signs. */
  readonly kid: string
  /** The JWS algorithm it signs with. */
  readonly alg: "EdDSA"
  /** Signing only. */
  readonly use: "sig"
}

/**
 * The marketplace's own signing key for x402 `offer-receipt` artifacts: signs claims as a JWS (compact
 * serialization, EdDSA, JCS-canonical payload, `kid` in the header) with the current key, and publishes every
 * key that verifies (the current one first, then the keys it rotated from), so an old receipt still verifies.
 * Its keys belong to one deployment (its `did`): another deployment's signer, even over the same secret keys,
 * has other keys.
 */
export class ReceiptSigner extends Context.Tag("repomarket/ReceiptSigner")<ReceiptSigner, {
  /** The claims as a JWS compact string signed by the current key. */
  readonly sign: (claims: object) => Effect.Effect<string>
  /** An Ed25519 signature of `bytes` by the current key (a DSSE envelope's, over its PAE), with that key's id. */
  readonly signBytes: (bytes: Uint8Array) => Effect.Effect<{ readonly kid: string; readonly signature: Uint8Array }>
  /**
   * The id (`kid`) of the key that signs now, `keys[0].kid`: what a DSSE statement names inside its payload as
   * its signer, since an envelope's own `keyid` is not signed.
   */
  readonly kid: string
  /** The public origin (`BASE_URL`) the keys were derived for and are named after. */
  readonly origin: string
  /** The DID the keys belong to (`did:web:<host>`), whose document lists `keys`. */
  readonly did: string
  /** Every key a signature of this marketplace may verify with: the signing one first. */
  readonly keys: ReadonlyArray<PublicKeyJwk>
  /** SHA-256 (lower-case hex) and length of bytes the marketplace delivers itself (the test twin's goods). */
  readonly digest: (bytes: Uint8Array) => { readonly sha256: string; readonly size: number }
}>() {}
