// The adapter contract's command line: `COMMAND --config PATH`, where each
// command is a suite's role (adapter.json names them). A later suite adds a
// module under suites/ and rows here. The lifecycle commands serve every
// step-driven suite: the config's `suite` picks the module (lifecycle when
// absent; a suite none implements goes to the lifecycle module, which
// reports it). Only the chosen suite is loaded, to keep start-up short.
//
// Exit codes: 0 the role did its job, 2 the config is unusable (one stderr
// line names the file and the field), 1 any other failure.

import { restoreEnvironment } from "./sdk/defaultTrust.js";

/** A role: runs with the config file's path; resolves with the exit code. */
type Role = (configPath: string) => Promise<number>;

/** The step-driven suites' modules, by the `suite` of their configs. */
const STEP_SUITES: Readonly<
  Record<string, () => Promise<{ roles: Record<"client" | "server", Role> }>>
> = {
  lifecycle: () => import("./suites/lifecycle.js"),
  catalogue: () => import("./suites/catalogue.js"),
  compaction: () => import("./suites/compaction.js"),
  elicitation: () => import("./suites/elicitation.js"),
};

/** A lifecycle command's role: the module of the config's suite runs it. */
function stepRole(role: "client" | "server"): Role {
  return async (path) => {
    const { stepSuiteOf } = await import("./contract/config.js");
    const suite = stepSuiteOf(path);
    const load =
      (suite === null ? undefined : STEP_SUITES[suite]) ??
      STEP_SUITES["lifecycle"];
    if (load === undefined) throw new Error("no lifecycle suite");
    return (await load()).roles[role](path);
  };
}

const COMMANDS: Readonly<Record<string, () => Promise<Role>>> = {
  client: async () => (await import("./suites/core.js")).roles.client,
  server: async () => (await import("./suites/core.js")).roles.server,
  replay: async () => (await import("./suites/core.js")).roles.replay,
  "lifecycle-client": () => Promise.resolve(stepRole("client")),
  "lifecycle-server": () => Promise.resolve(stepRole("server")),
};

const USAGE = `usage: node dist/cli.js ${Object.keys(COMMANDS).join("|")} --config PATH`;

function configPath(args: readonly string[]): string | null {
  const index = args.indexOf("--config");
  const path = index === -1 ? undefined : args[index + 1];
  return path === undefined || path.length === 0 ? null : path;
}

async function main(args: readonly string[]): Promise<number> {
  const [command, ...rest] = args;
  const load = command === undefined ? undefined : COMMANDS[command];
  const path = configPath(rest);
  if (load === undefined || path === null) {
    process.stderr.write(`${USAGE}\n`);
    return 2;
  }
  const role = await load();
  try {
    return await role(path);
  } catch (error) {
    const { ConfigError } = await import("./contract/config.js");
    if (error instanceof ConfigError) {
      process.stderr.write(`ahp-ts: config ${error.message}\n`);
      return 2;
    }
    throw error;
  }
}

restoreEnvironment();
main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(
      `ahp-ts: ${error instanceof Error ? error.message : String(error)}\n`,
    );
    process.exit(1);
  },
);
