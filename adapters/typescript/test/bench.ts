// Round-trip benchmark (not a test: no timing assertions in tests). Starts the
// real server process over plain HTTP and posts 200 intercepts on one
// keep-alive connection, then reports milliseconds per request.
// Run: node dist/test/bench.js

import { rmSync } from "node:fs";
import { join } from "node:path";
import { HttpConnection, interceptUrl } from "../sdk/httpTransport.js";
import {
  readBlindRows,
  startServer,
  tempDir,
  UPSTREAM_FILE,
  writeJson,
} from "./processes.js";

const ROUNDS = 200;

async function main(): Promise<void> {
  const work = tempDir("ahp-ts-bench-");
  const readinessFile = join(work, "ready.json");
  const config = writeJson(join(work, "server.json"), {
    transport: "http",
    readinessFile,
    scenarioFile: UPSTREAM_FILE,
    auth: { mode: "none" },
  });
  const server = await startServer(config, readinessFile);
  try {
    const url = interceptUrl(server.readiness.endpoint ?? "");
    const connection = new HttpConnection(
      url,
      { ca: null, cert: null, key: null },
      10_000,
    );
    const body = JSON.stringify(readBlindRows(UPSTREAM_FILE)[0]?.request);
    const headers = { "Content-Type": "application/json" };
    await connection.post(url, body, headers); // warm-up: connection and JIT
    const start = process.hrtime.bigint();
    for (let round = 0; round < ROUNDS; round += 1) {
      const answer = await connection.post(url, body, headers);
      if (answer.status !== 200) throw new Error(`HTTP ${answer.status}`);
    }
    const elapsed = Number(process.hrtime.bigint() - start) / 1e6;
    connection.close();
    process.stdout.write(
      `${ROUNDS} requests over one keep-alive connection: ${(elapsed / ROUNDS).toFixed(3)} ms/request\n`,
    );
  } finally {
    await server.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

void main();
