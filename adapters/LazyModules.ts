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

/** Loads `undici` (1 MB of script), for WebhookSenderHttp's first post. */
export class UndiciModule extends Context.Reference<UndiciModule>()("adapters/LazyModules/UndiciModule", {
  defaultValue: () => (): Promise<Pick<typeof import("undici"), "Agent" | "fetch">> => import(UNDICI)
}) {}

/** Loads `nodemailer` (0.5 MB of script), for MailerSmtp's first mail. */
export class NodemailerModule extends Context.Reference<NodemailerModule>()("adapters/LazyModules/NodemailerModule", {
  defaultValue: () => (): Promise<{ readonly default: Pick<typeof import("nodemailer"), "createTransport"> }> => import(NODEMAILER)
}) {}
