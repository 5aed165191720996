import { Layer } from "effect"
import { Accounts } from "./Accounts.js"
import { Auth } from "./Auth.js"
import { Catalog } from "./Catalog.js"
import { HostConnection } from "./HostConnection.js"
import { Listings } from "./Listings.js"
import { Purchases } from "./Purchases.js"
import { Redownloads } from "./Redownloads.js"
import { Settlements } from "./Settlements.js"
import { Sitemap } from "./Sitemap.js"
import { Storefront } from "./Storefront.js"
import { Dashboard } from "./Dashboard.js"
import { Webhooks } from "./Webhooks.js"

/**
 * Every use case over whatever ports the host provides: the one place the use cases are wired to each other. An
 * embedder that needs no HTTP provides the ports (e.g. `memoryPorts()` from `repomarket/testing`) and runs the use
 * cases directly.
 */
export const UseCasesLive = Layer.mergeAll(
  Auth.Default,
  Accounts.Default,
  Catalog.Default,
  Storefront.Default,
  Redownloads.Default,
  HostConnection.Default,
  Dashboard.Default,
  Webhooks.Default,
  Sitemap.Default
).pipe(
  Layer.provideMerge(Purchases.Default),
  Layer.provideMerge(Listings.Default),
  Layer.provideMerge(Settlements.Default)
)
