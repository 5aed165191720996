import { Effect, Encoding, Redacted } from "effect"
import { SecretBox } from "../../ports/SecretBox.js"
import { API_KEY_RANDOM_LENGTH, base62FromBytes, formatApiKey } from "../rules/ApiKeyFormat.js"

/**
 * Minting of identifiers and bearer secrets, the operations' own: randomness comes from the SecretBox port (a
 * CSPRNG), so minting is a use-case step, not a rule (the model imports no port). Ids carry 128 bits, secrets
 * 256 bits; their formats are the rules' (`rules/ApiKeyFormat.ts`).
 */

const base62 = (length: number) =>
  Effect.gen(function*() {
    const box = yield* SecretBox
    let out = ""
    // Rejection sampling drops ~3% of bytes; ask for more until the length is reached.
    while (out.length < length) out += base62FromBytes(box.randomBytes(length * 2), length - out.length)
    return out
  })

/** A random id with a readable prefix, e.g. `lst_3kT9...` (22 base62 characters, about 131 bits). */
export const newId = <B extends string>(prefix: string): Effect.Effect<B, never, SecretBox> =>
  Effect.map(base62(22), (random) => `${prefix}${random}` as B)

/** An opaque bearer secret: 32 random bytes, base64url. */
export const newSecret = (prefix = ""): Effect.Effect<Redacted.Redacted<string>, never, SecretBox> =>
  Effect.map(SecretBox, (box) => Redacted.make(`${prefix}${Encoding.encodeBase64Url(box.randomBytes(32))}`))

/** A new API key (`rmkt_…`, with its checksum), random from the SecretBox port. */
export const newApiKey: Effect.Effect<Redacted.Redacted<string>, never, SecretBox> = Effect.map(
  base62(API_KEY_RANDOM_LENGTH),
  (random) => Redacted.make(formatApiKey(random))
)
