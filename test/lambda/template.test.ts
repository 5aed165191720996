import { execFile, spawnSync } from "node:child_process"
import { existsSync, readFileSync } from "node:fs"
import { describe, expect, it } from "@effect/vitest"
import { LAMBDA_POOL_SIZE, LAMBDA_REQUIRED_SETTINGS } from "../../hosts/lambda/LambdaPorts.js"

const root = new URL("../../", import.meta.url)

/**
 * AWS Lambda's Node runtimes and the day each can no longer be created (AWS's "Lambda runtimes" page,
 * "Block function create"; cfn-lint's E2533 reads the same dates). A runtime missing here fails the test.
 */
const LAMBDA_NODE_CREATE_BLOCKED: Record<string, string> = {
  "nodejs18.x": "2026-06-01",
  "nodejs20.x": "2026-06-01",
  "nodejs22.x": "2027-06-01",
  "nodejs24.x": "2028-06-01"
}

/** cfn-lint on this machine, or null when it is not installed. */
const cfnLint = (() => {
  const found = spawnSync("cfn-lint", ["--version"], { encoding: "utf8" })
  return found.status === 0 ? found.stdout.trim() : null
})()
if (cfnLint === null) console.warn("cfn-lint not installed: the template's lint test is skipped (REQUIRE_CFN_LINT=1 makes it fail instead)")

const lint = (file: string) =>
  new Promise<{ code: number | null; output: string }>((resolve) => {
    execFile("cfn-lint", [file], { encoding: "utf8" }, (error, stdout, stderr) =>
      resolve({ code: error === null ? 0 : (error as { code?: number }).code ?? null, output: `${stdout}${stderr}`.trim() }))
  })
const template = readFileSync(new URL("hosts/lambda/template.yaml", root), "utf8")
const settingsPage = readFileSync(new URL("docs/settings.md", root), "utf8")

/** Every setting named in the table of docs/settings.md (the operator settings of the product rulings, and the rest). */
const documentedSettings = () => {
  const names = new Set<string>()
  for (const line of settingsPage.split("\n").filter((l) => l.startsWith("| `"))) {
    for (const match of line.split("|")[1]!.matchAll(/`([A-Z][A-Z0-9_]+)`/g)) names.add(match[1]!)
  }
  return [...names]
}

/** The environment variables the template gives the functions (the `Variables:` map under Globals). */
const templateVariables = () => {
  const block = template.slice(template.indexOf("      Variables:\n"), template.indexOf("\nResources:"))
  return [...block.matchAll(/^ {8}([A-Z][A-Z0-9_]+):/gm)].map((m) => m[1]!)
}

/** A parameter's block of properties, by name. */
const parameter = (name: string) => {
  const match = new RegExp(`^ {2}${name}:\\n((?: {4}.*\\n)+)`, "m").exec(template)
  expect(match, `parameter ${name}`).not.toBeNull()
  return match![1]!
}

describe("hosts/lambda/template.yaml", () => {
  it("sets every documented operator setting, except those of the Node host, which it names as not applicable", () => {
    const settings = documentedSettings()
    expect(settings).toEqual(expect.arrayContaining(["BASE_URL", "DATABASE_URL", "SECRET_KEYS", "SMTP_URL", "WEBHOOK_ALLOW_PRIVATE_NETWORKS"]))
    const nodeOnly = ["PORT", "RESPONSE_CACHE_MS", "TRUSTED_PROXIES", "LOG_LEVEL", "METRICS_PORT", "METRICS_HOST", "SIGN_IN_LINKS_TO_LOG",
      "HEADERS_TIMEOUT_MS", "REQUEST_TIMEOUT_MS", "KEEP_ALIVE_TIMEOUT_MS", "RESPONSE_STALL_TIMEOUT_MS", "MAX_CONNECTIONS", "MAX_CONNECTIONS_PER_CLIENT"]
    const variables = templateVariables()
    expect(settings.filter((s) => !nodeOnly.includes(s) && !variables.includes(s))).toEqual([])
    const notApplicable = template.slice(template.indexOf("# Not applicable on Lambda:"), template.indexOf("Variables:", template.indexOf("# Not applicable on Lambda:")))
    for (const setting of nodeOnly) {
      expect(variables).not.toContain(setting)
      expect(notApplicable).toContain(setting)
    }
  })

  it("asks for the settings Lambda requires (no default) and never echoes a secret parameter", () => {
    const parameterOf: Record<string, string> = { BASE_URL: "BaseUrl", DATABASE_URL: "DatabaseUrl", SECRET_KEYS: "SecretKeys", SMTP_URL: "SmtpUrl" }
    for (const setting of LAMBDA_REQUIRED_SETTINGS) {
      const name = parameterOf[setting]!
      expect(template).toContain(`${setting}: !Ref ${name}`)
      expect(parameter(name)).not.toMatch(/Default:/)
    }
    for (const secret of ["DatabaseUrl", "SecretKeys", "SmtpUrl", "GithubToken", "GithubClientSecret"]) {
      expect(parameter(secret), secret).toMatch(/NoEcho: true/)
    }
  })

  it("points each function at a bundled entry that exports `handler`, ESM with the migrations already in the bundle", () => {
    const functions = [...template.matchAll(/Handler: (\w+)\.handler[\s\S]*?EntryPoints:\n\s+- (\S+)/g)].map((m) => ({ handler: m[1]!, entry: m[2]! }))
    expect(functions).toEqual([
      { handler: "handler", entry: "hosts/lambda/handler.ts" },
      { handler: "streaming", entry: "hosts/lambda/streaming.ts" },
      { handler: "scheduled", entry: "hosts/lambda/scheduled.ts" }
    ])
    for (const { entry } of functions) {
      expect(existsSync(new URL(entry, root))).toBe(true)
      expect(readFileSync(new URL(entry, root), "utf8")).toMatch(/^export const handler = /m)
    }
    expect(template.match(/Format: esm/g)).toHaveLength(3)
    expect(template.match(/- \.js=\.mjs/g)).toHaveLength(3)
    expect(readFileSync(new URL("adapters/sql/Migrations.ts", root), "utf8")).toContain("Migrator.fromRecord(")
    expect(template).toMatch(/PayloadFormatVersion: "2\.0"/)
    expect(template).toMatch(/ScheduleExpression: rate\(1 minute\)/)
  })

  it("runs on a Node runtime AWS still creates, on arm64, each bundle built for that runtime's Node", () => {
    const runtimes = [...template.matchAll(/^ +Runtime: (\S+)$/gm)].map((m) => m[1]!)
    expect(runtimes).toEqual(["nodejs24.x"])
    const runtime = runtimes[0]!
    // AWS's Lambda runtimes page: the day each Node runtime stops being creatable ("Block function create").
    const createBlocked = LAMBDA_NODE_CREATE_BLOCKED[runtime]
    expect(createBlocked, `${runtime} is not a Node runtime AWS lists`).toBeDefined()
    expect(Date.parse(createBlocked!)).toBeGreaterThan(Date.now())
    expect(template).toMatch(/^ {4}Architectures: \[arm64\]$/m)
    // esbuild's target is the runtime's Node: syntax that Node runs natively is left as written.
    const major = /^nodejs(\d+)\.x$/.exec(runtime)![1]!
    expect([...template.matchAll(/^ {8}Target: (\S+)$/gm)].map((m) => m[1])).toEqual([`node${major}`, `node${major}`, `node${major}`])
    // The package's own floor admits that Node.
    const engines = (JSON.parse(readFileSync(new URL("package.json", root), "utf8")) as { engines: { node: string } }).engines.node
    expect(Number(/^>=(\d+)/.exec(engines)![1])).toBeLessThanOrEqual(Number(major))
  })

  it.skipIf(cfnLint === null && process.env["REQUIRE_CFN_LINT"] !== "1")("passes cfn-lint with no error (run when cfn-lint is installed; required in CI)", async () => {
    expect(cfnLint, "cfn-lint is not installed (pip install cfn-lint), and REQUIRE_CFN_LINT=1 asks for it").not.toBeNull()
    const result = await lint(new URL("hosts/lambda/template.yaml", root).pathname)
    // Exit code 0: no error and no warning; 4 (warnings only) and 8 (informational only) are named in the output.
    expect(result.output).toBe("")
    expect(result.code).toBe(0)
  }, 120_000)

  it("serves the streaming handler behind a RESPONSE_STREAM Function URL, the buffered one behind BUFFERED", () => {
    const resource = (name: string) => template.slice(template.indexOf(`\n  ${name}:\n`), template.indexOf("\n\n", template.indexOf(`\n  ${name}:\n`)))
    expect(resource("StreamingFunction")).toMatch(/Handler: streaming\.handler[\s\S]*InvokeMode: RESPONSE_STREAM/)
    expect(resource("ApiFunction")).toMatch(/InvokeMode: BUFFERED/)
    // Streaming past 6 MB runs at up to 2 MB/s: the 29 s of the API function would cut a large archive.
    expect(Number(/Timeout: (\d+)/.exec(resource("StreamingFunction"))![1])).toBeGreaterThanOrEqual(120)
    expect(template).toContain("!GetAtt StreamingFunctionUrl.FunctionUrl")
  })

  it("gives every function a log group of its own, kept LogRetentionDays, and a concurrency MaxHttpInstances can cap", () => {
    const resource = (name: string) => template.slice(template.indexOf(`\n  ${name}:\n`), template.indexOf("\n\n", template.indexOf(`\n  ${name}:\n`)))
    expect(parameter("LogRetentionDays")).toMatch(/Default: 30\n/)
    expect(parameter("MaxHttpInstances")).toMatch(/Default: ""\n/)
    // The arithmetic it asks of the operator names the pool each instance opens.
    expect(parameter("MaxHttpInstances")).toContain(`up to ${LAMBDA_POOL_SIZE} PostgreSQL connections`)
    for (const name of ["ApiFunction", "StreamingFunction", "DeliveryFunction"]) {
      expect(resource(name), name).toMatch(new RegExp(`LoggingConfig:\\n {8}LogGroup: !Ref ${name}Logs\\n`))
      expect(resource(`${name}Logs`), name).toMatch(/Type: AWS::Logs::LogGroup[\s\S]*RetentionInDays: !Ref LogRetentionDays/)
      expect(resource(name), name).toMatch(/ReservedConcurrentExecutions: !If \[HasMaxHttpInstances, (!Ref MaxHttpInstances|1), !Ref AWS::NoValue\]/)
    }
    // Unset, nothing is reserved: a new account's quota of 10 leaves none to reserve.
    expect(template).toContain(`HasMaxHttpInstances: !Not [!Equals [!Ref MaxHttpInstances, ""]]`)
  })
})
