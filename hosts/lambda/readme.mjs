/*
 * A further esbuild entry point of every Lambda function (hosts/lambda/template.yaml): the README renderer's
 * packages (marked, sanitize-html with its HTML parser and PostCSS) in their own output file beside the
 * handler's bundle, imported with the first README an instance renders (hosts/lambda/BesideBundle.ts).
 */
export { Marked } from "marked"
export { default as sanitizeHtml } from "sanitize-html"
