/*
 * Bundles a Lambda entry point the way `sam build` does for it, with the esbuild settings read from
 * hosts/lambda/template.yaml, so the tests and the benchmark build what is deployed. The code is
 * scripts/lambda-build.ts, which `npm run build:lambda` runs.
 */
export { type Bundled, bundleLikeTemplate, type TemplateBuild, templateBuildOf } from "../../../scripts/lambda-build.js"
