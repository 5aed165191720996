import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { type PublicKeyJwk, ReceiptSigner } from "../../ports/ReceiptSigner.js"

/** Where the marketplace's receipt-signing keys are published (a JWK Set, RFC 7517). */
export const JWKS_PATH = "/.well-known/jwks.json"
/** Its did:web DID document (W3C did:web): what a `kid` such as `did:web:market.example#k1` resolves to. */
export const DID_PATH = "/.well-known/did.json"

// Short enough that a rotation reaches verifiers within minutes; old keys stay listed, so nothing breaks meanwhile.
const CACHE = "public, max-age=300"

const publicJwk = (k: PublicKeyJwk) => ({ kty: k.kty, crv: k.crv, x: k.x })

/** The DID document listing every key (current first) as a JsonWebKey2020 verification method. */
export const didDocument = (did: string, keys: ReadonlyArray<PublicKeyJwk>) => ({
  "@context": ["https://www.w3.org/ns/did/v1", "https://w3id.org/security/suites/jws-2020/v1"],
  id: did,
  verificationMethod: keys.map((k) => ({ id: k.kid, type: "JsonWebKey2020", controller: did, publicKeyJwk: publicJwk(k) })),
  assertionMethod: keys.map((k) => k.kid)
})

/**
 * `GET /.well-known/jwks.json` and `GET /.well-known/did.json`: the public keys that verify the marketplace's
 * signed offers and receipts, the signing key first and every key it rotated from after it.
 */
export const WellKnownKeysLive = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function*() {
    const signer = yield* ReceiptSigner
    const jwks = HttpServerResponse.unsafeJson({ keys: signer.keys }, { contentType: "application/jwk-set+json", headers: { "cache-control": CACHE } })
    const did = HttpServerResponse.unsafeJson(didDocument(signer.did, signer.keys), { contentType: "application/did+json", headers: { "cache-control": CACHE } })
    yield* router.get(JWKS_PATH, Effect.succeed(jwks))
    yield* router.get(DID_PATH, Effect.succeed(did))
  })
)
