/**
 * Import boundaries (docs/architecture.md): every arrow points one way, inwards.
 *   model (domain/, but not domain/usecases/: pure data and rules) → effect only
 *   ports (ports/: services as Context.Tags, with their data and errors) → model, effect
 *   use cases (domain/usecases/) → ports, model, effect
 *   adapters (adapters/) implement ports → ports, model, packages; never hosts
 *   hosts (hosts/: the HTTP app, the Lambda handlers) wire adapters into use cases → anything but tests and web/
 * Nothing under domain/ or ports/ imports in a circle. Not enforced yet: adapters importing use cases (one type),
 * HTTP handlers importing adapters directly, and domain/rules/Tokens.ts's SecretBox import (the exception below).
 * `npm run lint:boundaries` fails CI on any violation; test/package/boundaries.test.ts checks that a planted
 * wrong-way import fails it.
 */
module.exports = {
  forbidden: [
    {
      name: "model-imports-only-itself-and-effect",
      comment:
        "the model (domain/ but not domain/usecases/) imports only the model and effect, type-only imports too: no port, " +
        "no other package, no node: builtin. A rule that needs a service takes its function as a parameter.",
      severity: "error",
      from: { path: "^domain/", pathNot: ["^domain/usecases/", "^domain/rules/Tokens[.]ts$"] },
      to: { pathNot: ["^domain/", "^node_modules/effect/"] }
    },
    {
      name: "model-tokens-imports-only-secretbox",
      comment:
        "the one known exception to model-imports-only-itself-and-effect (issue 28): domain/rules/Tokens.ts mints ids " +
        "with the SecretBox port, and its callers in Purchases.ts and Settlements.ts cannot change yet. Nothing else.",
      severity: "error",
      from: { path: "^domain/rules/Tokens[.]ts$" },
      to: { pathNot: ["^domain/", "^node_modules/effect/", "^ports/SecretBox[.]ts$"] }
    },
    {
      name: "model-and-ports-do-not-import-use-cases",
      comment: "use cases sit above the model and the ports: nothing below imports them",
      severity: "error",
      from: { path: "^(domain|ports)/", pathNot: "^domain/usecases/" },
      to: { path: "^domain/usecases/" }
    },
    {
      name: "use-cases-import-only-model-ports-and-effect",
      comment: "use cases (domain/usecases/) are written against ports: the model, ports and effect, no adapter, no other package",
      severity: "error",
      from: { path: "^domain/usecases/" },
      to: { pathNot: ["^domain/", "^ports/", "^node_modules/effect/"] }
    },
    {
      name: "ports-import-only-model-and-effect",
      severity: "error",
      from: { path: "^ports/" },
      to: { pathNot: ["^ports/", "^domain/", "^node_modules/effect/"] }
    },
    {
      name: "adapters-do-not-import-hosts",
      severity: "error",
      from: { path: "^adapters/" },
      to: { path: "^hosts/" }
    },
    {
      name: "core-does-not-import-adapters",
      severity: "error",
      from: { path: "^(domain|ports)/" },
      to: { path: "^adapters/" }
    },
    {
      name: "nothing-imports-tests",
      severity: "error",
      from: { pathNot: "^test/" },
      to: { path: "^test/" }
    },
    {
      name: "server-does-not-import-browser-code",
      comment: "web/ is browser code: the server gets it only as built assets (scripts/build-assets.mjs → hosts/http/pages/generated/)",
      severity: "error",
      from: { path: "^(domain|ports|adapters|hosts)/" },
      to: { path: "^web/" }
    },
    {
      name: "browser-code-stays-in-the-browser",
      comment: "web/ runs in a browser: no server code, no Node built-ins",
      severity: "error",
      from: { path: "^web/" },
      to: { path: "^(domain|ports|adapters|hosts|test|bench|scripts)/" }
    },
    {
      name: "browser-code-has-no-node-builtins",
      severity: "error",
      from: { path: "^web/" },
      to: { dependencyTypes: ["core"] }
    },
    {
      name: "no-circular-in-core",
      comment: "no import cycle through the model, the use cases or the ports",
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
