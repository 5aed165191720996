import { Either } from "effect"

/** The longest webhook URL accepted. */
export const WEBHOOK_URL_MAX_LENGTH = 2048

/**
 * The shape a webhook URL must have before the network policy (https only, no private targets) is
 * checked by the WebhookSender port: an absolute http(s) URL without credentials or fragment.
 */
export const validateWebhookUrl = (input: string): Either.Either<string, string> => {
  if (input.length > WEBHOOK_URL_MAX_LENGTH) return Either.left(`must be at most ${WEBHOOK_URL_MAX_LENGTH} characters`)
  let url: URL
  try {
    url = new URL(input)
  } catch {
    return Either.left("must be an absolute https URL")
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return Either.left("must be an absolute https URL")
  if (url.username || url.password) return Either.left("must not contain credentials")
  if (url.hash) return Either.left("must not contain a fragment")
  return Either.right(url.toString())
}
