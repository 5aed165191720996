/**
 * Optional peer dependencies: packages only some ways of running repomarket need (the embedded database, the
 * Node HTTP server, the MCP SDK), left out of a library user's install unless asked for. Each is imported on first
 * use, and when it is missing the failure names the packages and the command that installs them. Here, beside the
 * other small pieces the app and the adapters both use, so the MCP door and the adapters share one check.
 */

/** Whether `cause` is Node's "cannot find this package" for one of `packages` (not a failure inside one). */
export const isMissingPackage = (cause: unknown, packages: ReadonlyArray<string>): boolean => {
  const code = (cause as { code?: unknown } | null)?.code
  if (code !== "ERR_MODULE_NOT_FOUND" && code !== "MODULE_NOT_FOUND") return false
  const message = cause instanceof Error ? cause.message : String(cause)
  return packages.some((name) => message.includes(`'${name}'`) || message.includes(`"${name}"`) || message.includes(`${name}/`))
}

/** The one-line explanation of missing optional packages: what needs them and how to install them. */
export const missingPackagesMessage = (purpose: string, packages: ReadonlyArray<string>): string =>
  `${purpose} needs ${packages.join(" and ")}, ${packages.length === 1 ? "an optional peer dependency" : "optional peer dependencies"} ` +
  `of repomarket that is not installed: npm install ${packages.join(" ")}`

/**
 * Imports what `load` imports; when one of `packages` is not installed, rejects with an Error whose message is
 * `missingPackagesMessage(purpose, packages)` (other failures pass through unchanged).
 */
export const importOptional = <A>(purpose: string, packages: ReadonlyArray<string>, load: () => Promise<A>): Promise<A> =>
  load().catch((cause: unknown) => {
    throw isMissingPackage(cause, packages) ? new Error(missingPackagesMessage(purpose, packages), { cause }) : cause
  })
