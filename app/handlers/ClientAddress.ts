import { isIP } from "node:net"
import { HttpServerRequest } from "@effect/platform"
import { Effect, Option } from "effect"

/** The eight 16-bit groups of an address `isIP` accepts as IPv6 (zone id removed), embedded IPv4 tail included. */
const groupsOf = (address: string): Array<number> => {
  let text = address
  const lastColon = text.lastIndexOf(":")
  const tail = text.slice(lastColon + 1)
  if (tail.includes(".")) {
    const [a = 0, b = 0, c = 0, d = 0] = tail.split(".").map(Number)
    text = `${text.slice(0, lastColon + 1)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`
  }
  const [head = "", rest] = text.split("::")
  const left = head === "" ? [] : head.split(":")
  const right = rest === undefined || rest === "" ? [] : rest.split(":")
  const zeros = Array<string>(8 - left.length - right.length).fill("0")
  return [...left, ...zeros, ...right].map((group) => parseInt(group, 16))
}

/** Groups written as RFC 5952 writes them: lower-case hex, the longest run of two or more zero groups (the first of equals) as `::`. */
const ipv6Text = (groups: ReadonlyArray<number>): string => {
  let best = { at: -1, length: 1 }
  for (let i = 0; i < groups.length;) {
    if (groups[i] !== 0) {
      i++
      continue
    }
    let j = i
    while (j < groups.length && groups[j] === 0) j++
    if (j - i > best.length) best = { at: i, length: j - i }
    i = j
  }
  const hex = groups.map((g) => g.toString(16))
  if (best.at < 0) return hex.join(":")
  return `${hex.slice(0, best.at).join(":")}::${hex.slice(best.at + best.length).join(":")}`
}

/**
 * What a per-client limit counts by, for a client at `address`: an IPv4 address as it is; an IPv6 address
 * by its /64 (`2001:db8:1:2::/64`), since whoever holds one address of a /64 holds them all (a subscriber's
 * or a server's usual assignment) and could otherwise take a fresh address for every try; an IPv4 address
 * written as IPv6 (`::ffff:198.51.100.7`, `::ffff:c633:6407`, as a dual-stack socket or a platform reports
 * it) as that IPv4 address. Every spelling of one IPv6 address (`::` compression, upper case, leading zeros,
 * a zone id `%eth0`, a dotted IPv4 tail, brackets) gives the same key. Anything that is not an IP address
 * (an embedder's own identifier, "unknown") is its own key, unchanged.
 */
export const clientKey = (address: string): string => {
  const bare = address.startsWith("[") && address.endsWith("]") ? address.slice(1, -1) : address
  if (isIP(bare) === 4) return bare
  const unzoned = bare.split("%")[0]!
  if (isIP(unzoned) !== 6) return address
  const groups = groupsOf(unzoned)
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    const [high = 0, low = 0] = groups.slice(6)
    return `${high >> 8}.${high & 0xff}.${low >> 8}.${low & 0xff}`
  }
  return `${ipv6Text([...groups.slice(0, 4), 0, 0, 0, 0])}/64`
}

/**
 * The caller's key for per-client limits: `clientKey` of the socket's peer, or behind the proxies
 * `TRUSTED_PROXIES` names, of the first address in X-Forwarded-For (read from the right) that is not one of
 * them (TrustedProxies.ts); on Lambda of the event's `sourceIp`, embedded of the embedder's `ClientAddress`
 * (each host sets the request's `remoteAddress`, and every limit reads it here). Without that setting
 * X-Forwarded-For is never read: a caller could set it to dodge a limit.
 */
export const clientAddress = Effect.map(HttpServerRequest.HttpServerRequest, (req) =>
  Option.match(req.remoteAddress, { onNone: () => "unknown", onSome: clientKey }))
