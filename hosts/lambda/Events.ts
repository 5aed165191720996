/**
 * The few AWS Lambda event and result shapes this host reads, declared here rather than installing
 * `@types/aws-lambda`: only the fields used are typed, after AWS's documented examples of the API Gateway
 * HTTP API payload format 2.0 (which Lambda Function URLs share), and of an EventBridge scheduled event.
 */

/** API Gateway HTTP API (payload format version 2.0) and Lambda Function URL request event. */
export interface HttpEventV2 {
  readonly version: "2.0"
  readonly routeKey?: string
  /** The path as requested (percent-encoding kept). With a named HTTP API stage it starts with `/<stage>`. */
  readonly rawPath: string
  /** The query string without `?`, as requested. */
  readonly rawQueryString?: string
  /** Request cookies, one `name=value` per entry; API Gateway and Function URLs move `Cookie` here. */
  readonly cookies?: ReadonlyArray<string> | null
  /** Lower-cased header names; repeated headers are joined with commas. */
  readonly headers?: Readonly<Record<string, string | undefined>> | null
  readonly queryStringParameters?: Readonly<Record<string, string | undefined>> | null
  readonly requestContext: {
    readonly accountId?: string
    readonly apiId?: string
    readonly domainName?: string
    readonly domainPrefix?: string
    readonly http: {
      readonly method: string
      readonly path?: string
      readonly protocol?: string
      /** The caller's address as API Gateway or the Function URL saw the connection (not a header). */
      readonly sourceIp: string
      readonly userAgent?: string
    }
    readonly requestId?: string
    readonly routeKey?: string
    readonly stage?: string
    readonly time?: string
    readonly timeEpoch?: number
  }
  readonly body?: string | null
  readonly isBase64Encoded: boolean
  readonly pathParameters?: Readonly<Record<string, string | undefined>> | null
  readonly stageVariables?: Readonly<Record<string, string | undefined>> | null
}

/** The structured response of payload format 2.0 (API Gateway HTTP API and Function URLs). */
export interface HttpResultV2 {
  readonly statusCode: number
  /** Single-valued headers; `Set-Cookie` travels in `cookies` instead. */
  readonly headers: Record<string, string>
  /** One `Set-Cookie` value per entry. */
  readonly cookies?: Array<string>
  readonly body: string
  readonly isBase64Encoded: boolean
}

/** An EventBridge (CloudWatch Events) scheduled event. */
export interface ScheduledEvent {
  readonly version?: string
  readonly id?: string
  readonly "detail-type"?: string
  readonly source?: string
  readonly account?: string
  readonly time?: string
  readonly region?: string
  readonly resources?: ReadonlyArray<string>
  readonly detail?: unknown
}

/** The part of the Lambda context object this host uses. */
export interface LambdaContext {
  readonly awsRequestId?: string
  readonly getRemainingTimeInMillis?: () => number
}
