import { randomUUID } from "node:crypto"
import type { IncomingMessage, ServerResponse } from "node:http"

/**
 * Request ids of the Node host. With several hosts behind a balancer, the id a buyer or an agent quotes from an
 * answer's `X-Request-Id` finds its access-log line (`… id=<id>`) on whichever host served it, front door
 * included. An id is a random UUID given by the host: never a client's own `X-Request-Id` (anyone can send one,
 * and one id would then name many requests), and never a counter (which would tell anyone this host's traffic).
 */

/** The response header that carries the id. */
const REQUEST_ID_HEADER = "x-request-id"

const named = new WeakMap<object, string>()

/**
 * Gives the request its id and puts it on the answer's headers before anything else writes them (node merges
 * them with the status line's headers, the front door's and the app's alike).
 */
export const nameRequest = (req: IncomingMessage, res: ServerResponse): void => {
  const id = randomUUID()
  named.set(req, id)
  res.setHeader(REQUEST_ID_HEADER, id)
}

/**
 * What an access-log line about this request ends with: ` id=<id>` (`source` is the Node `IncomingMessage`, as
 * the platform request carries it), or nothing where the host names no requests (the Lambda host: Lambda logs
 * each invocation under its own request id).
 */
export const requestIdSuffix = (source: unknown): string => {
  const id = typeof source === "object" && source !== null ? named.get(source) : undefined
  return id === undefined ? "" : ` id=${id}`
}
