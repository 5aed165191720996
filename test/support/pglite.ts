import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Layer } from "effect"
import { pgliteEmbedded } from "../../adapters/sql/PgliteEmbedded.js"

/**
 * An embedded PGlite database in a temporary directory under os.tmpdir(), removed when the layer is released.
 * Creating one takes seconds: build it once per test file (e.g. one `layer(...)` around the file's tests) and
 * keep tests apart with distinct ids, emails and repos.
 */
export const pgliteTestDatabase = () =>
  Layer.unwrapScoped(
    Effect.map(
      Effect.acquireRelease(
        Effect.promise(() => mkdtemp(join(tmpdir(), "repomarket-pglite-"))),
        (dir) => Effect.promise(() => rm(dir, { recursive: true, force: true }))
      ),
      (dataDir) => pgliteEmbedded({ dataDir })
    )
  )
