/**
 * The few AWS Lambda event and result shapes this host reads, declared here rather than installing
 * `@types/aws-lambda`: only the fields used are typed, after AWS's documented examples of the API Gateway
 * HTTP API payload format 2.0 (which Lambda Function URLs share), and of an EventBridge scheduled event.
 */

/** API Gateway HTTP API (payload format version 2.0) and Lambda Function URL request event. */
export interface HttpEventV2 {
  /** The payload format version. */
  readonly version: "2.0"
  /** The matched route (`$default` for a catch-all). */
  readonly routeKey?: string
  /** The path as requested (percent-encoding kept). With a named HTTP API stage it starts with `/<stage>`. */
  readonly rawPath: string
  /** The query string without `?`, as requested. */
  readonly rawQueryString?: string
  /** Request cookies, one `name=value` per entry; API Gateway and Function URLs move `Cookie` here. */
  readonly cookies?: ReadonlyArray<string> | null
  /** Lower-cased header names; repeated headers are joined with commas. */
  readonly headers?: Readonly<Record<string, string | undefined>> | null
  /** The query parameters, decoded; repeated ones joined with commas. */
  readonly queryStringParameters?: Readonly<Record<string, string | undefined>> | null
  /** Facts about the request: method, path, caller's address, ids. */
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
  /** The request body, base64 when `isBase64Encoded`. */
  readonly body?: string | null
  /** Whether `body` is base64. */
  readonly isBase64Encoded: boolean
  /** Path parameters of the matched route. */
  readonly pathParameters?: Readonly<Record<string, string | undefined>> | null
  /** The stage's variables. */
  readonly stageVariables?: Readonly<Record<string, string | undefined>> | null
}

/** The structured response of payload format 2.0 (API Gateway HTTP API and Function URLs). */
export interface HttpResultV2 {
  /** The HTTP status. */
  readonly statusCode: number
  /** Single-valued headers; `Set-Cookie` travels in `cookies` instead. */
  readonly headers: Record<string, string>
  /** One `Set-Cookie` value per entry. */
  readonly cookies?: Array<string>
  /** The body, base64 when `isBase64Encoded`. */
  readonly body: string
  /** Whether `body` is base64. */
  readonly isBase64Encoded: boolean
}

/** An EventBridge (CloudWatch Events) scheduled event. */
export interface ScheduledEvent {
  /** The event format version. */
  readonly version?: string
  /** The event's id. */
  readonly id?: string
  /** `Scheduled Event` for a schedule. */
  readonly "detail-type"?: string
  /** `aws.events` for a schedule. */
  readonly source?: string
  /** The AWS account. */
  readonly account?: string
  /** When the schedule fired (ISO 8601). */
  readonly time?: string
  /** The AWS region. */
  readonly region?: string
  /** The ARN of the rule that fired. */
  readonly resources?: ReadonlyArray<string>
  /** The event's detail (empty for a schedule). */
  readonly detail?: unknown
}

/** The part of the Lambda context object this host uses. */
export interface LambdaContext {
  /** The invocation's request id. */
  readonly awsRequestId?: string
  /** Milliseconds left before Lambda stops the invocation. */
  readonly getRemainingTimeInMillis?: () => number
}
