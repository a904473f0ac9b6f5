// The suites of this adapter, by name, and the one way a command finds its
// handler: the command picks the suite (the core commands run `core`; the
// lifecycle commands run the config's `suite`, `lifecycle` when absent), the
// registry loads that suite's module, and the module's `suite` registration
// gives the command's handler. A suite no module registers for the command
// gets the command's fallback (docs/CONTRACT.md: its client reports every row
// `unsupported`, naming it; its server exits 2 naming `suite`). Only the
// chosen suite's module is loaded, to keep start-up short. A later suite adds
// its module under suites/ and one row to SUITES.

import type { Command, Handler, Suite } from "./contract/suite.js";

/** Every suite, by the name a config gives it: its module, loaded on first use. */
const SUITES: Readonly<
  Record<string, () => Promise<{ readonly suite: Suite }>>
> = {
  core: () => import("./suites/core.js"),
  lifecycle: () => import("./suites/lifecycle.js"),
  catalogue: () => import("./suites/catalogue.js"),
  compaction: () => import("./suites/compaction.js"),
  elicitation: () => import("./suites/elicitation.js"),
};

/** The suite's name the config names for the lifecycle commands; null when it names none usable. */
async function stepSuite(configPath: string): Promise<string | null> {
  const { stepSuiteOf } = await import("./contract/config.js");
  return stepSuiteOf(configPath);
}

/** How each command picks its suite, and what it does with a suite no module registers it for. */
const COMMANDS: Readonly<
  Record<
    Command,
    {
      readonly suite: (configPath: string) => Promise<string | null>;
      readonly other: Handler | null;
    }
  >
> = {
  client: { suite: () => Promise.resolve("core"), other: null },
  server: { suite: () => Promise.resolve("core"), other: null },
  replay: { suite: () => Promise.resolve("core"), other: null },
  "lifecycle-client": {
    suite: stepSuite,
    other: async (path) =>
      (await import("./contract/stepClient.js")).reportOtherSuite(path),
  },
  "lifecycle-server": {
    suite: stepSuite,
    other: async (path) =>
      (await import("./contract/stepServer.js")).refuseOtherSuite(
        path,
        await suitesServing("lifecycle-server"),
      ),
  },
};

/** The commands, in the order the usage line names them. */
export const COMMAND_NAMES = Object.keys(COMMANDS) as readonly Command[];

export function isCommand(name: string): name is Command {
  return Object.hasOwn(COMMANDS, name);
}

/** The registration of suite `name`, checked to be the module's own; undefined when no module is named so. */
async function loadSuite(name: string): Promise<Suite | undefined> {
  if (!Object.hasOwn(SUITES, name)) return undefined;
  const load = SUITES[name];
  if (load === undefined) return undefined;
  const { suite } = await load();
  if (suite.name !== name)
    throw new Error(`the module of suite ${name} registers ${suite.name}`);
  return suite;
}

/** The names of the suites whose modules register `command` (every module is loaded). */
export async function suitesServing(command: Command): Promise<string[]> {
  const names: string[] = [];
  for (const name of Object.keys(SUITES))
    if ((await loadSuite(name))?.handlers[command] !== undefined)
      names.push(name);
  return names;
}

/** The handler `command` runs for the config at `configPath`. */
export async function handlerFor(
  command: Command,
  configPath: string,
): Promise<Handler> {
  const { suite, other } = COMMANDS[command];
  const name = await suite(configPath);
  const registered = name === null ? undefined : await loadSuite(name);
  const handler = registered?.handlers[command] ?? other;
  if (handler === null)
    throw new Error(`no suite registers ${command} for ${String(name)}`);
  return handler;
}
