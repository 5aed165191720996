import { expect } from "@effect/vitest"
import { Effect, Option } from "effect"
import { Account } from "../../domain/Account.js"
import { SentMail } from "../../adapters/memory/MailerMemory.js"
import { AccountStore } from "../../ports/AccountStore.js"
import { BASE_URL, call, type Reply } from "./app.js"

/**
 * Small steps of the HTTP flows shared by the behaviour tests under test/http/. Everything goes through
 * the public HTTP surface except `setHostLogin`, which arranges state the API cannot reach yet.
 */

export const WIDGET_URL = "https://github.com/octo-org/widget"
export const GADGET_URL = "https://github.com/octo-org/gadget"
export const SECRET_URL = "https://github.com/octo-org/secret-sauce"

/** Asks for a sign-in link and returns the token from the mail sent to that address. */
export const magicToken = (email: string) =>
  Effect.gen(function*() {
    const sent = yield* call("POST", "/auth/magic-link", { body: { email } })
    expect(sent.status).toBe(202)
    const mails = yield* Effect.flatMap(SentMail, (m) => m.all)
    const mail = mails.filter((m) => m.to === email.toLowerCase()).at(-1)
    if (mail === undefined) throw new Error(`no mail to ${email}`)
    return decodeURIComponent(/[?&]token=([^\s&]+)/.exec(mail.text)![1]!)
  })

/** Asserts an RFC 9457 problem with the given status and machine code; returns its body. */
export const expectProblem = (reply: Reply, status: number, code: string) => {
  expect({ status: reply.status, code: reply.json?.code }).toEqual({ status, code })
  expect(reply.headers["content-type"]).toMatch(/^application\/problem\+json/)
  expect(reply.json.status).toBe(status)
  return reply.json as { code: string; detail: string; errors?: Array<{ field: string; message: string }>; [k: string]: unknown }
}

/** The fields a 400 problem names. */
export const fieldsOf = (reply: Reply): Array<string> =>
  (reply.json?.errors ?? []).map((e: { field: string }) => e.field)

export const listRepo = (body: Record<string, unknown>, token?: string) =>
  call("POST", "/repos", token === undefined ? { body } : { body, token })

/** `POST /repos` that must succeed; returns the created listing's JSON. */
export const listed = (body: Record<string, unknown>, token?: string) =>
  Effect.map(listRepo(body, token), (reply) => {
    expect(reply.status, reply.text).toBe(201)
    return reply.json as {
      repo: string
      page: string
      checkout_url: string
      test_checkout_url: string
      selling: boolean
      note: string
      updates_days: number
    }
  })

/** The account's inventory, keyed by `<owner>/<repo>` (its order is not part of the contract). */
export const storesOf = (token: string) =>
  Effect.map(call("GET", "/my/stores", { token }), (reply) => {
    expect(reply.status, reply.text).toBe(200)
    return Object.fromEntries((reply.json.stores as Array<any>).map((s) => [s.repo, s])) as Record<string, any>
  })

/** The repo page as an agent fetches it. */
export const repoPage = (owner: string, repo: string) =>
  call("GET", `/r/${owner}/${repo}`, { headers: { accept: "application/json" } })

/** GET on a checkout URL as handed out (absolute on BASE_URL). */
export const getCheckout = (url: string) => {
  expect(url.startsWith(`${BASE_URL}/`)).toBe(true)
  return call("GET", new URL(url).pathname)
}

/** Asserts a checkout is voided: 410 problem+json pointing to the repo page. */
export const expectGone = (url: string, repoPagePath: string) =>
  Effect.map(getCheckout(url), (reply) => {
    const problem = expectProblem(reply, 410, "checkout_gone")
    expect(new URL(problem["page"] as string, BASE_URL).href).toBe(`${BASE_URL}${repoPagePath}`)
  })

/**
 * Asserts a checkout is current: neither gone (410) nor unknown (404). Before the payments issue it answers
 * 501 not_implemented. With payments, an unpaid request to a selling listing's checkout gets the x402
 * challenge (402), or 503 payments_unavailable on a live checkout without a facilitator; a listing that is
 * not selling answers 409 not_selling.
 */
export const expectCurrent = (url: string, options: { readonly selling: boolean } = { selling: true }) =>
  Effect.map(getCheckout(url), (reply) => {
    const answer = { status: reply.status, code: reply.status === 402 ? undefined : reply.json?.code }
    const current = options.selling
      ? [{ status: 402, code: undefined }, { status: 503, code: "payments_unavailable" }]
      : [{ status: 409, code: "not_selling" }]
    expect([{ status: 501, code: "not_implemented" }, ...current]).toContainEqual(answer)
  })

/**
 * Records a verified code-host login on an account. The API cannot do this yet (the GitHub OAuth flow is a
 * later issue), so the test arranges it through the AccountStore port.
 */
export const setHostLogin = (email: string, login: string) =>
  Effect.gen(function*() {
    const accounts = yield* AccountStore
    const account = Option.getOrThrow(yield* accounts.findByEmail(email))
    yield* accounts.update(new Account({ ...account, hostLogin: login }))
  })
