/** How long a Sign-In-With-X challenge may be signed and redeemed after it was issued. */
export const SIWX_CHALLENGE_TTL_MS = 5 * 60 * 1000

/**
 * Challenge nonces are stateless, so any host can check what any host issued, and a 402 served again from
 * the front door's memory stays good: 16 hex random, the issue time (unix seconds, 8 hex), and the MAC of
 * both bound to the checkout URL they were issued for. Only hex: SIWE allows alphanumerics only. Being our
 * own and unexpired is checked here; being unspent, by the caller (SingleUse).
 */
const NONCE = /^([0-9a-f]{16})([0-9a-f]{8})([0-9a-f]{64})$/

const messageOf = (random: string, seconds: string, uri: string) => `siwx-nonce:${random}:${seconds}:${uri}`

const hex = (bytes: Uint8Array) => Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("")

/**
 * A stateless Sign-In-With-X challenge nonce for the checkout URL `uri`: 8 random bytes as hex, the issue time, and
 * the MAC of both bound to `uri`, so any host can check it with `openSiwxNonce`.
 */
export const mintSiwxNonce = (random: Uint8Array, issuedAt: Date, uri: string, mac: (message: string) => string): string => {
  const r = hex(random.subarray(0, 8)).padEnd(16, "0")
  const seconds = Math.floor(issuedAt.getTime() / 1000).toString(16).padStart(8, "0")
  return `${r}${seconds}${mac(messageOf(r, seconds, uri))}`
}

/** The issue time of a nonce this service minted for `uri`, or null for anything else. */
export const openSiwxNonce = (
  nonce: string,
  uri: string,
  verify: (message: string, tag: string) => boolean
): { readonly issuedAt: Date; readonly expiresAt: Date } | null => {
  const parts = NONCE.exec(nonce)
  if (parts === null || !verify(messageOf(parts[1]!, parts[2]!, uri), parts[3]!)) return null
  const issuedAt = new Date(parseInt(parts[2]!, 16) * 1000)
  return { issuedAt, expiresAt: new Date(issuedAt.getTime() + SIWX_CHALLENGE_TTL_MS) }
}
