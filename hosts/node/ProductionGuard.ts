/**
 * What `npm start` refuses in production. Read from the environment directly, before anything is built (no
 * embedded database, no generated key file, no cluster): a refusal is one line naming what is missing.
 */

const isSet = (env: NodeJS.ProcessEnv, name: string) => (env[name] ?? "").trim() !== ""

/** `SIGN_IN_LINKS_TO_LOG`: whether sign-in links may be written to the log where no `SMTP_URL` is set. */
const linksToLog = (env: NodeJS.ProcessEnv): boolean => {
  const raw = (env["SIGN_IN_LINKS_TO_LOG"] ?? "").trim().toLowerCase()
  if (["", "0", "false", "no", "off"].includes(raw)) return false
  if (["1", "true", "yes", "on"].includes(raw)) return true
  throw new Error(`SIGN_IN_LINKS_TO_LOG must be 1 or 0 (true or false; got ${JSON.stringify(env["SIGN_IN_LINKS_TO_LOG"])})`)
}

/** Why this start counts as production (`NODE_ENV=production`, or a public origin on https), or null. */
const productionBecause = (env: NodeJS.ProcessEnv): string | null => {
  if ((env["NODE_ENV"] ?? "").trim().toLowerCase() === "production") return "NODE_ENV=production"
  try {
    if (new URL((env["BASE_URL"] ?? "").trim()).protocol === "https:") return "BASE_URL is https"
  } catch {
    // Not a URL: not production by this rule (PublicOriginFromConfig refuses a malformed BASE_URL).
  }
  return null
}

/**
 * Throws, with one line naming every missing setting, when a production start (`NODE_ENV=production` or an
 * https `BASE_URL`) lacks `SECRET_KEYS` (else a key is generated into `DATA_DIR`: on an ephemeral disk it is
 * lost, and every sealed token, session and stored secret with it), or lacks `SMTP_URL` without
 * `SIGN_IN_LINKS_TO_LOG=1` (else the development mailer writes sign-in links, each a key to an account, to
 * the log). A malformed `SIGN_IN_LINKS_TO_LOG` is refused anywhere.
 */
export const checkProductionSettings = (env: NodeJS.ProcessEnv = process.env): void => {
  const toLog = linksToLog(env)
  const because = productionBecause(env)
  if (because === null) return
  const missing: Array<string> = []
  if (!isSet(env, "SECRET_KEYS")) {
    missing.push("SECRET_KEYS is not set (a key generated into DATA_DIR dies with the disk, and every sealed secret and session with it)")
  }
  if (!isSet(env, "SMTP_URL") && !toLog) {
    missing.push("SMTP_URL is not set (sign-in links would be written to the log; SIGN_IN_LINKS_TO_LOG=1 allows that)")
  }
  if (missing.length > 0) throw new Error(`Refusing to start in production (${because}): ${missing.join("; ")}`)
}
