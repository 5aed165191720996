import { Context } from "effect"

/** The public origin every absolute URL is built from (`BASE_URL`), without a trailing slash. */
export class PublicOrigin extends Context.Tag("repomarket/PublicOrigin")<PublicOrigin, {
  readonly baseUrl: string
  /**
   * True when nobody chose `baseUrl` (it is a default such as `http://localhost:3000`): a host that knows
   * where it listens (`startNodeServer`, asked for port 0 or another port) builds links from that instead.
   */
  readonly isDefault?: boolean
}>() {}
