import type { HttpRouter } from "@effect/platform"
import { Chunk } from "effect"

/**
 * Which methods a path takes, from the router's own table, so a wrong method on a known path can answer
 * 405 with `Allow` (RFC 9110 §15.5.6) instead of 404. Paths are compared as the router compares them:
 * static segments case-insensitively, duplicate and trailing slashes ignored, `:param` one non-empty
 * segment (that decodes, of at most the router's 100 characters), `*` the rest. A GET route also takes HEAD
 * (the router answers HEAD with it).
 */
export type AllowedMethods = (url: string) => ReadonlyArray<string>

/** find-my-way's default `maxParamLength`: a longer parameter matches no route. */
const MAX_PARAM_LENGTH = 100

const isParam = (segment: string): boolean => {
  try {
    return decodeURIComponent(segment).length <= MAX_PARAM_LENGTH
  } catch {
    return false
  }
}

const segmentsOf = (path: string): Array<string> => path.split("/").filter((s) => s !== "")

const matches = (pattern: ReadonlyArray<string>, path: ReadonlyArray<string>): boolean => {
  for (let i = 0; i < pattern.length; i++) {
    const p = pattern[i]!
    if (p === "*") return true
    const s = path[i]
    if (s === undefined) return false
    if (p.startsWith(":")) {
      if (!isParam(s)) return false
      continue
    }
    if (p.toLowerCase() !== s.toLowerCase()) return false
  }
  return pattern.length === path.length
}

export const allowedMethodsOf = (routes: Chunk.Chunk<HttpRouter.Route<unknown, unknown>>): AllowedMethods => {
  const table = Chunk.toReadonlyArray(routes)
    .filter((r) => r.method !== "*")
    .map((r) => ({ method: r.method, pattern: segmentsOf(r.path) }))
  return (url) => {
    const path = segmentsOf(url.split(/[?#]/, 1)[0] ?? "")
    const methods = new Set(table.filter((r) => matches(r.pattern, path)).map((r) => r.method))
    if (methods.has("GET")) methods.add("HEAD")
    return [...methods].sort()
  }
}

/** The route a path belongs to, as the router's table writes it (`/checkout/:id`), or undefined for none. */
export type RouteTemplateOf = (url: string) => string | undefined

/**
 * The most specific route of the table a path matches, the way the router picks it: at the first segment
 * where two candidates differ, a static segment wins over a `:param`, and a `:param` over `*`.
 */
export const routeTemplatesOf = (routes: Chunk.Chunk<HttpRouter.Route<unknown, unknown>>): RouteTemplateOf => {
  const rank = (segment: string) => (segment === "*" ? 2 : segment.startsWith(":") ? 1 : 0)
  const table = [...new Set(Chunk.toReadonlyArray(routes).map((r) => r.path))]
    .map((path) => ({ path, pattern: segmentsOf(path) }))
    .sort((a, b) => {
      for (let i = 0; i < Math.max(a.pattern.length, b.pattern.length); i++) {
        const d = rank(a.pattern[i] ?? "") - rank(b.pattern[i] ?? "")
        if (d !== 0) return d
      }
      return 0
    })
  return (url) => {
    const path = segmentsOf(url.split(/[?#]/, 1)[0] ?? "")
    return table.find((r) => matches(r.pattern, path))?.path
  }
}
