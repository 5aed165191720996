/**
 * The AWS Lambda entry point for a Function URL with `InvokeMode: RESPONSE_STREAM`: the same application as
 * handler.ts, but every answer is streamed (`awslambda.streamifyResponse`), so paid archives up to Lambda's
 * streamed-response limit (200 MB) are delivered chunk by chunk instead of hitting the 6 MB buffered limit.
 * SAM/esbuild entry: `hosts/lambda/streaming.ts`, handler `streaming.handler`.
 */
import { makeLambdaStreamingHandler, runtimeAwsLambda } from "./LambdaStreaming.js"
import { Layer } from "effect"
import { LambdaPortsLive } from "./LambdaPorts.js"
import { PackagesBesideBundle, ScalarBesideBundle } from "./BesideBundle.js"

const awslambda = runtimeAwsLambda()
const streaming = makeLambdaStreamingHandler(Layer.merge(LambdaPortsLive.pipe(Layer.provide(PackagesBesideBundle)), ScalarBesideBundle), awslambda)

export const handler = awslambda.streamifyResponse(streaming)

// Build during the init phase, as handler.ts does; a failure stops the instance naming the missing setting.
await streaming.ready()
