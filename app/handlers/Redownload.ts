import type { HttpServerResponse } from "@effect/platform"
import { HttpServerRequest } from "@effect/platform"
import { Effect, type Scope } from "effect"
import type { Goods } from "../../domain/usecases/Purchases.js"
import { type Redownloads, SIWX_HEADER } from "../../domain/usecases/Redownloads.js"
import { clientAddress } from "./ClientAddress.js"
import type { Offer402 } from "./Offer402.js"
import type { AtTheEdge } from "../Unavailable.js"

/** The request header a wallet's Sign-In-With-X proof arrives in (Node lower-cases header names). */
export const SIWX_REQUEST_HEADER = SIWX_HEADER.toLowerCase()

/**
 * The checkout's answer to a Sign-In-With-X proof and no payment: the wallet's goods (within the re-download
 * limits), or (refused) a fresh offer naming the reason. Every offer carries a challenge (see `Offer402`).
 */
export const redownloadAnswer = (
  redownloads: AtTheEdge<Redownloads>,
  offer: Offer402,
  deliver: (goods: Goods, request: HttpServerRequest.HttpServerRequest) => Effect.Effect<HttpServerResponse.HttpServerResponse, never, Scope.Scope>
) =>
(id: string, livemode: boolean, proof: string, latest = false) =>
  Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
    Effect.flatMap(clientAddress, (client) => redownloads.redeem(id, livemode, proof, client, latest)).pipe(
      Effect.flatMap((goods) => deliver(goods, request)),
      Effect.catchTag("WalletProofRefused", (e) => offer(id, livemode, e.reason))
    ))
