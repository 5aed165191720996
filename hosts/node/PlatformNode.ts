import { Effect } from "effect"
import { importOptional } from "../../codec/OptionalPackages.js"

/**
 * `@effect/platform-node` (Effect's Node HTTP server), an optional peer dependency: only the Node server and
 * the `node:http` handler need it, so `repomarket/http` loads without it (the web-standard handler, the
 * Lambda handlers) and imports it on first use. Missing, the failure names the package and how to install it.
 */
export const loadPlatformNode = () =>
  importOptional("repomarket's Node HTTP server and node:http handler", ["@effect/platform-node"], () => import("@effect/platform-node"))

/** {@link loadPlatformNode} as an effect (a missing package is a defect: nothing can serve without it). */
export const PlatformNode = Effect.promise(loadPlatformNode)
