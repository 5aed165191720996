import { Context } from "effect"

/*
 * Packages an adapter needs only when it first does its work (a mail, a webhook), imported then rather than
 * when the application starts. By default they are imported from node_modules; the specifiers are held in
 * variables on purpose, so that a bundler (esbuild, for the Lambda functions) leaves these `import()`s alone
 * instead of putting the packages into the bundle, where every cold start would parse them. A host whose
 * code is bundled without node_modules provides these references with its own loaders (the Lambda functions
 * load the packages from files beside their bundles: hosts/lambda/BesideBundle.ts).
 */

const UNDICI = "undici"
const NODEMAILER = "nodemailer"
const MARKED = "marked"
const SANITIZE_HTML = "sanitize-html"

/** Loads `undici` (1 MB of script), for WebhookSenderHttp's first post. */
export class UndiciModule extends Context.Reference<UndiciModule>()("repomarket/UndiciModule", {
  defaultValue: () => (): Promise<Pick<typeof import("undici"), "Agent" | "fetch">> => import(UNDICI)
}) {}

/** Loads `nodemailer` (0.5 MB of script), for MailerSmtp's first mail. */
export class NodemailerModule extends Context.Reference<NodemailerModule>()("repomarket/NodemailerModule", {
  defaultValue: () => (): Promise<{ readonly default: Pick<typeof import("nodemailer"), "createTransport"> }> => import(NODEMAILER)
}) {}

/** What the README preview is rendered with (adapters/github/ReadmeHtml.ts). */
export interface ReadmePackages {
  readonly Marked: typeof import("marked").Marked
  readonly sanitizeHtml: typeof import("sanitize-html")
}

/** Loads `marked` and `sanitize-html` (with its HTML parser and PostCSS, 0.6 MB of script), for the first README. */
export class ReadmePackagesModule extends Context.Reference<ReadmePackagesModule>()("repomarket/ReadmePackagesModule", {
  defaultValue: () => async (): Promise<ReadmePackages> => {
    const [marked, sanitize] = await Promise.all([
      import(MARKED) as Promise<typeof import("marked")>,
      import(SANITIZE_HTML) as Promise<{ readonly default: typeof import("sanitize-html") }>
    ])
    return { Marked: marked.Marked, sanitizeHtml: sanitize.default }
  }
}) {}
