import { describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import { validateWebhookUrl, WEBHOOK_URL_MAX_LENGTH } from "../../domain/rules/WebhookUrl.js"

/** Why the URL was refused, or null when it was accepted. */
const refusal = (input: string) => Either.match(validateWebhookUrl(input), { onLeft: (why) => why, onRight: () => null })
const urlOfLength = (n: number) => {
  const head = "https://hooks.example.com/"
  return head + "a".repeat(n - head.length)
}

describe("webhook URL shape", () => {
  it("an absolute http(s) URL is accepted, in its normal form", () => {
    expect(validateWebhookUrl("https://hooks.example.com/repomarket")).toEqual(Either.right("https://hooks.example.com/repomarket"))
    expect(validateWebhookUrl("HTTPS://Hooks.Example.com")).toEqual(Either.right("https://hooks.example.com/"))
    // http is a shape the network policy (WebhookSender) refuses later, with its own reason.
    expect(validateWebhookUrl("http://hooks.example.com/x")).toEqual(Either.right("http://hooks.example.com/x"))
  })

  it("a URL of at most 2048 characters is accepted; one character more is refused for its length", () => {
    expect(WEBHOOK_URL_MAX_LENGTH).toBe(2048)
    expect(Either.isRight(validateWebhookUrl(urlOfLength(2048)))).toBe(true)
    expect(refusal(urlOfLength(2049))).toBe("must be at most 2048 characters")
  })

  it("something that is not an absolute URL is refused", () => {
    for (const input of ["", "hooks.example.com/x", "/relative/path", "https://"]) {
      expect(refusal(input), input).toBe("must be an absolute https URL")
    }
  })

  it("a URL of another scheme is refused", () => {
    for (const input of ["ftp://hooks.example.com/x", "file:///etc/passwd", "javascript:alert(1)", "ws://hooks.example.com"]) {
      expect(refusal(input), input).toBe("must be an absolute https URL")
    }
  })

  it("a URL carrying credentials is refused, whether a user name, a password or both", () => {
    for (const input of ["https://user@hooks.example.com/x", "https://:secret@hooks.example.com/x", "https://user:secret@hooks.example.com/x"]) {
      expect(refusal(input), input).toBe("must not contain credentials")
    }
  })

  it("a URL with a fragment is refused (it would never reach the receiver)", () => {
    expect(refusal("https://hooks.example.com/x#part")).toBe("must not contain a fragment")
  })

  it("a query string is part of the receiver's address and is kept", () => {
    expect(validateWebhookUrl("https://hooks.example.com/x?token=abc")).toEqual(Either.right("https://hooks.example.com/x?token=abc"))
  })
})
