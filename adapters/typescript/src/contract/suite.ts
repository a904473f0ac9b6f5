// What a suite module registers: its name (the `suite` a config names; the
// core suite is `core`) and a handler for each command of adapter.json it
// serves. Each module under suites/ exports one `suite` of this shape and
// imports no other suite; src/registry.ts lists the modules by name and
// src/cli.ts routes every command through it.

/** The commands of adapter.json as run (`lifecycleClient` runs `lifecycle-client`). */
export type Command =
  "client" | "server" | "replay" | "lifecycle-client" | "lifecycle-server";

/** A command's work: runs with the config file's path; resolves with the exit code. */
export type Handler = (configPath: string) => Promise<number>;

/** A suite as its module registers it. */
export interface Suite {
  /** The config's `suite` that picks it (the core commands pick `core`). */
  readonly name: string;
  /** By command, what it does; a command it lacks is never routed to it. */
  readonly handlers: Readonly<Partial<Record<Command, Handler>>>;
}
