import { Either } from "effect"

/** A deliberately plain check: one `@`, no spaces, a dotted domain, RFC 5321 lengths. Lower-cased. */
export const normalizeEmail = (input: string): Either.Either<string, string> => {
  const email = input.trim().toLowerCase()
  const problem = "must be an email address"
  if (email.length > 254) return Either.left(problem)
  const at = email.lastIndexOf("@")
  if (at < 1 || at !== email.indexOf("@")) return Either.left(problem)
  const local = email.slice(0, at)
  const domain = email.slice(at + 1)
  if (local.length > 64 || /[\s<>()[\]\\,;:"\u0000-\u001f\u007f-\u009f]/.test(local)) return Either.left(problem)
  // The domain's own limit (253) needs no check: the whole address is at most 254, so the domain at most 252.
  if (!/^([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z][a-z0-9-]{0,62}$/.test(domain)) {
    return Either.left(problem)
  }
  return Either.right(email)
}
