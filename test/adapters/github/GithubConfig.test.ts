import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, Layer } from "effect"
import { CodeHostGithub } from "../../../adapters/github/CodeHostGithub.js"
import { CodeHostIdentityGithub } from "../../../adapters/github/CodeHostIdentityGithub.js"
import { webUrlOf } from "../../../adapters/github/GithubConfig.js"
import { retryAfterSeconds, toCodeHostError } from "../../../adapters/github/GithubErrors.js"
import { CodeHost } from "../../../ports/CodeHost.js"
import { CodeHostIdentity } from "../../../ports/CodeHostIdentity.js"
import { PublicOrigin } from "../../../ports/PublicOrigin.js"
import { configOf } from "./support.js"

const origin = Layer.succeed(PublicOrigin, { baseUrl: "https://market.example" })

const failureText = (exit: Exit.Exit<unknown, unknown>) =>
  Exit.isFailure(exit) ? Cause.pretty(exit.cause) : "succeeded"

describe("GitHub settings", () => {
  it("derives the web base from the API base", () => {
    expect(webUrlOf("https://api.github.com")).toBe("https://github.com")
    expect(webUrlOf("https://ghe.example/api/v3")).toBe("https://ghe.example")
    expect(webUrlOf("http://127.0.0.1:4010")).toBe("http://127.0.0.1:4010")
  })

  it.effect("a malformed GITHUB_API_URL stops start-up, naming the setting", () =>
    Effect.gen(function*() {
      for (const bad of ["not a url", "ftp://api.example", "https://user:pw@api.example", "https://api.example/?x=1"]) {
        const exit = yield* Effect.exit(Effect.provide(CodeHost, CodeHostGithub.pipe(Layer.provide(configOf({ GITHUB_API_URL: bad })))))
        expect(failureText(exit)).toContain("GITHUB_API_URL")
      }
    }))

  it.effect("GitHub Enterprise: owner pages are on the enterprise host", () =>
    Effect.gen(function*() {
      const host = yield* Effect.provide(CodeHost, CodeHostGithub.pipe(Layer.provide(configOf({ GITHUB_API_URL: "https://ghe.example/api/v3/" }))))
      expect(host.ownerUrl("octo")).toBe("https://ghe.example/octo")
    }))

  it.effect("the OAuth app needs both halves; none at all turns the connection off", () =>
    Effect.gen(function*() {
      const identity = (config: Record<string, string>) =>
        Effect.exit(Effect.provide(CodeHostIdentity, CodeHostIdentityGithub.pipe(Layer.provide(origin), Layer.provide(configOf(config)))))
      expect(failureText(yield* identity({ GITHUB_CLIENT_ID: "id-only" }))).toContain("GITHUB_CLIENT_SECRET")
      expect(failureText(yield* identity({ GITHUB_CLIENT_SECRET: "secret-only-value" }))).toContain("GITHUB_CLIENT_ID")
      expect(failureText(yield* identity({ GITHUB_CLIENT_SECRET: "secret-only-value" }))).not.toContain("secret-only-value")
      const off = yield* identity({})
      expect(Exit.isSuccess(off) && off.value.configured).toBe(false)
      const on = yield* identity({ GITHUB_CLIENT_ID: "id", GITHUB_CLIENT_SECRET: "secret" })
      expect(Exit.isSuccess(on) && on.value.configured).toBe(true)
    }))
})

describe("GitHub failures", () => {
  const at = Date.parse("2025-01-01T00:00:00Z")
  const failure = (status: number, headers: Record<string, string> = {}, hostMessage = "") => ({ status, headers, hostMessage })

  it("reads the wait from retry-after (seconds or a date), else x-ratelimit-reset, else a minute", () => {
    expect(retryAfterSeconds(failure(429, { "retry-after": "17" }), at)).toBe(17)
    expect(retryAfterSeconds(failure(429, { "retry-after": "Wed, 01 Jan 2025 00:00:30 GMT" }), at)).toBe(30)
    expect(retryAfterSeconds(failure(403, { "x-ratelimit-remaining": "0", "x-ratelimit-reset": String(at / 1000 + 600) }), at)).toBe(600)
    expect(retryAfterSeconds(failure(403, { "x-ratelimit-reset": String(at / 1000 + 99999) }), at)).toBe(3600)
    expect(retryAfterSeconds(failure(403, {}, "rate limit"), at)).toBe(60)
  })

  it("maps statuses to the port's reasons, by the credential the request carried", () => {
    const reason = (status: number, credential: "listing" | "server" | "none", headers: Record<string, string> = {}) =>
      toCodeHostError(failure(status, headers), credential, "repository", at).reason
    expect(reason(404, "none")).toBe("repo_not_found")
    expect(reason(404, "server")).toBe("repo_not_found")
    expect(reason(404, "listing")).toBe("token_lacks_access")
    expect(reason(401, "listing")).toBe("token_rejected")
    expect(reason(401, "server")).toBe("unavailable")
    expect(reason(403, "listing")).toBe("token_lacks_access")
    expect(reason(403, "listing", { "x-ratelimit-remaining": "0" })).toBe("rate_limited")
    expect(reason(429, "none", { "retry-after": "5" })).toBe("rate_limited")
    expect(reason(500, "none")).toBe("unavailable")
    expect(reason(0, "none")).toBe("unavailable")
  })
})
