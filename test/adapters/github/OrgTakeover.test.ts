import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { afterAll, afterEach, beforeAll } from "vitest"
import { BASE_WALLET, BASE_WALLET_2, call, signInWithKey, SOLANA_WALLET } from "../../support/app.js"
import { expectGone, expectProblem, getCheckout, listed, listRepo } from "../../support/flows.js"
import { expectStatus, newBrowser, pressConfirm, pressConnect, returnFromGithub } from "./BrowserJar.js"
import { type GhRepo, makeFakeGithub } from "./FakeGithub.js"
import { GithubTestApp } from "./GithubApp.js"

/** An organisation's public repo: its owner is the organisation, a login nobody signs in as. */
const ORG_REPO: GhRepo = { owner: "SomeOrg", name: "tool", description: "An org tool", admins: ["Org-Admin"] }
const ORG_URL = "https://github.com/SomeOrg/tool"

const gh = makeFakeGithub([ORG_REPO])
beforeAll(() =>
  gh.server.listen({
    onUnhandledRequest: (request, print) => {
      if (!["127.0.0.1", "localhost", "[::1]"].includes(new URL(request.url).hostname)) print.error()
    }
  }))
afterEach(() => {
  gh.server.resetHandlers()
  gh.reset()
})
afterAll(() => gh.server.close())

/** Connects `login` to the account of `session` the way a seller does: dashboard → GitHub → confirm. */
const connect = (session: string, login: string) =>
  Effect.gen(function*() {
    const browser = newBrowser(session)
    const started = expectStatus(yield* pressConnect(browser), 303)
    const page = expectStatus(yield* returnFromGithub(browser, gh.authorize(started.headers["location"]!, login)), 200)
    expectStatus(yield* pressConfirm(browser, page), 303)
    expect((yield* call("GET", "/my/account", { token: session })).json.host_login).toBe(login)
  })

/** Where the listing's checkout pays on Base right now (the test twin's 402 names the same payTo). */
const payToOf = (checkoutUrl: string) =>
  Effect.map(getCheckout(`${checkoutUrl}/test`), (reply) => {
    expect(reply.status, reply.text.slice(0, 300)).toBe(402)
    return (reply.json.accepts as Array<{ network: string; payTo: string }>).map((a) => a.payTo)
  })

describe("taking over an organisation's repo listed anonymously by a squatter", () => {
  layer(GithubTestApp())((it) => {
    it.effect("a connected login with admin on the repo takes it over (the payout moves only then); one without admin gets 409", () =>
      Effect.gen(function*() {
        const squatted = yield* listed({ host_url: ORG_URL, price_usd: "5.00", wallet_base: BASE_WALLET })
        expect(yield* payToOf(squatted.checkout_url)).toEqual([BASE_WALLET])

        // A member without admin rights: connected, but no proof of control.
        const member = yield* signInWithKey("member@example.com")
        yield* connect(member.session, "Org-Member")
        expectProblem(yield* listRepo({ host_url: ORG_URL, price_usd: "9.00", wallet_base: BASE_WALLET_2 }, member.key), 409, "already_listed")
        expect(yield* payToOf(squatted.checkout_url)).toEqual([BASE_WALLET])

        // The organisation's admin: GitHub says so to the admin's own token.
        const admin = yield* signInWithKey("admin@example.com")
        yield* connect(admin.session, "Org-Admin")
        const asked = gh.calls.length
        const taken = yield* listed({ host_url: ORG_URL, price_usd: "9.00", wallet_base: BASE_WALLET_2, wallet_solana: SOLANA_WALLET }, admin.key)
        const proof = gh.calls.slice(asked).filter((c) => c.url.pathname.toLowerCase() === "/repos/someorg/tool" && c.authorization?.startsWith("Bearer gho_"))
        expect(proof.length).toBeGreaterThan(0)

        yield* expectGone(squatted.checkout_url, "/r/SomeOrg/tool")
        expect(yield* payToOf(taken.checkout_url)).toEqual([BASE_WALLET_2, SOLANA_WALLET])
        const page = yield* call("GET", "/r/SomeOrg/tool", { headers: { accept: "application/json" } })
        expect(page.json).toMatchObject({ price_usd: "9.00", checkout_url: taken.checkout_url })
        const stores = yield* call("GET", "/my/stores", { token: admin.key })
        expect(JSON.stringify(stores.json)).toContain("SomeOrg/tool")
      }))

  })
})
