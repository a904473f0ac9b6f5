// The adapter contract's command line: `COMMAND --config PATH`, where each
// command is one of adapter.json's. Every command goes through the suite
// registry (registry.ts): the command and the config's `suite` pick the
// suite, whose module registers the command's handler. Only the chosen
// suite's module is loaded, to keep start-up short.
//
// Exit codes: 0 the role did its job, 2 the config is unusable (one stderr
// line names the file and the field), 1 any other failure.

import { restoreEnvironment } from "./sdk/defaultTrust.js";
import { COMMAND_NAMES, handlerFor, isCommand } from "./registry.js";

const USAGE = `usage: node dist/cli.js ${COMMAND_NAMES.join("|")} --config PATH`;

function configPath(args: readonly string[]): string | null {
  const index = args.indexOf("--config");
  const path = index === -1 ? undefined : args[index + 1];
  return path === undefined || path.length === 0 ? null : path;
}

async function main(args: readonly string[]): Promise<number> {
  const [command, ...rest] = args;
  const path = configPath(rest);
  if (command === undefined || !isCommand(command) || path === null) {
    process.stderr.write(`${USAGE}\n`);
    return 2;
  }
  try {
    const handler = await handlerFor(command, path);
    return await handler(path);
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
