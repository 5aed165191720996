import { BlockList, isIP } from "node:net"
import { type HttpApp, HttpServerRequest } from "@effect/platform"
import { Config, ConfigError, Effect, Either, Option } from "effect"

/** An IPv4 address written as IPv6 (`::ffff:10.0.0.1`, as a dual-stack socket reports it) reads as IPv4. */
const plain = (address: string): string => {
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(address)
  return mapped === null ? address : mapped[1]!
}

const familyOf = (address: string): "ipv4" | "ipv6" | undefined => {
  const family = isIP(address)
  return family === 4 ? "ipv4" : family === 6 ? "ipv6" : undefined
}

/** The proxies (load balancers) in front of this host, by address or CIDR range. */
export interface TrustedProxies {
  /** Whether a connection from `address` comes from one of them. */
  readonly trusts: (address: string) => boolean
}

/**
 * Reads `a.b.c.d`, `a.b.c.d/n`, an IPv6 address or `addr/n`, separated by commas or spaces; Left names the
 * first entry that is none of these (the entry is shown: addresses are not secrets).
 */
export const parseTrustedProxies = (raw: string): Either.Either<TrustedProxies, string> => {
  const list = new BlockList()
  for (const entry of raw.split(/[\s,]+/).filter((e) => e !== "")) {
    const [address = "", prefix, extra] = entry.split("/")
    const family = familyOf(plain(address))
    const bits = prefix === undefined ? undefined : /^\d{1,3}$/.test(prefix) ? Number(prefix) : Number.NaN
    if (family === undefined || extra !== undefined || (bits !== undefined && !(bits <= (family === "ipv4" ? 32 : 128)))) {
      return Either.left(`"${entry}" is not an IP address or CIDR range`)
    }
    if (bits === undefined) list.addAddress(plain(address), family)
    else list.addSubnet(plain(address), bits, family)
  }
  return Either.right({
    trusts: (address) => {
      const a = plain(address)
      const family = familyOf(a)
      return family !== undefined && list.check(a, family)
    }
  })
}

/**
 * The client's address for a request that reached us from `peer` with `X-Forwarded-For: forwarded`: the
 * peer itself unless it is a trusted proxy; otherwise the hops are read from the right (each proxy appends
 * the address it was reached from) and the first one that is not a trusted proxy is the client. Anything a
 * client wrote itself sits to the left of that and is never read, so it cannot dodge a limit. An entry that
 * is not an address stops the walk at the last trusted hop.
 */
export const clientBehindProxies = (proxies: TrustedProxies, peer: string, forwarded: string | undefined): string => {
  let client = plain(peer)
  if (forwarded === undefined) return client
  const hops = forwarded.split(",").map((h) => h.trim())
  for (let i = hops.length - 1; i >= 0 && proxies.trusts(client); i--) {
    const hop = plain(hops[i]!)
    if (familyOf(hop) === undefined) break
    client = hop
  }
  return client
}

/**
 * `TRUSTED_PROXIES`: the load balancers or reverse proxies in front of this host (addresses or CIDR ranges,
 * comma-separated). Unset, the socket's peer is the client, and `X-Forwarded-For` is never read.
 */
export const TrustedProxiesConfig: Config.Config<Option.Option<TrustedProxies>> = Config.option(
  Config.string("TRUSTED_PROXIES").pipe(
    Config.mapOrFail((raw) =>
      raw.trim() === ""
        ? Either.right(Option.none())
        : Either.map(
          Either.mapLeft(parseTrustedProxies(raw), (why) => ConfigError.InvalidData(["TRUSTED_PROXIES"], why)),
          Option.some
        )
    )
  )
).pipe(Config.map(Option.flatten))

/** The app with each request's `remoteAddress` made the client's address behind the trusted proxies. */
export const behindTrustedProxies = <E, R>(app: HttpApp.Default<E, R>, proxies: TrustedProxies): HttpApp.Default<E, R> =>
  Effect.updateService(app, HttpServerRequest.HttpServerRequest, (req) =>
    Option.match(req.remoteAddress, {
      onNone: () => req,
      onSome: (peer) => {
        const forwarded = req.headers["x-forwarded-for"]
        const client = clientBehindProxies(proxies, peer, forwarded)
        return client === peer ? req : req.modify({ remoteAddress: client })
      }
    }))
