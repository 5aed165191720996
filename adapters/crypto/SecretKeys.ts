import { randomBytes } from "node:crypto"
import { link, mkdir, readFile, unlink, writeFile } from "node:fs/promises"
import { join } from "node:path"
import { Config, ConfigError, Effect, Either, Option, Redacted } from "effect"

/** Key ids name a key inside sealed values, so they must never contain the `.` separator. */
export const KID = /^[A-Za-z0-9_-]{1,32}$/
const BASE64_32_BYTES = /^[A-Za-z0-9+/_-]{43}=?$/
const FORMAT = "expected kid:base64key[,kid2:base64key2] with each key 32 bytes (AES-256)"

/** The keys a SecretBox may use: the first one seals, every one opens (so keys can rotate). */
export interface KeyRing {
  /** The key that seals, with its id (written into every sealed secret). */
  readonly primary: { readonly kid: string; readonly key: Redacted.Redacted<Uint8Array> }
  /** Every key that opens, by id. */
  readonly byKid: ReadonlyMap<string, Redacted.Redacted<Uint8Array>>
}

/** A key ring of the given keys: the first seals, all open. */
export const keyRingOf = (
  keys: readonly [{ readonly kid: string; readonly key: Uint8Array }, ...ReadonlyArray<{ readonly kid: string; readonly key: Uint8Array }>]
): KeyRing => ({
  primary: { kid: keys[0].kid, key: Redacted.make(keys[0].key) },
  byKid: new Map(keys.map(({ key, kid }) => [kid, Redacted.make(key)] as const))
})

/**
 * Parses `kid:base64key,...`. Error messages never repeat a key, nor a malformed entry's text (which may be
 * a key pasted without its id); only well-formed key ids are quoted.
 */
export const parseSecretKeys = (text: string): Either.Either<KeyRing, string> => {
  if (text.trim() === "") return Either.left(`it is empty; ${FORMAT}`)
  const entries = text.split(",").map((entry) => entry.trim())
  const keys: Array<{ kid: string; key: Buffer }> = []
  for (const [index, entry] of entries.entries()) {
    const where = `entry ${index + 1}`
    const colon = entry.indexOf(":")
    if (colon < 0) return Either.left(`${where} has no "kid:" prefix; ${FORMAT}`)
    const kid = entry.slice(0, colon)
    const encoded = entry.slice(colon + 1)
    if (!KID.test(kid)) return Either.left(`${where} has an invalid key id (allowed: [A-Za-z0-9_-]{1,32})`)
    if (keys.some((k) => k.kid === kid)) return Either.left(`key id "${kid}" appears twice`)
    const key = Buffer.from(encoded, "base64")
    if (!BASE64_32_BYTES.test(encoded) || key.length !== 32) {
      return Either.left(`the key of "${kid}" is not base64 of exactly 32 bytes`)
    }
    keys.push({ kid, key })
  }
  const [first, ...rest] = keys
  return first === undefined ? Either.left(`no keys; ${FORMAT}`) : Either.right(keyRingOf([first, ...rest]))
}

// Nested after mapOrFail so that the error's path names the setting.
const secretKeysConfig = Config.redacted().pipe(
  Config.mapOrFail((value) =>
    parseSecretKeys(Redacted.value(value)).pipe(
      Either.mapLeft((reason) => ConfigError.InvalidData([], `SECRET_KEYS is malformed: ${reason}`))
    )
  ),
  Config.nested("SECRET_KEYS")
)

const DEV_KID = "dev1"
const DEV_FILE = "secret-keys"

const dataDirError = (file: string, what: string) =>
  ConfigError.InvalidData(["DATA_DIR"], `${what} (${file}); set SECRET_KEYS or fix DATA_DIR`)

const errorCode = (error: unknown): string =>
  typeof error === "object" && error !== null && "code" in error ? String(error.code) : "unknown error"

const readKeyFile = (file: string) =>
  Effect.tryPromise({
    try: () => readFile(file, "utf8").then((text) => Option.some(text)),
    catch: (error) => error
  }).pipe(
    Effect.catchIf((error) => errorCode(error) === "ENOENT", () => Effect.succeed(Option.none<string>())),
    Effect.mapError((error) => dataDirError(file, `cannot read the development key file: ${errorCode(error)}`))
  )

/** Writes a fresh key without ever clobbering one: a temporary file is hard-linked into place. */
const createKeyFile = (dir: string, file: string) =>
  Effect.tryPromise({
    try: async () => {
      await mkdir(dir, { recursive: true, mode: 0o700 })
      const temporary = join(dir, `.${DEV_FILE}.${randomBytes(6).toString("hex")}.tmp`)
      await writeFile(temporary, `${DEV_KID}:${randomBytes(32).toString("base64")}\n`, { mode: 0o600, flag: "wx" })
      try {
        await link(temporary, file)
      } catch (error) {
        // Another process created it first: theirs wins, so both use the same key.
        if (errorCode(error) !== "EEXIST") throw error
      } finally {
        await unlink(temporary)
      }
      return await readFile(file, "utf8")
    },
    catch: (error) => dataDirError(file, `cannot create the development key file: ${errorCode(error)}`)
  })

/** The development key under `DATA_DIR`, generated on first use; never meant for production. */
const developmentKeyRing = Effect.gen(function*() {
  const dir = yield* Config.string("DATA_DIR").pipe(Config.withDefault("./.data"))
  const file = join(dir, DEV_FILE)
  const existing = yield* readKeyFile(file)
  const text = Option.isSome(existing) ? existing.value : yield* createKeyFile(dir, file)
  const ring = yield* parseSecretKeys(text.trim()).pipe(
    Either.mapLeft((reason) => dataDirError(file, `the development key file is malformed: ${reason}`))
  )
  yield* Effect.logWarning(
    `SECRET_KEYS is not set: using a generated development key from ${file}. ` +
      "Production must set SECRET_KEYS (kid:base64key, 32-byte AES-256 keys)."
  )
  return ring
})

/** Keys from `SECRET_KEYS`, else the development key file; a malformed value stops start-up. */
export const loadKeyRing: Effect.Effect<KeyRing, ConfigError.ConfigError> = Config.option(secretKeysConfig).pipe(
  Effect.flatMap(Option.match({ onNone: () => developmentKeyRing, onSome: Effect.succeed }))
)
