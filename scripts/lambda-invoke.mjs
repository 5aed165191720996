// `npm run lambda:invoke -- <ApiFunction|DeliveryFunction> <event.json>`: one local invocation of a function
// built by `npm run build:lambda` (under .lambda/), with the settings from the environment, as docs/deploy-lambda.md
// shows. Prints the answer (an HTTP answer as `<status> <body>`), then exits at once, as Lambda freezes an
// instance after its answer: the handler's database pool and timers are not waited for. A setting the init
// phase refuses (a required one missing, one malformed) is one line naming it, exit code 1, as `npm start` does.
// StreamingFunction answers through Lambda's response stream, which only the Lambda runtime (or `sam local`) has.
import { readFile } from "node:fs/promises"
import { resolve } from "node:path"
import { pathToFileURL } from "node:url"

const FUNCTIONS = { ApiFunction: "handler.mjs", DeliveryFunction: "scheduled.mjs" }
const [name, eventFile, dir = ".lambda"] = process.argv.slice(2)
const fail = (line) => {
  console.error(line)
  process.exit(1)
}
if (!(name in FUNCTIONS) || eventFile === undefined) {
  fail("usage: npm run lambda:invoke -- <ApiFunction|DeliveryFunction> <event.json> [<build dir>, default .lambda]")
}
const bundle = resolve(dir, name, FUNCTIONS[name])
const event = await readFile(eventFile, "utf8").then(JSON.parse, (e) => fail(`cannot read the event ${eventFile}: ${e.message}`))
// The init phase: the bundle builds the application at import (top-level await), reading the settings.
const module = await import(pathToFileURL(bundle).href).catch((e) =>
  fail(e?.code === "ERR_MODULE_NOT_FOUND" && String(e.message).includes(bundle)
    ? `${bundle} is not built: run npm run build:lambda first`
    : String(e?.message ?? e)))
const answer = await module.handler(event, { awsRequestId: "local-invoke", getRemainingTimeInMillis: () => 60_000 })
  .catch((e) => fail(`the handler failed: ${e?.message ?? e}`))
console.log(answer !== null && typeof answer === "object" && "statusCode" in answer ? `${answer.statusCode} ${answer.body ?? ""}` : JSON.stringify(answer ?? null))
process.exit(0)
