import { Context } from "effect"

/** The public origin every absolute URL is built from (`BASE_URL`), without a trailing slash. */
export class PublicOrigin extends Context.Tag("ports/PublicOrigin")<PublicOrigin, {
  readonly baseUrl: string
}>() {}
