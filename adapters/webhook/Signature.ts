import { createHmac, timingSafeEqual } from "node:crypto"

/** The signature header of `sale.settled` deliveries. */
export const SIGNATURE_HEADER = "X-Service-Signature"

const hmacHex = (secret: string, timestamp: number, rawBody: string): string =>
  createHmac("sha256", secret).update(`${timestamp}.${rawBody}`, "utf8").digest("hex")

/** `t=<unix>,v1=<hex hmac-sha256 of "<t>.<raw body>">`, keyed by the webhook secret. */
export const signatureHeader = (secret: string, timestamp: number, rawBody: string): string =>
  `t=${timestamp},v1=${hmacHex(secret, timestamp, rawBody)}`

/**
 * Verifies a `sale.settled` delivery: the header must carry a timestamp within `toleranceSeconds` of now
 * (default 300, against replays) and a `v1` HMAC of `"<t>.<raw body>"` under the secret. Pass the body
 * exactly as received (bytes decoded as UTF-8), before any JSON parsing.
 */
export const verifyWebhookSignature = (
  secret: string,
  header: string | null | undefined,
  rawBody: string | Uint8Array,
  options: { readonly toleranceSeconds?: number; readonly now?: number } = {}
): boolean => {
  if (typeof header !== "string" || header.length > 2048) return false
  const parts = new Map<string, Array<string>>()
  for (const item of header.split(",")) {
    const eq = item.indexOf("=")
    if (eq <= 0) continue
    const key = item.slice(0, eq).trim()
    parts.set(key, [...(parts.get(key) ?? []), item.slice(eq + 1).trim()])
  }
  const t = parts.get("t")?.[0]
  if (t === undefined || !/^\d{1,12}$/.test(t)) return false
  const timestamp = Number(t)
  const now = Math.floor((options.now ?? Date.now()) / 1000)
  if (Math.abs(now - timestamp) > (options.toleranceSeconds ?? 300)) return false
  const body = typeof rawBody === "string" ? rawBody : new TextDecoder().decode(rawBody)
  const expected = Buffer.from(hmacHex(secret, timestamp, body), "utf8")
  // Several v1 values may be present while a secret rotates; any match is enough.
  return (parts.get("v1") ?? []).some((candidate) => {
    const given = Buffer.from(candidate, "utf8")
    return given.length === expected.length && timingSafeEqual(given, expected)
  })
}
