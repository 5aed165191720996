/*
 * A fake GitHub as a real loopback HTTP server (node:http on 127.0.0.1, port 0), for a server that runs in a
 * child process and so cannot be intercepted with msw. It answers the few REST endpoints the GitHub adapter
 * (adapters/github) calls for a public repo, with the shapes of test/adapters/github/FakeGithub.ts (GitHub's
 * REST documentation): the repo, its head commit (`application/vnd.github.sha`), its tree, its README, the
 * tarball (302 to a codeload path on the same server), and an owner's repos. It can go down (503) or
 * rate-limit (403 with x-ratelimit-* headers, as GitHub's primary limit does). No Effect or vitest here.
 */
import { createHash } from "node:crypto"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo, Socket } from "node:net"
import { Readable } from "node:stream"
import { pipeline } from "node:stream/promises"
import { gzipSync } from "node:zlib"

export interface FakeGithubRepo {
  readonly owner: string
  readonly name: string
  readonly description?: string | null
  readonly language?: string | null
  readonly stars?: number
  readonly topics?: ReadonlyArray<string>
  readonly license?: string | null
  readonly defaultBranch?: string
  /** The default branch's head commit. */
  readonly sha?: string
  /** path → content; directories are derived. */
  readonly files?: Readonly<Record<string, string>>
  /** The tarball's bytes, streamed as codeload would (a generated archive of any size); else `tarballOf`. */
  readonly tarball?: () => Readable
}

export interface FakeGithubCall {
  readonly method: string
  readonly path: string
  readonly status: number
}

export interface FakeGithubServer {
  /** `http://127.0.0.1:<port>`: use as GITHUB_API_URL. */
  readonly url: string
  readonly calls: ReadonlyArray<FakeGithubCall>
  readonly put: (repo: FakeGithubRepo) => void
  /** Deletes a repo: from now on GitHub answers 404 for it, as for a deleted (or made-private) repository. */
  readonly remove: (owner: string, name: string) => void
  /** `unavailable`: every request answers 503; `rate_limited`: 403 with x-ratelimit-remaining 0. */
  readonly setDown: (state: "unavailable" | "rate_limited" | null) => void
  readonly close: () => Promise<void>
}

export const FAKE_HEAD_SHA = "0123456789abcdef0123456789abcdef01234567"

const etagOf = (body: string) => `W/"${createHash("sha256").update(body).digest("hex").slice(0, 32)}"`

const b64lines = (text: string) => (Buffer.from(text, "utf8").toString("base64").match(/.{1,60}/g) ?? []).join("\n") + "\n"

/** A real tar.gz of the repo's files (ustar, regular files only) under `<owner>-<name>-<sha7>/`. */
export const tarballOf = (repo: FakeGithubRepo): Buffer => {
  const dir = `${repo.owner}-${repo.name}-${(repo.sha ?? FAKE_HEAD_SHA).slice(0, 7)}`
  const blocks: Array<Buffer> = []
  for (const [path, content] of Object.entries(repo.files ?? {})) {
    const data = Buffer.from(content, "utf8")
    const header = Buffer.alloc(512)
    header.write(`${dir}/${path}`.slice(0, 99), 0, "utf8")
    header.write("0000644\0", 100)
    header.write("0000000\0", 108)
    header.write("0000000\0", 116)
    header.write(data.length.toString(8).padStart(11, "0") + "\0", 124)
    header.write("00000000000\0", 136)
    header.write("        ", 148)
    header.write("0", 156)
    header.write("ustar\0", 257)
    header.write("00", 263)
    let sum = 0
    for (const byte of header) sum += byte
    header.write(sum.toString(8).padStart(6, "0") + "\0 ", 148)
    blocks.push(header, data, Buffer.alloc((512 - (data.length % 512)) % 512))
  }
  blocks.push(Buffer.alloc(1024))
  return gzipSync(Buffer.concat(blocks))
}

const treeOf = (files: Readonly<Record<string, string>>) => {
  const dirs = new Set<string>()
  for (const path of Object.keys(files)) {
    const parts = path.split("/")
    for (let i = 1; i < parts.length; i++) dirs.add(parts.slice(0, i).join("/"))
  }
  return [
    ...[...dirs].map((path) => ({ path, mode: "040000", type: "tree", sha: FAKE_HEAD_SHA, url: "" })),
    ...Object.entries(files).map(([path, content]) => ({
      path,
      mode: "100644",
      type: "blob",
      sha: FAKE_HEAD_SHA,
      size: Buffer.byteLength(content),
      url: ""
    }))
  ].sort((a, b) => a.path.localeCompare(b.path))
}

export const startFakeGithubServer = (initial: ReadonlyArray<FakeGithubRepo>): Promise<FakeGithubServer> =>
  new Promise((resolve, reject) => {
    const repos = new Map(initial.map((r) => [`${r.owner}/${r.name}`.toLowerCase(), r]))
    const calls: Array<FakeGithubCall> = []
    const sockets = new Set<Socket>()
    let down: "unavailable" | "rate_limited" | null = null
    let base = ""

    const repoJson = (r: FakeGithubRepo) => ({
      id: 1296269,
      name: r.name,
      full_name: `${r.owner}/${r.name}`,
      owner: { login: r.owner, id: 1, type: "User" },
      private: false,
      html_url: `https://github.com/${r.owner}/${r.name}`,
      description: r.description ?? null,
      fork: false,
      url: `${base}/repos/${r.owner}/${r.name}`,
      language: r.language ?? null,
      stargazers_count: r.stars ?? 0,
      watchers_count: r.stars ?? 0,
      topics: r.topics ?? [],
      archived: false,
      disabled: false,
      visibility: "public",
      default_branch: r.defaultBranch ?? "main",
      license: r.license == null ? null : { key: r.license.toLowerCase(), name: r.license, spdx_id: r.license, url: null }
    })

    const send = (req: IncomingMessage, res: ServerResponse, status: number, body: string | Buffer, headers: Record<string, string> = {}) => {
      calls.push({ method: req.method ?? "", path: req.url ?? "", status })
      res.writeHead(status, headers)
      res.end(body)
    }
    const json = (req: IncomingMessage, res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) =>
      send(req, res, status, JSON.stringify(body), { "content-type": "application/json; charset=utf-8", ...headers })
    /** JSON with an ETag; a matching If-None-Match gets 304 with no body. */
    const withEtag = (req: IncomingMessage, res: ServerResponse, body: unknown, headers: Record<string, string> = {}) => {
      const text = JSON.stringify(body)
      const etag = etagOf(text)
      if (req.headers["if-none-match"] === etag) return send(req, res, 304, "", { etag })
      return send(req, res, 200, text, { "content-type": "application/json; charset=utf-8", etag, ...headers })
    }
    const notFound = (req: IncomingMessage, res: ServerResponse) =>
      json(req, res, 404, { message: "Not Found", documentation_url: "https://docs.github.com/rest", status: "404" })

    const server = createServer((req, res) => {
      const url = new URL(req.url ?? "/", base)
      const parts = url.pathname.split("/").filter((p) => p !== "").map(decodeURIComponent)
      if (down === "unavailable") return json(req, res, 503, { message: "Service Unavailable" })
      if (down === "rate_limited") {
        return json(req, res, 403, {
          message: "API rate limit exceeded for 127.0.0.1.",
          documentation_url: "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api"
        }, {
          "x-ratelimit-limit": "60",
          "x-ratelimit-remaining": "0",
          "x-ratelimit-used": "60",
          "x-ratelimit-reset": String(Math.floor(Date.now() / 1000) + 120),
          "x-ratelimit-resource": "core"
        })
      }
      if (req.method !== "GET") return json(req, res, 404, { message: "Not Found" })

      // GET /users/:user/repos
      if (parts[0] === "users" && parts[2] === "repos" && parts.length === 3) {
        const user = parts[1]!.toLowerCase()
        const owned = [...repos.values()].filter((r) => r.owner.toLowerCase() === user)
        return owned.length === 0 ? notFound(req, res) : withEtag(req, res, owned.map(repoJson))
      }
      // GET /codeload/:owner/:repo/legacy.tar.gz/:ref (where the tarball endpoint redirects)
      if (parts[0] === "codeload" && parts.length === 5) {
        const repo = repos.get(`${parts[1]}/${parts[2]}`.toLowerCase())
        if (repo === undefined) return send(req, res, 404, "Not Found")
        if (repo.tarball !== undefined) {
          calls.push({ method: req.method ?? "", path: req.url ?? "", status: 200 })
          res.writeHead(200, { "content-type": "application/x-gzip" })
          // A tarball stream that fails destroys the response: the client sees the download break off.
          return void pipeline(repo.tarball(), res).catch(() => undefined)
        }
        return send(req, res, 200, tarballOf(repo), { "content-type": "application/x-gzip" })
      }
      if (parts[0] !== "repos" || parts.length < 3) return notFound(req, res)
      const repo = repos.get(`${parts[1]}/${parts[2]}`.toLowerCase())
      if (repo === undefined) return notFound(req, res)
      const sha = repo.sha ?? FAKE_HEAD_SHA
      const rest = parts.slice(3)

      if (rest.length === 0) return withEtag(req, res, repoJson(repo))
      if (rest[0] === "commits" && rest.length === 2) {
        if (rest[1] !== (repo.defaultBranch ?? "main") && rest[1] !== sha) {
          return json(req, res, 422, { message: "No commit found for SHA" })
        }
        const etag = `"${sha}"`
        if (req.headers["if-none-match"] === etag) return send(req, res, 304, "", { etag })
        if (req.headers["accept"] !== "application/vnd.github.sha") return json(req, res, 200, { sha }, { etag })
        return send(req, res, 200, sha, { "content-type": "application/vnd.github.sha; charset=utf-8", etag })
      }
      if (rest[0] === "git" && rest[1] === "trees" && rest.length === 3) {
        const all = treeOf(repo.files ?? {})
        const tree = url.searchParams.get("recursive") !== null ? all : all.filter((e) => !e.path.includes("/"))
        return withEtag(req, res, { sha: rest[2], url: `${base}${url.pathname}`, tree, truncated: false })
      }
      if (rest[0] === "readme" && rest.length === 1) {
        const path = Object.keys(repo.files ?? {}).find((p) => /^readme(\.md)?$/i.test(p))
        if (path === undefined) return notFound(req, res)
        const text = repo.files![path]!
        return withEtag(req, res, {
          type: "file",
          encoding: "base64",
          size: Buffer.byteLength(text),
          name: path,
          path,
          content: b64lines(text),
          sha
        })
      }
      if (rest[0] === "tarball" && rest.length === 2) {
        return send(req, res, 302, "", { location: `${base}/codeload/${repo.owner}/${repo.name}/legacy.tar.gz/${rest[1]}` })
      }
      return notFound(req, res)
    })
    server.on("connection", (socket) => {
      sockets.add(socket)
      socket.on("close", () => sockets.delete(socket))
    })
    server.on("error", reject)
    server.listen(0, "127.0.0.1", () => {
      base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
      resolve({
        url: base,
        calls,
        put: (repo) => void repos.set(`${repo.owner}/${repo.name}`.toLowerCase(), repo),
        remove: (owner, name) => void repos.delete(`${owner}/${name}`.toLowerCase()),
        setDown: (state) => void (down = state),
        close: () =>
          new Promise<void>((done) => {
            for (const socket of sockets) socket.destroy()
            server.close(() => done())
          })
      })
    })
  })

/**
 * A tarball with no end, for a fake repo's `tarball`: blocks of `blockBytes`, produced only as they are read.
 * `upstream` counts the bytes of the latest download and says when the server's side of it was closed (a client
 * that aborts its download closes it); both are reset by each new download.
 */
export const endlessTarball = (blockBytes: number) => {
  const upstream = { sent: 0, closedAt: null as number | null }
  const tarball = () => {
    upstream.sent = 0
    upstream.closedAt = null
    const block = Buffer.alloc(blockBytes, 0x61)
    const stream = new Readable({
      read() {
        upstream.sent += block.length
        this.push(block)
      }
    })
    stream.on("close", () => (upstream.closedAt = Date.now()))
    return stream
  }
  return { upstream, tarball }
}
