import { Effect, Layer } from "effect"
import { NodemailerModule, type ReadmePackages, ReadmePackagesModule, UndiciModule } from "../../adapters/LazyModules.js"
import { ScalarScriptSource } from "../../app/pages/Docs.js"

/*
 * What the Lambda functions load from files beside their bundle, on first use, instead of carrying it in the
 * bundle that every cold start reads and parses (hosts/lambda/template.yaml lists them as further esbuild
 * entry points; the bundle carries no node_modules):
 *   - scalar.mjs: Scalar's script (3.4 MB) for `/docs/scalar.js` (API and streaming functions);
 *   - undici.mjs: undici (1 MB), for the first webhook an instance posts;
 *   - nodemailer.mjs: nodemailer (0.5 MB), for the first sign-in mail an instance sends;
 *   - readme.mjs: marked and sanitize-html (0.6 MB), for the first README preview an instance renders.
 * The specifiers are computed, so esbuild leaves these `import()`s as they are. Only the bundled entry points
 * (handler.ts, streaming.ts, scheduled.ts) provide these layers: run from the sources, the defaults (the
 * packages from node_modules) apply.
 */
const besideBundle = (file: string) => new URL(`./${file}`, import.meta.url).href

/** The packages, for the ports (provide it to LambdaPortsLive). */
export const PackagesBesideBundle = Layer.mergeAll(
  Layer.succeed(UndiciModule, () => import(besideBundle("undici.mjs"))),
  Layer.succeed(NodemailerModule, () => import(besideBundle("nodemailer.mjs"))),
  Layer.succeed(ReadmePackagesModule, () => import(besideBundle("readme.mjs")) as Promise<ReadmePackages>)
)

/** Scalar's script, for the app's `/docs/scalar.js` (merge it into the ports the app is built on). */
export const ScalarBesideBundle = Layer.succeed(
  ScalarScriptSource,
  Effect.promise(() => import(besideBundle("scalar.mjs")) as Promise<{ readonly javascript: string }>).pipe(Effect.map((m) => m.javascript))
)
