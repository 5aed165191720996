import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { ConfigProvider, Layer } from "effect"
import type { RequestHandler } from "msw"
import { afterAll, afterEach, beforeAll } from "vitest"
import { CodeHostGithubWith } from "../../../adapters/github/CodeHostGithub.js"
import type { GithubTuning } from "../../../adapters/github/GithubClient.js"
import { API, type FakeGithub, type GhRepo } from "./FakeGithub.js"

/**
 * The hooks of a test file over the fake GitHub: `gh`'s msw server listens for the whole file, with `handlers` on
 * top of its own; a request no handler answers fails the test (with `appOnLoopback`, one to the app under test on
 * loopback passes through: anything else would go out to the network). After each test the handlers it added are
 * dropped, `gh` is reset, then `afterEachTest` runs; after all the server closes. `dataDir()` answers a new
 * temporary directory named `dirPrefix…`, removed after all.
 */
export const serveFakeGithub = (gh: FakeGithub, options: {
  readonly appOnLoopback?: boolean
  readonly handlers?: ReadonlyArray<RequestHandler>
  readonly afterEachTest?: () => void
  readonly dirPrefix?: string
} = {}) => {
  const handlers = options.handlers ?? []
  const dirs: Array<string> = []
  beforeAll(() => {
    gh.server.listen({
      onUnhandledRequest: options.appOnLoopback === true
        ? (request, print) => {
          if (!["127.0.0.1", "localhost", "[::1]"].includes(new URL(request.url).hostname)) print.error()
        }
        : "error"
    })
    gh.server.use(...handlers)
  })
  afterEach(() => {
    gh.server.resetHandlers()
    gh.server.use(...handlers)
    gh.reset()
    options.afterEachTest?.()
  })
  afterAll(() => {
    gh.server.close()
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
  })
  const dataDir = () => {
    const dir = mkdtempSync(join(tmpdir(), options.dirPrefix ?? "repomarket-github-"))
    dirs.push(dir)
    return dir
  }
  return { dataDir }
}

/**
 * Waits shortened so retry paths run in milliseconds; windows and limits stay as in production. Archives are
 * not kept on disk (that would be under ./.data, shared between runs) unless a test sets ARCHIVE_CACHE_BYTES
 * and DATA_DIR.
 */
export const FAST: Partial<GithubTuning> = { retryBaseMs: 5, secondaryWaitUnitMs: 5, archiveDiskBytes: 0 }

export const configOf = (entries: Record<string, string> = {}) =>
  Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries({ GITHUB_API_URL: API, ...entries }))))

/** A fresh adapter (and so a fresh cache) over the fake GitHub. */
export const githubHost = (tuning: Partial<GithubTuning> = {}, config: Record<string, string> = {}) =>
  CodeHostGithubWith({ ...FAST, ...tuning }).pipe(Layer.provide(configOf(config)))

export const HEAD = "0123456789abcdef0123456789abcdef01234567"
export const PRIVATE_TOKEN = ["github", "pat", "fake", "private", "0001"].join("_")
export const OTHER_TOKEN = ["github", "pat", "fake", "other", "0002"].join("_")

/** Bytes that look like nothing in particular, so a mix-up shows. */
export const tarballBytes = (size: number) => {
  const bytes = new Uint8Array(size)
  for (let i = 0; i < size; i++) bytes[i] = (i * 31 + 7) % 251
  return bytes
}

export const WIDGET: GhRepo = {
  owner: "Octo-Org",
  name: "Widget",
  description: "A widget library",
  language: "TypeScript",
  stars: 42,
  topics: ["library", "typescript"],
  license: "MIT",
  sha: HEAD,
  tree: [
    { path: "README.md", type: "blob", size: 120 },
    { path: "src", type: "tree" },
    { path: "src/index.ts", type: "blob", size: 10 },
    { path: "vendor/lib", type: "commit" }
  ],
  readme: {
    path: "README.md",
    text: [
      "# Widget",
      "",
      "Hello <script>alert(1)</script> world.",
      "",
      "<img src=\"x\" onerror=\"alert(2)\">",
      "",
      "[click](javascript:alert(3)) and [docs](docs/guide.md) and [home](https://example.com/)",
      "",
      "![logo](img/logo.png) ![inline](data:image/png;base64,AAAA)",
      "",
      "<a href=\"#usage\" onclick=\"steal()\">usage</a> <iframe src=\"https://evil.example\"></iframe>",
      "<style>body { display: none }</style>"
    ].join("\n")
  },
  tarball: tarballBytes(300_000)
}

export const SECRET: GhRepo = {
  owner: "Octo-Org",
  name: "secret-sauce",
  private: true,
  token: PRIVATE_TOKEN,
  description: "Private things",
  license: "NOASSERTION",
  sha: HEAD,
  tree: [{ path: "README.md", type: "blob", size: 8 }],
  readme: { path: "README.md", text: "# Secret" },
  tarball: tarballBytes(70_000)
}

/** A valid token for another repo: GitHub answers 404 to it for this one. */
export const OTHER: GhRepo = { owner: "someone", name: "elsewhere", private: true, token: OTHER_TOKEN, sha: HEAD }

export const FORK: GhRepo = { owner: "Octo-Org", name: "forked", fork: true, sha: HEAD }
export const ARCHIVED: GhRepo = { owner: "Octo-Org", name: "old-thing", archived: true, sha: HEAD }
export const FREE: GhRepo = { owner: "Octo-Org", name: "free-thing", topics: ["cli"], description: "free", sha: HEAD }
