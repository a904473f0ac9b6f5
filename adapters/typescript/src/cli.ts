// The adapter contract's command line: `client --config PATH` or `server --config PATH`.
// Only the role's own modules are loaded, to keep start-up short.

const USAGE = "usage: node dist/cli.js client|server --config PATH";

function configPath(args: readonly string[]): string | null {
  const index = args.indexOf("--config");
  const path = index === -1 ? undefined : args[index + 1];
  return path === undefined || path.length === 0 ? null : path;
}

async function main(args: readonly string[]): Promise<number> {
  const [role, ...rest] = args;
  const path = configPath(rest);
  if ((role !== "client" && role !== "server") || path === null) {
    process.stderr.write(`${USAGE}\n`);
    return 2;
  }
  if (role === "client") {
    const [{ readClientConfig }, { runClient }] = await Promise.all([
      import("./config.js"),
      import("./client.js"),
    ]);
    await runClient(readClientConfig(path));
    return 0;
  }
  const [{ readServerConfig }, { runServer }] = await Promise.all([
    import("./config.js"),
    import("./server.js"),
  ]);
  await runServer(readServerConfig(path));
  return -1; // keep running: the server exits on /shutdown, EOF (stdio) or a signal
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exit(code);
  },
  (error: unknown) => {
    process.stderr.write(
      `ahp-ts: ${error instanceof Error ? error.message : String(error)}\n`,
    );
    process.exit(1);
  },
);
