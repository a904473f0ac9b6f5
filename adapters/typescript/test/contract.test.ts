// The adapter contract as processes see it (docs/CONTRACT.md): exit codes
// and the one stderr line of an unusable config, replay, the readiness file,
// receipts by kind, barriers over HTTP and stdio, and a client's rejection of
// a malformed response. Everything the adapter writes is checked against the
// contract's schemas (schemas/contract/).

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { encodeJson } from "../sdk/codec.js";
import type { JsonObject } from "../sdk/json.js";
import { LineReader } from "../sdk/stdioTransport.js";
import * as b from "./builders.js";
import { assertContract } from "./contractSchemas.js";
import {
  ADAPTER_DIR,
  CLI,
  control,
  exited,
  readReceiptLog,
  runCli,
  SCHEMA_DIR,
  startServer,
  tempDir,
  waitForFile,
  writeJson,
  type Command,
  type Readiness,
} from "./processes.js";
import { post, RawConnection } from "./raw.js";
import { barrierScenarios, rowWithId } from "./serverHarness.js";

const work = tempDir("ahp-ts-contract-");
after(() => rmSync(work, { recursive: true, force: true }));

const scenarioFile = barrierScenarios(work);
const plainRequest = rowWithId("plain-1")["request"] as JsonObject;
const heldRequest = rowWithId("held-1")["request"] as JsonObject;
const plainResponse = rowWithId("plain-1")["response"] as JsonObject;

let counter = 0;
const path = (name: string) => join(work, `${++counter}-${name}`);

/** Runs COMMAND with `config` (an object, or raw text); resolves with the exit code and stderr. */
async function run(
  command: Command,
  config: JsonObject | string,
  env: Readonly<Record<string, string>> = {},
) {
  const file = path("config.json");
  writeFileSync(
    file,
    typeof config === "string" ? config : JSON.stringify(config),
  );
  return { file, ...(await runCli(command, file, env)) };
}

/** Asserts exit 2 and exactly one stderr line naming `file` and `field`. */
async function assertUnusable(
  command: Command,
  config: JsonObject | string,
  field: string | null,
  file?: string,
): Promise<void> {
  const result = await run(command, config);
  assert.equal(result.code, 2, result.stderr);
  const lines = result.stderr.split("\n").filter((line) => line.length > 0);
  assert.equal(lines.length, 1, result.stderr);
  assert.ok(lines[0]?.includes(file ?? result.file), lines[0]);
  if (field !== null)
    assert.ok(lines[0]?.includes(`field ${field}:`), lines[0]);
  assert.equal(result.stdout, "");
}

const serverConfig = (extra: JsonObject = {}): JsonObject => ({
  transport: "http",
  readinessFile: path("ready.json"),
  scenarioFile,
  auth: { mode: "none", profile: "strict" },
  ...extra,
});
const replayConfig = (extra: JsonObject = {}): JsonObject => ({
  scenarioFile,
  reportFile: path("report.json"),
  ...extra,
});
const clientConfig = (extra: JsonObject = {}): JsonObject => ({
  transport: "http",
  endpoint: "http://127.0.0.1:9/intercept",
  scenarioFile,
  reportFile: path("report.json"),
  auth: { mode: "none", profile: "strict" },
  timeoutMs: 1000,
  ...extra,
});

describe("exit codes: 2 and one stderr line naming the file and the field for an unusable config", () => {
  test("an unreadable or malformed config", async () => {
    await Promise.all(
      (["server", "client", "replay"] as const).flatMap((command) => [
        assertUnusable(command, "{", null),
        assertUnusable(command, "[]", null),
        assertUnusable(
          command,
          '{"scenarioFile":"/a","scenarioFile":"/b"}',
          null,
        ),
      ]),
    );
    const missing = join(work, "no-such-config.json");
    const result = await runCli("server", missing);
    assert.equal(result.code, 2);
    assert.match(result.stderr, /no-such-config\.json/);
  });

  test("a missing or wrong field", async () => {
    await Promise.all([
      assertUnusable(
        "server",
        serverConfig({ readinessFile: null }),
        "readinessFile",
      ),
      assertUnusable(
        "server",
        serverConfig({ transport: "carrier-pigeon" }),
        "transport",
      ),
      assertUnusable(
        "server",
        serverConfig({ auth: { mode: "magic" } }),
        "auth.mode",
      ),
      assertUnusable(
        "server",
        serverConfig({ auth: { mode: "bearer", profile: "compat" } }),
        "auth.token",
      ),
      assertUnusable(
        "server",
        serverConfig({
          auth: { mode: "bearer", profile: "strict", token: "t" },
        }),
        "tls",
      ),
      assertUnusable(
        "server",
        serverConfig({
          tls: { certFile: "/no/such.pem", keyFile: "/no/such.pem" },
        }),
        "tls.certFile",
      ),
      assertUnusable(
        "server",
        serverConfig({ receiptLog: "/no/such/dir/receipts.jsonl" }),
        "receiptLog",
      ),
      assertUnusable(
        "server",
        serverConfig({ schemaDir: "/no/such/schemas" }),
        "schemaDir",
      ),
      assertUnusable("client", clientConfig({ endpoint: null }), "endpoint"),
      assertUnusable("client", clientConfig({ timeoutMs: 0 }), "timeoutMs"),
      assertUnusable("client", clientConfig({ language: " " }), "language"),
      assertUnusable(
        "client",
        clientConfig({ auth: { mode: "bearer", profile: "compat" } }),
        "auth.token",
      ),
      assertUnusable(
        "client",
        clientConfig({
          auth: { mode: "bearer", profile: "strict", token: "t" },
        }),
        "endpoint",
      ),
      assertUnusable("replay", replayConfig({ reportFile: 7 }), "reportFile"),
    ]);
  });

  test("a scenario file that cannot be used names the config's scenarioFile, or the row's field", async () => {
    const duplicate = path("duplicate.json");
    writeFileSync(duplicate, '{"version":1,"scenarios":[],"scenarios":[]}');
    const noId = writeJson(path("no-id.json"), {
      version: 1,
      scenarios: [{ request: {}, response: {} }],
    });
    await Promise.all(
      (["server", "replay"] as const).flatMap((command) => {
        const config = command === "server" ? serverConfig : replayConfig;
        return [
          assertUnusable(
            command,
            config({ scenarioFile: duplicate }),
            "scenarioFile",
          ),
          assertUnusable(
            command,
            config({ scenarioFile: "/no/such.json" }),
            "scenarioFile",
          ),
          assertUnusable(
            command,
            config({ scenarioFile: noId }),
            "scenarios[0].id",
            noId,
          ),
        ];
      }),
    );
  });

  test("usage errors exit 2 too", async () => {
    const result = await runCli("observe" as Command, path("x.json"));
    assert.equal(result.code, 2);
  });

  test("a TLS file that is not PEM names its field", async () => {
    const garbage = path("garbage.pem");
    writeFileSync(garbage, "not a certificate\n");
    await assertUnusable(
      "server",
      serverConfig({ tls: { certFile: garbage, keyFile: garbage } }),
      "tls.certFile",
    );
  });

  test("any other failure exits 1 (the report cannot be written at the end)", async () => {
    const result = await run("replay", replayConfig({ reportFile: work }));
    assert.equal(result.code, 1, result.stderr);
    assert.equal(
      result.stderr.split("\n").filter(Boolean).length,
      1,
      result.stderr,
    );
  });

  test("schemaDir: the config's, else $AHP_SCHEMA_DIR, else the repository's", async () => {
    const elsewhere = { AHP_SCHEMA_DIR: "/no/such/schemas" };
    const [configWins, environmentUsed] = await Promise.all([
      run("replay", replayConfig({ schemaDir: SCHEMA_DIR }), elsewhere),
      run("replay", replayConfig(), elsewhere),
    ]);
    assert.equal(configWins.code, 0, configWins.stderr);
    assert.equal(environmentUsed.code, 2);
    assert.match(
      environmentUsed.stderr,
      /field schemaDir: .*\/no\/such\/schemas/,
    );
  });

  test("adapter.json is valid and names every command, through the launcher", () => {
    const manifest = JSON.parse(
      readFileSync(join(ADAPTER_DIR, "adapter.json"), "utf8"),
    ) as Record<string, unknown>;
    assertContract("adapter.schema.json", manifest);
    const commands = {
      client: "client",
      server: "server",
      replay: "replay",
      lifecycleClient: "lifecycle-client",
      lifecycleServer: "lifecycle-server",
    };
    for (const [key, command] of Object.entries(commands))
      assert.deepEqual(manifest[key], ["sh", "ahp-ts.sh", command]);
  });

  test("unknown config keys are ignored", async () => {
    const result = await run(
      "replay",
      replayConfig({ "x-note": "ignored", futureKey: { nested: [1] } }),
    );
    assert.equal(result.code, 0, result.stderr);
  });
});

describe("replay", () => {
  const caps = b.capabilities(["deny", "allow", "message"]);
  const rows: JsonObject[] = [
    {
      id: "deny",
      request: b.request("deny", b.toolBefore({ q: 1 }), caps),
      response: b.success("deny", [{ type: "deny", reason: "no" }]),
    },
    {
      id: "null-response",
      request: b.request("null-response", b.toolBefore({ q: 1 }), caps),
      response: null,
    },
    {
      id: "invalid-request",
      request: {
        jsonrpc: "2.0",
        id: "invalid-request",
        method: "hooks/intercept",
        params: {},
      },
      response: b.success("invalid-request", []),
    },
  ];
  const file = writeJson(path("replay-scenarios.json"), {
    version: 1,
    scenarios: rows,
  });

  async function replay(extra: JsonObject = {}) {
    const reportFile = path("replay-report.json");
    const result = await run("replay", {
      scenarioFile: file,
      reportFile,
      ...extra,
    });
    assert.equal(result.code, 0, result.stderr);
    const report = JSON.parse(readFileSync(reportFile, "utf8")) as {
      language: string;
      results: JsonObject[];
    };
    assertContract("client-report.schema.json", report);
    return report;
  }

  test("each response is applied to its request in process; blind statuses", async () => {
    const report = await replay();
    assert.equal(report.language, "typescript");
    const [deny, nullResponse, invalid] = report.results;
    assert.equal(deny?.["status"], "completed");
    assert.equal((deny?.["actual"] as JsonObject)["decision"], "deny");
    assert.deepEqual(nullResponse, {
      id: "null-response",
      status: "completed",
      actual: { rejected: true },
    });
    assert.equal(invalid?.["status"], "failed");
    assert.equal(typeof invalid?.["error"], "string");
  });

  test("the config's language is reported", async () => {
    assert.equal(
      (await replay({ language: "typescript-copy" })).language,
      "typescript-copy",
    );
  });
});

/** Spawns a server over HTTP with a receipt log; resolves once it is ready. */
async function httpServer() {
  const readinessFile = path("ready.json");
  const receiptLog = path("receipts.jsonl");
  const config = writeJson(
    path("server.json"),
    serverConfig({ readinessFile, receiptLog }),
  );
  const server = await startServer(config, readinessFile);
  assertContract(
    "readiness.schema.json",
    JSON.parse(readFileSync(readinessFile, "utf8")),
  );
  return {
    server,
    receiptLog,
    port: Number(new URL(server.readiness.endpoint ?? "").port),
  };
}

describe("receipts and barriers over HTTP", () => {
  test("a held reply waits for its release; other connections are served meanwhile; releases are sticky until reset", async () => {
    const { server, receiptLog, port } = await httpServer();
    const base = server.readiness.controlEndpoint;
    try {
      const first = new RawConnection(port);
      await first.write(post(encodeJson(heldRequest)));
      const firstAnswer = first.response();
      let answered = false;
      void firstAnswer.then(() => (answered = true));
      // Another connection is answered while the first reply is held.
      const other = new RawConnection(port);
      await other.write(post(encodeJson(plainRequest)));
      assert.equal((await other.response())?.status, 200);
      // The held request is receipted before its reply goes out.
      const receipts = (await control(base, "GET", "/receipts"))
        .body as JsonObject;
      assertContract("control.schema.json#/$defs/receipts", receipts);
      assert.deepEqual(receipts["requests"], [heldRequest, plainRequest]);
      assert.equal(answered, false);
      const released = (
        await control(base, "POST", "/release", { barrier: "b1" })
      ).body;
      assertContract("control.schema.json#/$defs/released", released);
      const reply = await firstAnswer;
      assert.equal(reply?.status, 200);
      assert.deepEqual(
        JSON.parse(reply?.body ?? ""),
        rowWithId("held-1")["response"],
      );
      // Sticky: the next request naming b1 is answered at once.
      await first.write(post(encodeJson(heldRequest)));
      assert.equal((await first.response())?.status, 200);
      // Until /reset: then b1 holds again, and /shutdown lets it go.
      assert.equal((await control(base, "POST", "/reset")).status, 200);
      await first.write(post(encodeJson(heldRequest)));
      const afterReset = first.response();
      const gone = exited(server.child);
      const shutdown = (await control(base, "POST", "/shutdown")).body;
      assertContract("control.schema.json#/$defs/shutdown", shutdown);
      assert.equal(
        (await afterReset)?.status,
        200,
        "shutdown releases held replies",
      );
      assert.equal(await gone, 0);
      for (const line of readReceiptLog(receiptLog))
        assertContract("receipt-line.schema.json", line);
      first.close();
      other.close();
    } finally {
      await server.stop();
    }
  });

  test("receipts by kind: request (also -32602), discovery, notification (no reply: 204)", async () => {
    const { server, receiptLog, port } = await httpServer();
    try {
      const connection = new RawConnection(port);
      const discovery = {
        jsonrpc: "2.0",
        id: 7,
        method: "hooks/capabilities",
        params: { protocolVersion: "draft" },
      };
      const notification = {
        jsonrpc: "2.0",
        method: "hooks/intercept",
        params: {},
      };
      const unknown = { ...plainRequest, id: "nope" };
      for (const message of [discovery, notification, unknown, plainRequest])
        await connection.write(post(encodeJson(message)));
      const statuses = [];
      for (let index = 0; index < 4; index += 1) {
        const response = await connection.response();
        statuses.push([
          response?.status,
          response?.body === ""
            ? null
            : (JSON.parse(response?.body ?? "") as JsonObject)["id"],
        ]);
      }
      assert.deepEqual(statuses, [
        [200, 7],
        [204, null],
        [200, "nope"],
        [200, "plain-1"],
      ]);
      connection.close();
      const log = readReceiptLog(receiptLog);
      for (const line of log) assertContract("receipt-line.schema.json", line);
      assert.deepEqual(log, [
        { kind: "discovery", message: discovery },
        { kind: "notification", message: notification },
        { kind: "request", message: unknown },
        { kind: "request", message: plainRequest },
      ]);
      assert.deepEqual(
        (await control(server.readiness.controlEndpoint, "GET", "/receipts"))
          .body,
        {
          requests: [unknown, plainRequest],
          discovery: [discovery],
          notifications: [notification],
        },
      );
    } finally {
      await server.stop();
    }
  });
});

describe("bad input against the server process", () => {
  test("413 over 8 MiB, -32700 for JSON 10,000 levels deep; /receipts still answers", async () => {
    const { server, port } = await httpServer();
    try {
      const connection = new RawConnection(port);
      await connection.write(
        `POST /intercept HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100000000\r\n\r\n`,
      );
      assert.equal((await connection.response())?.status, 413);
      connection.close();
      const deep = new RawConnection(port);
      await deep.write(post("[".repeat(10_000) + "]".repeat(10_000)));
      const reply = await deep.response();
      assert.equal(reply?.status, 400);
      assert.deepEqual(
        (JSON.parse(reply?.body ?? "") as JsonObject)["id"],
        null,
      );
      deep.close();
      const receipts = await control(
        server.readiness.controlEndpoint,
        "GET",
        "/receipts",
      );
      assert.deepEqual(receipts, {
        status: 200,
        body: { requests: [], discovery: [], notifications: [] },
      });
    } finally {
      await server.stop();
    }
  });
});

describe("stdio server", () => {
  test("a held line does not hold the next; notifications get no line; malformed lines get -32700; EOF exits 0", async () => {
    const readinessFile = path("ready.json");
    const receiptLog = path("receipts.jsonl");
    const config = writeJson(
      path("stdio.json"),
      serverConfig({ transport: "stdio", readinessFile, receiptLog }),
    );
    const child = spawn(process.execPath, [CLI, "server", "--config", config], {
      cwd: ADAPTER_DIR,
      stdio: ["pipe", "pipe", "inherit"],
    });
    const lines = new LineReader(child.stdout);
    const next = async () =>
      JSON.parse(String(await lines.next())) as JsonObject;
    await waitForFile(readinessFile);
    const readiness = JSON.parse(
      readFileSync(readinessFile, "utf8"),
    ) as Readiness;
    assertContract("readiness.schema.json", readiness);
    assert.equal(readiness.endpoint, null);
    child.stdin.write(`${encodeJson(heldRequest)}\n`);
    child.stdin.write(
      `${encodeJson({ jsonrpc: "2.0", method: "hooks/observe", params: {} })}\n`,
    );
    child.stdin.write('{"jsonrpc":"2.0","id":1,"id":2}\n');
    child.stdin.write(`${encodeJson(plainRequest)}\n`);
    const malformed = await next();
    assert.equal(malformed["id"], null);
    assert.equal((malformed["error"] as JsonObject)["code"], -32700);
    assert.deepEqual(await next(), plainResponse);
    await control(readiness.controlEndpoint, "POST", "/release", {
      barrier: "b1",
    });
    assert.deepEqual((await next())["id"], "held-1");
    // A line over 8 MiB is malformed too, and is not kept.
    child.stdin.write(`${" ".repeat(9 * 1024 * 1024)}\n`);
    assert.equal(((await next())["error"] as JsonObject)["code"], -32700);
    child.stdin.end();
    assert.equal(await exited(child), 0);
    assert.deepEqual(
      readReceiptLog(receiptLog).map((line) => line.kind),
      ["request", "notification", "request"],
    );
  });
});

describe("client", () => {
  /** A fake AHP server that answers every POST with `body` (status 200). */
  async function withFake(
    body: Buffer,
    use: (endpoint: string) => Promise<void>,
  ) {
    const server = http.createServer((request, response) => {
      request.resume();
      request.on("end", () => {
        response.writeHead(200, {
          "Content-Type": "application/json",
          "Content-Length": body.length,
        });
        response.end(body);
      });
    });
    await new Promise<void>((resolve) =>
      server.listen(0, "127.0.0.1", resolve),
    );
    try {
      await use(
        `http://127.0.0.1:${(server.address() as AddressInfo).port}/intercept`,
      );
    } finally {
      server.closeAllConnections();
      server.close();
    }
  }

  const one = writeJson(path("one.json"), {
    version: 1,
    scenarios: [rowWithId("plain-1")],
  });
  const good = encodeJson(plainResponse);
  for (const [name, body] of [
    [
      "a duplicate key",
      Buffer.from(
        good.replace('"jsonrpc":"2.0"', '"jsonrpc":"2.0","jsonrpc":"2.0"'),
      ),
    ],
    [
      "invalid UTF-8",
      Buffer.concat([
        Buffer.from(good.slice(0, -1)),
        Buffer.from(',"x":"\xff"}', "latin1"),
      ]),
    ],
    ["nesting deeper than 512", Buffer.from("[".repeat(513) + "]".repeat(513))],
    ["an empty body", Buffer.alloc(0)],
  ] as const) {
    test(`a malformed response (${name}) is rejected as a whole`, async () => {
      await withFake(body, async (endpoint) => {
        const reportFile = path("report.json");
        const result = await run(
          "client",
          clientConfig({
            endpoint,
            scenarioFile: one,
            reportFile,
            language: "ts-copy",
          }),
        );
        assert.equal(result.code, 0, result.stderr);
        const report = JSON.parse(
          readFileSync(reportFile, "utf8"),
        ) as JsonObject;
        assertContract("client-report.schema.json", report);
        assert.deepEqual(report, {
          language: "ts-copy",
          results: [
            { id: "plain-1", status: "completed", actual: { rejected: true } },
          ],
        });
      });
    });
  }

  test("the same response, well-formed, is applied", async () => {
    await withFake(Buffer.from(good), async (endpoint) => {
      const reportFile = path("report.json");
      assert.equal(
        (
          await run(
            "client",
            clientConfig({ endpoint, scenarioFile: one, reportFile }),
          )
        ).code,
        0,
      );
      const report = JSON.parse(readFileSync(reportFile, "utf8")) as {
        results: JsonObject[];
      };
      assert.equal(report.results[0]?.["status"], "completed");
      assert.notDeepEqual(report.results[0]?.["actual"], { rejected: true });
    });
  });
});
