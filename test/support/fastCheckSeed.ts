/**
 * Vitest setup file: every fast-check property in every suite runs from one seed, so a run is reproducible and
 * a mutant (`npm run test:mutation`) is killed or survives for the same reason every time. `FC_SEED=<integer>`
 * replays a failure; `FC_SEED=random` draws a fresh seed to explore (printed with any property that fails).
 */
import fc from "fast-check"
import { beforeEach } from "vitest"

// Fixed so that CI, local runs and Stryker agree; change it (or use FC_SEED=random) to explore new inputs.
const DEFAULT_SEED = 20_261_123

const seedFrom = (raw: string | undefined): number => {
  if (raw === undefined || raw === "") return DEFAULT_SEED
  if (raw === "random") return Math.floor(Math.random() * 0x7fff_ffff)
  const seed = Number(raw)
  if (!Number.isSafeInteger(seed)) throw new Error(`FC_SEED must be an integer or "random", got ${JSON.stringify(raw)}`)
  return seed
}

const seed = seedFrom(process.env.FC_SEED)
fc.configureGlobal({ ...fc.readConfigureGlobal(), seed })

beforeEach((context) => {
  context.onTestFailed(({ task }) => {
    const fromProperty = (task.result?.errors ?? []).some((e) => String(e?.message).includes("Property failed"))
    // fast-check's own message names the seed too; this line is the command that replays it.
    if (fromProperty) console.error(`fast-check seed ${seed}: FC_SEED=${seed} npx vitest run ${task.file?.filepath ?? ""}`)
  })
})
