import { lookup } from "node:dns/promises"
import { BlockList, isIP } from "node:net"

/**
 * Where webhooks may go. Private, loopback, link-local (cloud metadata lives there), carrier-grade NAT,
 * multicast and reserved ranges are refused unless the operator allows private networks (development).
 */
const blocked = new BlockList()
for (const [net, prefix] of [
  ["0.0.0.0", 8], ["10.0.0.0", 8], ["100.64.0.0", 10], ["127.0.0.0", 8], ["169.254.0.0", 16], ["172.16.0.0", 12],
  ["192.0.0.0", 24], ["192.0.2.0", 24], ["192.168.0.0", 16], ["198.18.0.0", 15], ["198.51.100.0", 24],
  ["203.0.113.0", 24], ["224.0.0.0", 4], ["240.0.0.0", 4]
] as const) blocked.addSubnet(net, prefix, "ipv4")
for (const [net, prefix] of [
  ["::", 128], ["::1", 128], ["fc00::", 7], ["fe80::", 10], ["ff00::", 8], ["64:ff9b::", 96], ["2001:db8::", 32], ["100::", 64]
] as const) blocked.addSubnet(net, prefix, "ipv6")

/**
 * Whether an IP address is one a webhook may not reach (private, loopback, link-local, multicast or reserved
 * ranges); true for anything that is not an IP.
 */
export const isForbiddenAddress = (address: string): boolean => {
  const family = isIP(address)
  if (family === 4) return blocked.check(address, "ipv4")
  if (family === 6) {
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)
    return mapped ? blocked.check(mapped[1]!, "ipv4") : blocked.check(address, "ipv6")
  }
  return true
}

/** The outcome of checking a webhook target: the addresses it may be reached at, or why it is refused. */
export type TargetVerdict = { readonly ok: true; readonly addresses: ReadonlyArray<string> } | { readonly ok: false; readonly message: string }

/** Checks scheme and every address the host resolves to. */
export const checkTarget = async (raw: string, allowPrivate: boolean): Promise<TargetVerdict> => {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    return { ok: false, message: "must be an absolute https URL" }
  }
  const host = url.hostname.replace(/^\[|\]$/g, "")
  if (url.protocol !== "https:" && !(allowPrivate && url.protocol === "http:")) {
    return { ok: false, message: "must use https" }
  }
  let addresses: ReadonlyArray<string>
  if (isIP(host)) {
    addresses = [host]
  } else {
    try {
      addresses = (await lookup(host, { all: true, verbatim: true })).map((a) => a.address)
    } catch {
      return { ok: false, message: "host name does not resolve" }
    }
  }
  if (!allowPrivate && addresses.some(isForbiddenAddress)) {
    return { ok: false, message: "must not point to a private, loopback, link-local or metadata address" }
  }
  return { ok: true, addresses }
}
