import type { AddressInfo } from "node:net"
import { SMTPServer } from "smtp-server"

/** A message as the SMTP server received it: the envelope and the raw RFC 5322 text. */
export interface ReceivedMail {
  readonly from: string
  readonly to: ReadonlyArray<string>
  readonly raw: string
}

/** A real SMTP server on loopback (no TLS, no auth) that keeps every message it accepts, in order of arrival. */
export const startSmtpRecorder = async () => {
  const received: Array<ReceivedMail> = []
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS"],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Array<Buffer> = []
      stream.on("data", (chunk: Buffer) => chunks.push(chunk))
      stream.on("end", () => {
        received.push({
          from: session.envelope.mailFrom === false ? "" : session.envelope.mailFrom.address,
          to: session.envelope.rcptTo.map((r) => r.address),
          raw: Buffer.concat(chunks).toString("utf8")
        })
        callback()
      })
    }
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()))
  return {
    port: (server.server.address() as AddressInfo).port,
    received: received as ReadonlyArray<ReceivedMail>,
    close: () => new Promise<void>((resolve) => server.close(() => resolve()))
  }
}
