/**
 * Mailers: SMTP (`SMTP_URL`), the log (development), and `MailerLive` choosing between them.
 *
 * @packageDocumentation
 */
export { MailerLive } from "../../adapters/mail/MailerLive.js"
export { MailerLog } from "../../adapters/mail/MailerLog.js"
export { MailerSmtp } from "../../adapters/mail/MailerSmtp.js"
