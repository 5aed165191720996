/*
 * The sample events of hosts/lambda/events/, which docs/deploy-lambda.md gives for trying the handlers locally
 * (`sam local invoke -e`, or the bundle called from node), answer as the guide says when fed, unchanged, to the
 * handlers over the test ports: GET /healthz 200, the catalog search 200 JSON naming the listing it finds,
 * and the schedule's run completes.
 */
import { readFileSync } from "node:fs"
import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import type { HttpEventV2, ScheduledEvent } from "../../hosts/lambda/Events.js"
import { BASE_WALLET } from "../support/app.js"
import { REAL_TIME } from "../support/purchase.js"
import { httpEvent, invoke, LambdaTest, TestLambda } from "./support.js"

const sample = <A>(name: string): A => JSON.parse(readFileSync(new URL(`../../hosts/lambda/events/${name}`, import.meta.url), "utf8"))

describe("hosts/lambda/events: the sample events of the local-invoke recipe", () => {
  layer(LambdaTest(), REAL_TIME)((it) => {
    it.effect("healthz.json (HTTP API): 200, the database reachable", () =>
      Effect.gen(function*() {
        const answer = yield* invoke(sample<HttpEventV2>("healthz.json"))
        expect(answer.statusCode, answer.body).toBe(200)
        expect(answer.json).toMatchObject({ ok: true })
      }))

    it.effect("listings.json (Function URL): 200 JSON with the listing its search names", () =>
      Effect.gen(function*() {
        const listed = yield* invoke(httpEvent("POST", "/repos", {
          json: { host_url: "https://github.com/octo-org/widget", price_usd: "5.00", wallet_base: BASE_WALLET }
        }))
        expect(listed.statusCode, listed.body).toBe(201)
        const answer = yield* invoke(sample<HttpEventV2>("listings.json"))
        expect(answer.statusCode, answer.body).toBe(200)
        expect(answer.headers?.["content-type"]).toMatch(/^application\/json/)
        expect(answer.json.listings.map((l: { repo: string }) => l.repo.toLowerCase())).toEqual(["octo-org/widget"])
      }))

    it.effect("scheduled.json (EventBridge): the delivery run completes", () =>
      Effect.gen(function*() {
        const { scheduled } = yield* TestLambda
        yield* Effect.promise(() => scheduled(sample<ScheduledEvent>("scheduled.json"), { getRemainingTimeInMillis: () => 5_000 }))
      }))
  })
})
