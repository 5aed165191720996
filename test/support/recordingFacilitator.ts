import { http, HttpResponse } from "msw"
import { setupServer } from "msw/node"
import { afterAll, afterEach, beforeAll } from "vitest"

/** One request a facilitator stand-in received: its path, and the body when no handler answered it. */
export interface FacilitatorCall {
  readonly path: string
  readonly body?: any
}

/**
 * A facilitator at `origin` played by msw, for the live-purchase suites: every request nobody answers is
 * recorded in `calls` and refused with a 500, so an unexpected verify or settle shows. Registers the calling
 * file's hooks: listening before all tests, handlers and `calls` reset after each, closed after all. Tests add
 * their answers with `server.use(…)` (and record them in `calls` themselves where they assert on them).
 */
export const recordingFacilitator = (origin: string) => {
  const calls: Array<FacilitatorCall> = []
  const server = setupServer(
    http.all(`${origin}/*`, async ({ request }) => {
      calls.push({ path: new URL(request.url).pathname, body: await request.text() })
      return new HttpResponse("unexpected facilitator call", { status: 500 })
    })
  )
  beforeAll(() => server.listen({ onUnhandledRequest: "bypass" }))
  afterEach(() => {
    server.resetHandlers()
    calls.length = 0
  })
  afterAll(() => server.close())
  return { calls, server }
}
