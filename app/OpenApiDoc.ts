import { OpenApi } from "@effect/platform"
import { Api } from "./Api.js"

/** Where an agent reads how to buy here (see LlmsTxt.ts): linked from the document's info and externalDocs. */
export const LLMS_TXT_PATH = "/llms.txt"

/**
 * The OpenAPI document, generated from the same schemas as the API. Request-decoding failures are
 * rendered as problem+json by the guard, so the document says so instead of showing the framework's
 * internal decode-error shape. `baseUrl` makes the link to `/llms.txt` absolute (OpenAPI wants a URL there).
 */
export const openApiDocument = (baseUrl = ""): OpenApi.OpenAPISpec => {
  const spec = OpenApi.fromApi(Api) as OpenApi.OpenAPISpec
  const json = JSON.stringify(spec).replaceAll("#/components/schemas/HttpApiDecodeError", "#/components/schemas/Problem")
  const out = JSON.parse(json) as OpenApi.OpenAPISpec
  const schemas = out.components.schemas as Record<string, unknown>
  delete schemas["HttpApiDecodeError"]
  for (const path of Object.values(out.paths)) {
    for (const op of Object.values(path as Record<string, { responses?: Record<string, { content?: Record<string, unknown> }> }>)) {
      const bad = op.responses?.["400"]?.content
      if (bad?.["application/json"] && !bad[PROBLEM]) {
        bad[PROBLEM] = bad["application/json"]
        delete bad["application/json"]
      }
    }
  }
  const llms = `${baseUrl}${LLMS_TXT_PATH}`
  const withGuide = out as OpenApi.OpenAPISpec & { externalDocs?: { url: string; description: string } }
  withGuide.info.description = `${out.info.description ?? ""} Agents: how to find and buy a repository is at ${llms}.`.trim()
  withGuide.externalDocs = { url: llms, description: "How to find and buy a repository here (for agents)" }
  return withGuide
}
const PROBLEM = "application/problem+json"
