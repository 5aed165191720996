/*
 * A further esbuild entry point of every Lambda function (hosts/lambda/template.yaml): nodemailer in its own
 * output file beside the handler's bundle, imported with the first mail (hosts/lambda/BesideBundle.ts).
 */
export { default } from "nodemailer"
