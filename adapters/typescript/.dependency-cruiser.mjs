// dependency-cruiser (run by `npm run lint`): the layering of src/ as the
// README states it. src/sdk/ is the AHP implementation and knows nothing of
// the test contract; src/contract/ (the step engine among it) knows no suite;
// each module under src/suites/ is one suite and imports no other suite;
// src/registry.ts names the suites and src/cli.ts routes through it, and
// nothing below them imports either. No import cycle anywhere. Type-only
// imports and dynamic `import()` count as imports.

/** The entry point and the registry: only they may name a suite's module. */
const ENTRY = "^src/(cli|registry)\\.ts$";

/** @type {import('dependency-cruiser').IConfiguration} */
export default {
  forbidden: [
    {
      name: "no-circular",
      severity: "error",
      comment: "An import cycle: the modules on it cannot be read in order.",
      from: {},
      to: { circular: true },
    },
    {
      name: "no-unresolvable",
      severity: "error",
      comment:
        "An import the cruiser cannot resolve escapes every other rule here.",
      from: {},
      to: { couldNotResolve: true },
    },
    {
      name: "suite-imports-suite",
      severity: "error",
      comment:
        "A suite imports another suite: what they share belongs in src/contract/.",
      from: { path: "^src/suites/([^/.]+)" },
      to: { path: "^src/suites/", pathNot: "^src/suites/$1(\\.ts$|/)" },
    },
    {
      name: "suite-imports-entry",
      severity: "error",
      comment:
        "A suite imports the registry or the entry point: it registers itself by its exports.",
      from: { path: "^src/suites/" },
      to: { path: ENTRY },
    },
    {
      name: "contract-imports-suite",
      severity: "error",
      comment:
        "The contract layer (the step engine among it) imports a suite, the registry or the entry point.",
      from: { path: "^src/contract/" },
      to: { path: ["^src/suites/", ENTRY] },
    },
    {
      name: "sdk-imports-contract",
      severity: "error",
      comment:
        "The SDK layer imports the contract, a suite, the registry or the entry point.",
      from: { path: "^src/sdk/" },
      to: { path: ["^src/contract/", "^src/suites/", ENTRY] },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    exclude: { path: "^(dist|node_modules)/" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
  },
};
