/*
 * A further esbuild entry point of every Lambda function (hosts/lambda/template.yaml): undici in its own output
 * file beside the handler's bundle, imported with the first webhook post (hosts/lambda/BesideBundle.ts).
 */
export { Agent, fetch } from "undici"
