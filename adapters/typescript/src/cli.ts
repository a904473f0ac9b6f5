// The adapter contract's command line: `COMMAND --config PATH`, where each
// command is a suite's role (adapter.json names them). A later suite adds a
// module under suites/ and rows here. Only the chosen suite is loaded, to
// keep start-up short.
//
// Exit codes: 0 the role did its job, 2 the config is unusable (one stderr
// line names the file and the field), 1 any other failure.

/** A role: runs with the config file's path; resolves with the exit code. */
type Role = (configPath: string) => Promise<number>;

const COMMANDS: Readonly<Record<string, () => Promise<Role>>> = {
  client: async () => (await import("./suites/core.js")).roles.client,
  server: async () => (await import("./suites/core.js")).roles.server,
  replay: async () => (await import("./suites/core.js")).roles.replay,
  "lifecycle-client": async () =>
    (await import("./suites/lifecycle.js")).roles.client,
  "lifecycle-server": async () =>
    (await import("./suites/lifecycle.js")).roles.server,
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

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(
      `ahp-ts: ${error instanceof Error ? error.message : String(error)}\n`,
    );
    process.exit(1);
  },
);
