/**
 * API key format: `rmkt_` + 30 random base62 characters + a 6-character base62 CRC32 of those 30, so secret
 * scanners can recognise a real key offline without asking the service.
 */
export const API_KEY_PREFIX = "rmkt_"
/** How many random base62 characters follow the prefix. */
export const API_KEY_RANDOM_LENGTH = 30
const CHECKSUM_LENGTH = 6
/** The base62 alphabet of API keys, in digit-value order. */
export const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

const CRC_TABLE = (() => {
  const table = new Uint32Array(256)
  for (let n = 0; n < 256; n++) {
    let c = n
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1
    table[n] = c >>> 0
  }
  return table
})()

/** CRC-32 (IEEE) of the UTF-8 bytes of an ASCII string. */
export const crc32 = (ascii: string): number => {
  let crc = 0xffffffff
  for (let i = 0; i < ascii.length; i++) crc = CRC_TABLE[(crc ^ ascii.charCodeAt(i)) & 0xff]! ^ (crc >>> 8)
  return (crc ^ 0xffffffff) >>> 0
}

/** `value` in base62, left-padded with zeros to `width` characters (the key's checksum). */
export const toBase62 = (value: number, width: number): string => {
  let out = ""
  let v = value
  do {
    out = BASE62[v % 62] + out
    v = Math.floor(v / 62)
  } while (v > 0)
  return out.padStart(width, "0")
}

/**
 * Maps random bytes to base62 characters without bias (bytes >= 248 are skipped). Returns fewer than
 * `length` characters only if the bytes ran out; callers ask for more.
 */
export const base62FromBytes = (bytes: Uint8Array, length: number): string => {
  let out = ""
  for (const b of bytes) {
    if (out.length === length) break
    if (b < 248) out += BASE62[b % 62]
  }
  return out
}

/** The full API key for 30 random base62 characters: prefix, the characters, their checksum. */
export const formatApiKey = (random30: string): string =>
  `${API_KEY_PREFIX}${random30}${toBase62(crc32(random30), CHECKSUM_LENGTH)}`

const KEY_SHAPE = new RegExp(`^${API_KEY_PREFIX}[0-9A-Za-z]{${API_KEY_RANDOM_LENGTH + CHECKSUM_LENGTH}}$`)

/** True when the string is shaped like a key and its checksum matches. */
export const isWellFormedApiKey = (candidate: string): boolean => {
  if (!KEY_SHAPE.test(candidate)) return false
  const body = candidate.slice(API_KEY_PREFIX.length, API_KEY_PREFIX.length + API_KEY_RANDOM_LENGTH)
  return formatApiKey(body) === candidate
}

/** The last four characters, shown in key lists so a seller can tell keys apart. */
export const apiKeyLast4 = (key: string): string => key.slice(-4)
