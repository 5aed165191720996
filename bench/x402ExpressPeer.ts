/**
 * The reference peer both purchase benchmarks measure against: Express 5 with `@x402/express`'s
 * `paymentMiddleware` guarding one GET route with one x402 v2 requirement, settled through the given
 * facilitator, answering a fixed body. Kept apart from bench/support.ts so the peer's processes
 * (bench/peer-express.ts) load nothing of repomarket.
 */
import { HTTPFacilitatorClient } from "@x402/core/server"
import type { Network } from "@x402/core/types"
import { ExactEvmScheme } from "@x402/evm/exact/server"
import { paymentMiddleware, x402ResourceServer } from "@x402/express"
import express from "express"

/** The fields of an x402 v2 `accepts` entry the peer sells with. */
export interface PeerRequirement {
  readonly network: string
  readonly payTo: string
  readonly amount: string
  readonly asset: string
  readonly maxTimeoutSeconds: number
  readonly extra?: Record<string, unknown>
}

/** An Express app selling `route` for `requirement`, answering `body` as `mimeType` once paid. */
export const x402ExpressApp = (options: {
  readonly route: string
  readonly requirement: PeerRequirement
  readonly facilitatorUrl: string
  readonly description: string
  readonly mimeType: string
  readonly body: Buffer
}) => {
  const { route, requirement, mimeType, body } = options
  const resourceServer = new x402ResourceServer(new HTTPFacilitatorClient({ url: options.facilitatorUrl }))
    .register(requirement.network as Network, new ExactEvmScheme())
  const app = express()
  app.use(paymentMiddleware(
    {
      [`GET ${route}`]: {
        accepts: {
          scheme: "exact",
          network: requirement.network as Network,
          payTo: requirement.payTo,
          price: { amount: requirement.amount, asset: requirement.asset, extra: { ...requirement.extra } },
          maxTimeoutSeconds: requirement.maxTimeoutSeconds
        },
        description: options.description,
        mimeType
      }
    },
    resourceServer
  ))
  app.get(route, (_req, res) => {
    res.type(mimeType).send(body)
  })
  return app
}
