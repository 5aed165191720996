import { HttpApi, HttpApiBuilder, HttpRouter, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Context, Effect, Layer } from "effect"
import { Api } from "../Api.js"
import { openApiDocument } from "../OpenApiDoc.js"
import { escapeHtml } from "./Html.js"

/*
 * `/docs`: the Scalar API reference, without inline script. @effect/platform's HttpApiScalar inlines 3 MB of
 * third-party script into the page, which only an `unsafe-inline` policy would run. Here the same script is
 * served from our own origin (`/docs/scalar.js`), the configuration rides in a data attribute, and the page
 * carries a policy as strict as the other pages' where Scalar allows: scripts only from our origin, fetches
 * only to our origin, nothing framed, no plug-ins, no base URL. Scalar injects its styles at run time, so
 * styles (not scripts) may be inline; its default web fonts from another origin are turned off.
 * (A `sandbox` policy, which would give the page an opaque origin and so no same-origin reach into the
 * cookie-authenticated dashboard, breaks Scalar: it reads localStorage at start. Not used, for that reason.)
 */

export const DOCS_CSP = [
  "default-src 'none'",
  // Scalar compiles a WebAssembly module (its highlighter); 'wasm-unsafe-eval' allows that and no JS eval.
  "script-src 'self' 'wasm-unsafe-eval'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "form-action 'none'",
  "base-uri 'none'",
  "frame-ancestors 'none'"
].join("; ")

/** The module that carries Scalar's script (3.4 MB): imported on the first `/docs/scalar.js`, never at start-up. */
type HttpApiScalarModule = typeof import("@effect/platform/HttpApiScalar")

/** Scalar's script as @effect/platform ships it: its own docs page, asked for once on a private router. */
const scalarScriptOf = (HttpApiScalar: HttpApiScalarModule) => Effect.gen(function*() {
  const router = yield* HttpApiBuilder.Router.router
  const app = yield* HttpRouter.toHttpApp(router)
  const response = yield* Effect.provideService(app, HttpServerRequest.HttpServerRequest, HttpServerRequest.fromWeb(new Request("http://localhost/docs")))
  if (response.body._tag !== "Uint8Array") return yield* Effect.dieMessage("Scalar's page has no body")
  const page = new TextDecoder().decode(response.body.body)
  const start = page.lastIndexOf("<script>")
  const end = page.lastIndexOf("</script>")
  if (start < 0 || end <= start) return yield* Effect.dieMessage("Scalar's script not found in its page")
  return page.slice(start + "<script>".length, end)
}).pipe(
  Effect.provide(HttpApiScalar.layer({ path: "/docs" }).pipe(
    Layer.provideMerge(HttpApiBuilder.Router.Live),
    Layer.provide(Layer.succeed(HttpApi.Api, { api: Api as unknown as Context.Tag.Service<HttpApi.Api>["api"], context: Context.empty() }))
  )),
  Effect.scoped
)

/*
 * The specifier is held in a variable on purpose: a bundler (esbuild, for the Lambda functions) leaves such an
 * `import()` alone instead of pulling 3.4 MB of script into the bundle. Node resolves it from node_modules,
 * as the Node host and the built package run; a bundle that carries no node_modules provides
 * `ScalarScriptSource` instead (hosts/lambda/ScalarBesideBundle.ts).
 */
const HTTP_API_SCALAR = "@effect/platform/HttpApiScalar"

/**
 * Where `/docs/scalar.js` comes from, read on its first request (then cached): by default @effect/platform's
 * HttpApiScalar, imported then. A host whose code is bundled without node_modules provides its own source.
 */
export class ScalarScriptSource extends Context.Reference<ScalarScriptSource>()("repomarket/ScalarScriptSource", {
  defaultValue: (): Effect.Effect<string, never, HttpRouter.HttpRouter.DefaultServices> =>
    Effect.flatMap(Effect.promise(() => import(HTTP_API_SCALAR) as Promise<HttpApiScalarModule>), (m) => Effect.orDie(scalarScriptOf(m)))
}) {}

/** JSON inside a `<script type="application/json">`: no `<`, `>` or `&` that could end or confuse the element. */
const scriptJson = (value: unknown) =>
  JSON.stringify(value).replace(/</g, "\\u003c").replace(/>/g, "\\u003e").replace(/&/g, "\\u0026")

const docsPage = () => {
  const spec = openApiDocument()
  const configuration = { _integration: "html", withDefaultFonts: false }
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(spec.info.title)} API reference</title>
<link rel="icon" href="/favicon.svg" type="image/svg+xml"></head>
<body>
<script id="api-reference" type="application/json" data-configuration="${escapeHtml(JSON.stringify(configuration))}">${scriptJson(spec)}</script>
<script src="/docs/scalar.js"></script>
</body></html>`
}

/** `GET /docs` and `GET /docs/scalar.js` on the app's router. */
export const DocsRoutesLive = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function*() {
    const script = yield* Effect.cached(yield* ScalarScriptSource)
    // Built on the first request, not at start-up: the OpenAPI document is a cold start's work otherwise.
    const page = yield* Effect.cached(Effect.sync(docsPage))
    yield* router.get("/docs", Effect.map(page, (html) => HttpServerResponse.text(html, {
      contentType: "text/html; charset=utf-8",
      headers: {
        "content-security-policy": DOCS_CSP,
        "x-content-type-options": "nosniff",
        "x-frame-options": "DENY",
        "referrer-policy": "same-origin",
        "cache-control": "no-cache"
      }
    })))
    yield* router.get("/docs/scalar.js", Effect.map(script, (js) => HttpServerResponse.text(js, {
      contentType: "text/javascript; charset=utf-8",
      headers: { "cache-control": "public, max-age=3600", "x-content-type-options": "nosniff" }
    })))
  })
)
