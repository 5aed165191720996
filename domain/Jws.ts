/**
 * JWS compact serialization and base64url, browser-safe (no Buffer): the parsing the signed offers and receipts
 * (x402 `offer-receipt`) need on both sides, the marketplace's and a verifier's. No signature is checked here.
 */

/** Whether `value` is a plain JSON object (not null, not an array). */
export const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** base64url (no padding) → bytes; null when it is not base64url. Browser-safe (no Buffer). */
export const fromBase64Url = (text: string): Uint8Array | null => {
  if (!/^[A-Za-z0-9_-]*$/.test(text) || text.length % 4 === 1) return null
  const padded = text.replace(/-/g, "+").replace(/_/g, "/") + "===".slice((text.length + 3) % 4)
  const binary = atob(padded)
  const bytes = new Uint8Array(binary.length)
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i)
  return bytes
}

/** bytes → base64url without padding. Browser-safe (no Buffer). */
export const toBase64Url = (bytes: Uint8Array): string => {
  let binary = ""
  for (const byte of bytes) binary += String.fromCharCode(byte)
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "")
}

const utf8 = new TextDecoder("utf-8", { fatal: true })

/** The three parts of a JWS compact serialization, decoded (header and payload as JSON); null if malformed. */
export const parseJws = (jws: string): {
  readonly header: Record<string, unknown>
  readonly payload: unknown
  readonly signingInput: string
  readonly signature: Uint8Array
} | null => {
  const parts = jws.split(".")
  if (parts.length !== 3) return null
  const [h, p, s] = parts as [string, string, string]
  const header = fromBase64Url(h)
  const payload = fromBase64Url(p)
  const signature = fromBase64Url(s)
  if (header === null || payload === null || signature === null) return null
  try {
    const parsedHeader: unknown = JSON.parse(utf8.decode(header))
    if (!isRecord(parsedHeader)) return null
    return { header: parsedHeader, payload: JSON.parse(utf8.decode(payload)), signingInput: `${h}.${p}`, signature }
  } catch {
    return null
  }
}
