/**
 * Import boundaries (ARCHITECTURE.md): dependencies point inwards, hosts → adapters → ports → domain.
 * `npm run lint:boundaries` fails CI on any violation.
 */
module.exports = {
  forbidden: [
    {
      name: "domain-imports-only-effect",
      comment: "domain/ may import effect and itself (and ports, which it is written against) — no other package, no node: builtins",
      severity: "error",
      from: { path: "^domain/" },
      to: {
        pathNot: ["^domain/", "^ports/", "^node_modules/effect/"],
        dependencyTypesNot: ["type-only"]
      }
    },
    {
      name: "domain-type-imports-only-effect",
      comment: "even type-only imports from domain/ stay inside effect, ports and domain",
      severity: "error",
      from: { path: "^domain/" },
      to: { pathNot: ["^domain/", "^ports/", "^node_modules/effect/"] }
    },
    {
      name: "ports-import-only-domain-and-effect",
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
