/*
 * A second esbuild entry point of the API and streaming functions (hosts/lambda/template.yaml): Scalar's
 * script for `/docs/scalar.js` (3.4 MB, the same text @effect/platform's HttpApiScalar puts in its page), in
 * its own output file `scalar.mjs` beside the handler's bundle, so the handler's bundle does not carry it and
 * the init phase does not load it. ScalarBesideBundle.ts imports it on the first `/docs/scalar.js` request.
 * The path goes around the package's `exports` (the module is internal): if a version of @effect/platform
 * moves it, `sam build` (and test/lambda) fail to resolve it instead of shipping a broken /docs.
 */
export { javascript } from "../../node_modules/@effect/platform/dist/esm/internal/httpApiScalar.js"
