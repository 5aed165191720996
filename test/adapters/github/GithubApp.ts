import { Layer } from "effect"
import { CodeHostIdentityGithub } from "../../../adapters/github/CodeHostIdentityGithub.js"
import { HttpLive } from "../../../hosts/http/AppLayer.js"
import { PublicOrigin } from "../../../ports/PublicOrigin.js"
import { BASE_URL, ServedAsNpmStart, testPorts } from "../../support/app.js"
import { configOf, githubHost } from "./support.js"

export const OAUTH_CONFIG = { GITHUB_CLIENT_ID: "oauth-client-id", GITHUB_CLIENT_SECRET: "oauth-client-secret" }

/**
 * The whole HTTP application as `TestApp` builds it (memory storage, captured mail), except that the code
 * host and the code-host connection are the GitHub adapters, talking to the msw fake GitHub.
 */
export const GithubTestApp = (config: Record<string, string> = OAUTH_CONFIG) =>
  HttpLive.pipe(
    Layer.provide(Layer.mergeAll(
      githubHost({}, config),
      CodeHostIdentityGithub.pipe(
        Layer.provide(Layer.succeed(PublicOrigin, { baseUrl: BASE_URL })),
        Layer.provide(configOf(config))
      )
    )),
    Layer.provideMerge(testPorts({ repos: [] })),
    Layer.provideMerge(ServedAsNpmStart())
  )
