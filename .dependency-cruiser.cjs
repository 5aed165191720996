/**
 * Import boundaries: the layers of docs/architecture.md, each a folder, every arrow pointing one way.
 *
 *   domain/           the core. Its model (every file of domain/ outside domain/usecases/: pure data and rules)
 *                     → model, effect
 *   ports/            services (Context.Tags), their data, errors → ports, model, effect
 *   domain/usecases/  the operations, written against ports → usecases, ports, model, effect
 *   codec/            protocol codecs (x402 wire, SIWX, HTML) → codec, model, ports, effect, packages
 *   adapters/         implement ports → adapters, codec, ports, model, packages
 *   app/              the transport-neutral HTTP application → app, usecases, codec, ports, model, packages
 *   hosts/     Node server, Lambda, embed, workers, and the one composition root (hosts/Ports.ts) → anything above
 *   entry/, index.ts  the package's entry points          → anything above (re-exports)
 *
 * No exception: minting ids and secrets, which needs the SecretBox port's randomness, is a use-case step
 * (domain/usecases/Minting.ts), not a rule.
 * `npm run lint:boundaries` fails CI on any violation; test/package/boundaries.test.ts plants a wrong-way import for
 * every rule and checks the run fails.
 */
const PACKAGES = "^node_modules/"
const EFFECT = "^node_modules/effect/"
/** The model: domain/ without its use cases. */
const MODEL = "^domain/(?!usecases/)"
module.exports = {
  forbidden: [
    {
      name: "model-imports-only-itself-and-effect",
      comment:
        "the model imports only the model and effect, type-only imports too: no port, no other package, no node: " +
        "builtin. A rule that needs a service is a use case, or takes the function as a parameter.",
      severity: "error",
      from: { path: MODEL },
      to: { pathNot: [MODEL, EFFECT] }
    },
    {
      name: "ports-import-only-model-and-effect",
      severity: "error",
      from: { path: "^ports/" },
      to: { pathNot: ["^ports/", MODEL, EFFECT] }
    },
    {
      name: "use-cases-import-only-model-ports-and-effect",
      comment: "use cases are written against ports: the model, ports, other use cases and effect; no adapter, no other package",
      severity: "error",
      from: { path: "^domain/usecases/" },
      to: { pathNot: ["^domain/usecases/", "^ports/", MODEL, EFFECT] }
    },
    {
      name: "codec-imports-only-model-ports-and-packages",
      comment: "a protocol codec is pure translation both the app and the adapters use: no use case, adapter, app or host",
      severity: "error",
      from: { path: "^codec/" },
      to: { pathNot: ["^codec/", MODEL, "^ports/", PACKAGES] }
    },
    {
      name: "adapters-import-no-use-case-app-or-host",
      comment: "adapters implement ports: they may use the model, ports, codecs, other adapters and packages",
      severity: "error",
      from: { path: "^adapters/" },
      to: { path: "^(domain/usecases|app|hosts|entry|testing)/|^index[.]ts$" }
    },
    {
      name: "app-imports-no-adapter-or-host",
      comment: "the app is written against use cases and ports; which adapters run is the host's choice (hosts/Ports.ts)",
      severity: "error",
      from: { path: "^app/" },
      to: { path: "^(adapters|hosts|entry|testing)/|^index[.]ts$" }
    },
    {
      name: "hosts-import-no-entry",
      comment: "hosts are above everything but the package entry points",
      severity: "error",
      from: { path: "^hosts/" },
      to: { path: "^(entry|testing)/|^index[.]ts$" }
    },
    {
      name: "nothing-imports-tests",
      severity: "error",
      from: { pathNot: "^test/" },
      to: { path: "^test/" }
    },
    {
      name: "server-does-not-import-browser-code",
      comment: "web/ is browser code: the server gets it only as built assets (scripts/build-assets.mjs → app/pages/generated/)",
      severity: "error",
      from: { path: "^(domain|ports|codec|adapters|app|hosts|entry|testing)/|^index[.]ts$" },
      to: { path: "^web/" }
    },
    {
      name: "browser-code-stays-in-the-browser",
      comment: "web/ runs in a browser: no server code, no Node built-ins",
      severity: "error",
      from: { path: "^web/" },
      to: { path: "^(domain|ports|codec|adapters|app|hosts|entry|testing|test|bench|scripts)/" }
    },
    {
      name: "browser-code-has-no-node-builtins",
      severity: "error",
      from: { path: "^web/" },
      to: { dependencyTypes: ["core"] }
    },
    {
      name: "no-circular-in-core",
      comment: "no import cycle through the model, the ports or the use cases",
      severity: "error",
      from: { path: "^(domain|ports)/" },
      to: { circular: true }
    }
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: { exportsFields: ["exports"], conditionNames: ["import", "require", "node", "default", "types"] },
    exclude: { path: "^(test|bench)/" }
  }
}
