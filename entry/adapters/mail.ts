/**
 * Mailers: SMTP (`SMTP_URL`), the log (development), and `MailerLive` choosing between them.
 *
 * @packageDocumentation
 */
export { MailerLive } from "../../adapters/mail/MailerLive.js"
export { MailerLog } from "../../adapters/mail/MailerLog.js"
export { MailerSmtp } from "../../adapters/mail/MailerSmtp.js"

// Types of the core (the same as `repomarket`'s) and of this family that this entry's signatures name, so a
// consumer can name them too. Types only: the values come from the entry that owns them.
export type { Mailer } from "../../ports/Mailer.js"
