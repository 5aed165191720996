import { HttpIncomingMessage, HttpMethod, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import type { HttpApp } from "@effect/platform"
import { Cause, Effect, Option } from "effect"
import { loggablePath } from "./AccessLog.js"
import { requestIdSuffix } from "./RequestId.js"
import type { AllowedMethods } from "./RouteTable.js"
import { databaseUnavailableProblem, isDatabaseUnavailable } from "./Unavailable.js"
import { PROBLEM_CONTENT_TYPE, problemBody, type ProblemJson } from "./Problem.js"

/** Request bodies are JSON and at most 64 KiB (DECISIONS.md). */
export const MAX_BODY_BYTES = 64 * 1024

/** The most the guard reads of a body before giving up on the request. */
const READ_CAP_BYTES = 1024 * 1024

/** No request of this API nests deeper than a few levels; deep nesting only costs (and crashes) decoders. */
const MAX_JSON_DEPTH = 256

/** Nesting depth of a parsed JSON value, without recursion. */
const depthOf = (value: unknown): number => {
  let max = 0
  const stack: Array<[unknown, number]> = [[value, 1]]
  while (stack.length > 0) {
    const [v, d] = stack.pop()!
    if (v === null || typeof v !== "object") continue
    max = Math.max(max, d)
    if (max > MAX_JSON_DEPTH) return max
    for (const child of Object.values(v as object)) stack.push([child, d + 1])
  }
  return max
}

/** Paths whose HTML forms post `application/x-www-form-urlencoded`: the sign-in pages, the code-host connection and the dashboard's actions. */
const FORM_PATHS = new Set(["/auth/verify", "/signin", "/signout", "/auth/host/start", "/auth/host/confirm"])
const isFormPath = (path: string) => FORM_PATHS.has(path) || path.startsWith("/dashboard/")

export const problemResponse = (problem: ProblemJson, headers: Record<string, string> = {}) =>
  HttpServerResponse.unsafeJson(problem, {
    status: problem.status,
    contentType: PROBLEM_CONTENT_TYPE,
    headers: { ...headers, ...(problem.status === 401 ? { "www-authenticate": "Bearer" } : {}) }
  })

const tooLarge = () =>
  problemResponse(problemBody(413, "payload_too_large", "Request body too large", `Request bodies are limited to ${MAX_BODY_BYTES} bytes.`))

/** What the body checks found: an answer to send instead of the app's, an empty body, or a body the app may read. */
type BodyCheck = Option.Option<HttpServerResponse.HttpServerResponse> | "empty"

/**
 * The request with an empty body read as JSON `null`, as the Node host's request reads it. A web-standard
 * request (the Lambda handlers, the embeddable web handler) parses its text with `JSON.parse`, which throws
 * on "", so the payload decoder met a defect (500 `internal_error`) where the Node host answers 400
 * `invalid_request`; read as `null`, every host gives the schema's 400. Everything else reads as before.
 */
const emptyBodyReadsAsNull = (req: HttpServerRequest.HttpServerRequest): HttpServerRequest.HttpServerRequest =>
  new Proxy(req, {
    get: (target, key) => {
      if (key === "json") return Effect.succeed(null)
      const value = Reflect.get(target, key, target)
      // `modify` makes a new request (e.g. behind proxies); it must read an empty body the same way.
      return key === "modify"
        ? (options: Parameters<HttpServerRequest.HttpServerRequest["modify"]>[0]) => emptyBodyReadsAsNull(target.modify(options))
        : value
    }
  })

/**
 * Checks a request body before any endpoint decodes it: size, media type and JSON syntax. Without this,
 * malformed JSON would reach the framework's decoder as a defect (500) instead of a 400.
 */
const checkBody: Effect.Effect<BodyCheck, never, HttpServerRequest.HttpServerRequest> = Effect.gen(function*() {
  const req = yield* HttpServerRequest.HttpServerRequest
  if (!HttpMethod.hasBody(req.method)) return Option.none()
  const declared = Number(req.headers["content-length"] ?? "0")
  if (declared > MAX_BODY_BYTES) return Option.some(tooLarge())
  // Read under a cap of our own and judge the 64 KiB limit here: past the platform's cap it destroys the
  // socket (no answer at all), so the cap sits well above our limit and a 64 KiB-1 MiB body still gets its
  // 413. Anything larger is cut off rather than buffered.
  const text = yield* Effect.either(req.text.pipe(HttpIncomingMessage.withMaxBodySize(Option.some(READ_CAP_BYTES))))
  if (text._tag === "Left" || Buffer.byteLength(text.right) > MAX_BODY_BYTES) return Option.some(tooLarge())
  if (text.right.length === 0) return "empty" as const
  const type = (req.headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase()
  const path = new URL(req.url, "http://x").pathname
  if (type === "application/x-www-form-urlencoded" && isFormPath(path)) return Option.none()
  // Exactly application/json: the API's decoder parses nothing else (a `+json` type would never be read).
  if (type !== "application/json") {
    return Option.some(problemResponse(problemBody(415, "unsupported_media_type", "Unsupported media type", "Send the body as application/json.")))
  }
  let parsed: unknown
  try {
    parsed = JSON.parse(text.right)
  } catch {
    return Option.some(problemResponse(problemBody(400, "malformed_json", "Malformed JSON", "The request body is not valid JSON.")))
  }
  if (depthOf(parsed) > MAX_JSON_DEPTH) {
    return Option.some(problemResponse(problemBody(400, "malformed_json", "JSON nested too deeply", `The request body nests deeper than ${MAX_JSON_DEPTH} levels.`)))
  }
  return Option.none()
})

interface DecodeIssue {
  readonly path: ReadonlyArray<PropertyKey>
  readonly message: string
}

/**
 * Request fields that carry a secret. Schema messages quote the value they refused ("actual ..."), so for
 * these the problem names the field and never repeats what was sent (DECISIONS: no error holds a host_pat
 * or a magic-link token).
 */
const SECRET_FIELDS = new Set(["host_pat", "token"])
const SECRET_FIELD_MESSAGE = "must be a string of the documented length (the value sent is not repeated: it is secret)"

/** The framework's schema-decode failure, re-shaped into the same problem+json as every other 400. */
const asProblem = (body: unknown): ProblemJson | null => {
  const b = body as { _tag?: string; issues?: ReadonlyArray<DecodeIssue> } | null
  if (b?._tag !== "HttpApiDecodeError" || !Array.isArray(b.issues)) return null
  const all = b.issues.map((i) =>
    i.path.length === 0
      ? { field: "body", message: "must be a JSON object with the documented fields" }
      : {
        field: i.path.map(String).join("."),
        message: i.path.some((p: PropertyKey) => SECRET_FIELDS.has(String(p))) ? SECRET_FIELD_MESSAGE : i.message
      }
  )
  // A union reports one issue per member: an optional field's "Expected undefined" member says nothing
  // useful beside the real one, and once messages are redacted several may read the same.
  const useful = all.filter((e) => !(/^Expected undefined, actual/.test(e.message) && all.some((o) => o.field === e.field && o !== e)))
  const errors = useful.filter((e, n) => useful.findIndex((o) => o.field === e.field && o.message === e.message) === n)
  const detail = errors.length === 1 ? `${errors[0]!.field}: ${errors[0]!.message}` : "Several fields are invalid."
  return { ...problemBody(400, "invalid_request", "The request is invalid", detail), errors }
}

const finish = (response: HttpServerResponse.HttpServerResponse) => {
  if (response.status < 400 || response.body._tag !== "Uint8Array") return response
  let parsed: unknown
  try {
    parsed = JSON.parse(new TextDecoder().decode(response.body.body))
  } catch {
    return response
  }
  const decodeProblem = asProblem(parsed)
  if (decodeProblem) return problemResponse(decodeProblem)
  const problem = parsed as Partial<ProblemJson>
  let out = response
  if (typeof problem.retry_after_seconds === "number") {
    out = HttpServerResponse.setHeader(out, "retry-after", String(problem.retry_after_seconds))
  }
  if (response.status === 401) out = HttpServerResponse.setHeader(out, "www-authenticate", "Bearer")
  return out
}

const notFound = () => problemResponse(problemBody(404, "not_found", "Not found", "No such page or endpoint."))
const methodNotAllowed = (method: string, allow: ReadonlyArray<string>) =>
  problemResponse(
    problemBody(405, "method_not_allowed", "Method not allowed", `${method} is not allowed here; this path takes ${allow.join(", ")}.`),
    { allow: allow.join(", ") }
  )
const internal = () =>
  problemResponse(problemBody(500, "internal_error", "Internal error", "Something went wrong on our side; nothing was changed by this request."))

/**
 * Wraps the whole HTTP app: body checks before, problem+json shaping after, and an access log line that
 * never holds a secret (see AccessLog: no query string, no receipt token).
 */
export const guard = <E, R>(app: HttpApp.Default<E, R>, allowedMethods: AllowedMethods = () => []): HttpApp.Default<never, R> =>
  Effect.gen(function*() {
    const req = yield* HttpServerRequest.HttpServerRequest
    const started = Date.now()
    const checked = yield* checkBody
    const early = checked === "empty" ? Option.none() : checked
    const response = Option.isSome(early)
      ? early.value
      : yield* (checked === "empty" ? Effect.updateService(app, HttpServerRequest.HttpServerRequest, emptyBodyReadsAsNull) : app).pipe(
        Effect.map(finish),
        Effect.catchAllCause((cause) => {
          const failure = Cause.failureOption(cause)
          if (Option.isSome(failure) && (failure.value as { _tag?: string })?._tag === "RouteNotFound") {
            // A known path asked with another method is 405 with Allow; an unknown path is 404 (so is a path
            // whose method is allowed but that the router still refused, e.g. a parameter it cannot decode).
            const allow = allowedMethods(req.url)
            return Effect.succeed(allow.length === 0 || allow.includes(req.method) ? notFound() : methodNotAllowed(req.method, allow))
          }
          if (Cause.isInterruptedOnly(cause)) return Effect.succeed(internal())
          if (isDatabaseUnavailable(cause)) {
            const problem = databaseUnavailableProblem()
            return Effect.as(
              Effect.logWarning(`Database did not answer in time: 503${requestIdSuffix(req.source)}`),
              problemResponse(problem, { "retry-after": String(problem.retry_after_seconds) })
            )
          }
          return Effect.as(Effect.logError(`Unhandled failure${requestIdSuffix(req.source)}`, Cause.pretty(cause)), internal())
        })
      )
    yield* Effect.logInfo(`${req.method} ${loggablePath(req.url)} ${response.status} ${Date.now() - started}ms${requestIdSuffix(req.source)}`)
    return response
  }) as HttpApp.Default<never, R>
