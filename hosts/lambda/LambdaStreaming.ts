import type { Layer } from "effect"
import { type AppPorts, makeInstanceWebHandler } from "./LambdaApp.js"
import { type AwsLambdaGlobal, fromWebHandlerStreaming, type StreamingEventHandler, type StreamingOptions } from "./StreamingAdapter.js"

/** The streaming Lambda HTTP handler, with control over its application's lifetime. */
export interface LambdaStreamingHandler extends StreamingEventHandler {
  /** Builds the application now (during Lambda's init phase); rejects with why it cannot start. */
  readonly ready: () => Promise<void>
  /** Releases the database pool and other resources (tests; Lambda simply freezes the instance). */
  readonly dispose: () => Promise<void>
}

/**
 * The streaming Lambda handler (Function URL with `InvokeMode: RESPONSE_STREAM`) over the given ports: the
 * same application as `makeLambdaHandler`, built once per instance, whose answers are streamed to the
 * caller through `awslambda.HttpResponseStream` instead of returned whole, so archives up to Lambda's
 * streamed-response limit are delivered with flat memory. Wrap it with `awslambda.streamifyResponse`.
 */
export const makeLambdaStreamingHandler = <E>(
  ports: Layer.Layer<AppPorts, E>,
  awslambda: AwsLambdaGlobal,
  options: StreamingOptions = {}
): LambdaStreamingHandler => {
  const instance = makeInstanceWebHandler(ports)
  const handler = fromWebHandlerStreaming((request, event) => instance.get().then((web) => web(request, event)), awslambda, options)
  return Object.assign(handler, { ready: () => instance.get().then(() => undefined), dispose: instance.dispose })
}

/** The runtime's `awslambda` global, or a start-up error saying where this entry runs. */
export const runtimeAwsLambda = (): AwsLambdaGlobal => {
  const global = (globalThis as { awslambda?: AwsLambdaGlobal }).awslambda
  if (typeof global?.streamifyResponse !== "function" || typeof global.HttpResponseStream?.from !== "function") {
    throw new Error(
      "repomarket cannot start: the streaming handler (hosts/lambda/streaming.ts) runs on the AWS Lambda Node.js " +
        "runtime, which defines the `awslambda` global; use handler.ts (buffered) elsewhere"
    )
  }
  return global
}
