// The catalogue suite (docs/CATALOGUE.md) with real processes: the server's
// discovery, its verdicts (schema 400, lineage 409, observed 202) recorded
// before each answer, its control routes, stdio without answers to
// notifications; the real client against the real server on the upstream
// vector over HTTP and stdio, judged here from the file's expectations (a
// test may read them; the adapter never does); the rows it cannot run.

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, readFileSync, rmSync } from "node:fs";
import http from "node:http";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import type { Json, JsonObject } from "../sdk/json.js";
import { catalogueManifest, discoveryResponse } from "../sdk/manifest.js";
import { loadSchemas } from "../sdk/schemas.js";
import { LineReader } from "../sdk/stdioTransport.js";
import { startServer as startInProcessServer } from "../contract/server.js";
import { catalogueServer } from "../suites/catalogue.js";
import { assertContract } from "./contractSchemas.js";
import {
  ADAPTER_DIR,
  CLI,
  control,
  exited,
  processGone,
  REPO_DIR,
  runCli,
  SCHEMA_DIR,
  startServer,
  tempDir,
  waitForFile,
  writeJson,
  type RunningServer,
} from "./processes.js";

const UPSTREAM = join(
  REPO_DIR,
  "scenarios",
  "upstream",
  "catalogue-scenarios.json",
);

const work = tempDir("ahp-ts-catalogue-");
after(() => rmSync(work, { recursive: true, force: true }));

const schemas = loadSchemas(SCHEMA_DIR);

/** The contract schema of `name`, when the checkout has it. */
function contractCheck(name: string, value: unknown, what: string): void {
  if (existsSync(join(REPO_DIR, "schemas", "contract", name.split("#")[0]!)))
    assertContract(name, value, what);
}

const serverConfig = (
  directory: string,
  file: string,
  extra: JsonObject = {},
): JsonObject => ({
  suite: "catalogue",
  transport: "http",
  readinessFile: join(directory, "ready.json"),
  scenarioFile: file,
  auth: { mode: "none", profile: "strict" },
  schemaDir: SCHEMA_DIR,
  ...extra,
});

async function startCatalogueServer(
  directory: string,
  extra: JsonObject = {},
): Promise<RunningServer> {
  const config = serverConfig(directory, UPSTREAM, extra);
  contractCheck("catalogue-server-config.schema.json", config, "server config");
  const path = writeJson(join(directory, "server.json"), config);
  return startServer(
    path,
    config["readinessFile"] as string,
    "lifecycle-server",
  );
}

interface Answer {
  readonly status: number;
  readonly type: string | undefined;
  readonly text: string;
}

/** POSTs JSON (or raw text) to `url`. */
function post(url: string, body: unknown, path = ""): Promise<Answer> {
  const text = typeof body === "string" ? body : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const request = http.request(new URL(path, url), {
      method: "POST",
      agent: false,
      headers: {
        "Content-Type": "application/json",
        "Content-Length": String(Buffer.byteLength(text)),
      },
    });
    request.on("error", reject);
    request.on("response", (response) => {
      const chunks: Buffer[] = [];
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.on("end", () =>
        resolve({
          status: response.statusCode ?? 0,
          type: response.headers["content-type"],
          text: Buffer.concat(chunks).toString("utf8"),
        }),
      );
    });
    request.end(text);
  });
}

function get(url: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { agent: false }, (response) => {
        const chunks: Buffer[] = [];
        response.on("data", (chunk: Buffer) => chunks.push(chunk));
        response.on("end", () =>
          resolve({
            status: response.statusCode ?? 0,
            type: response.headers["content-type"],
            text: Buffer.concat(chunks).toString("utf8"),
          }),
        );
      })
      .on("error", reject);
  });
}

const DISCOVERY = {
  jsonrpc: "2.0",
  id: "discovery",
  method: "hooks/capabilities",
  params: { protocolVersion: "draft" },
};

const event = (
  id: string,
  type: string,
  extra: JsonObject = {},
): JsonObject => ({
  id,
  source: "urn:ahp:test",
  time: "2026-01-01T00:00:00Z",
  type,
  ...extra,
});

const taskEvent = (
  id: string,
  type: string,
  task: JsonObject = {},
  extra: JsonObject = {},
): JsonObject =>
  event(id, type, {
    task: {
      id: "t1",
      operation: "update",
      change: { status: "done" },
      ...task,
    },
    ...extra,
  });

const notification = (body: JsonObject): JsonObject => ({
  jsonrpc: "2.0",
  method: "hooks/observe",
  params: { protocolVersion: "draft", event: body },
});

const turnEnd = (id: string): JsonObject =>
  event(id, "turn.end", {
    turn: { id: "turn1" },
    outcome: "completed",
    continuationCount: 0,
    items: [],
  });

async function receipts(controlEndpoint: string): Promise<JsonObject[]> {
  const answer = await control(controlEndpoint, "GET", "/receipts");
  assert.equal(answer.status, 200);
  contractCheck(
    "catalogue-control.schema.json#/$defs/receipts",
    answer.body,
    "receipts",
  );
  return (answer.body as { entries: JsonObject[] }).entries;
}

const observed = (message: JsonObject): JsonObject => {
  const body = (message["params"] as JsonObject)["event"] as JsonObject;
  return {
    kind: "observed",
    eventId: body["id"] ?? null,
    event: body,
    message,
  };
};
const rejected = (message: JsonObject, errorKind: string): JsonObject => {
  const params = message["params"];
  const body =
    typeof params === "object" && params !== null && !Array.isArray(params)
      ? params["event"]
      : undefined;
  const id =
    typeof body === "object" && body !== null && !Array.isArray(body)
      ? body["id"]
      : undefined;
  return {
    kind: "rejected",
    eventId: typeof id === "string" ? id : null,
    message,
    errorKind,
  };
};

describe("catalogue server over HTTP (a real process)", () => {
  test("readiness without an upload endpoint; discovery answered with the catalogue manifest and recorded", async () => {
    const directory = tempDir("ahp-ts-cat-disc-");
    const server = await startCatalogueServer(directory);
    try {
      const { readiness } = server;
      contractCheck("readiness.schema.json", readiness, "readiness");
      assert.deepEqual(Object.keys(readiness).sort(), [
        "controlEndpoint",
        "endpoint",
        "pid",
      ]);
      const endpoint = readiness.endpoint ?? "";
      assert.deepEqual(
        (await control(readiness.controlEndpoint, "GET", "/health")).body,
        { ready: true },
      );
      const first = await post(endpoint, DISCOVERY);
      assert.equal(first.status, 200);
      assert.match(first.type ?? "", /^application\/json/);
      const response = JSON.parse(first.text) as JsonObject;
      assert.deepEqual(
        response,
        discoveryResponse("discovery", catalogueManifest()),
      );
      assert.equal(schemas.capabilitiesResponse(response), null);
      // any path; the request's own id is echoed
      const numbered = { ...DISCOVERY, id: 7 };
      const second = JSON.parse(
        (await post(endpoint, numbered, "/elsewhere")).text,
      ) as JsonObject;
      assert.equal(second["id"], 7);
      // an invalid request: -32602, still recorded
      const invalid = { ...DISCOVERY, id: "bad", params: {} };
      const third = await post(endpoint, invalid);
      assert.equal(third.status, 200);
      const error = JSON.parse(third.text) as JsonObject;
      assert.equal(error["id"], "bad");
      assert.equal((error["error"] as JsonObject)["code"], -32602);
      // GET /capabilities answers upstream clients the bare capabilities of
      // M's tool.before entry (not the envelope), unrecorded
      const capabilities = await get(
        `${endpoint.replace(/\/intercept$/, "")}/capabilities`,
      );
      assert.equal(capabilities.status, 200);
      assert.match(capabilities.type ?? "", /^application\/json/);
      const toolBefore = (catalogueManifest()["events"] as JsonObject[]).filter(
        (entry) =>
          entry["event"] === "tool.before" &&
          (entry["modes"] as string[]).includes("intercept"),
      );
      assert.equal(toolBefore.length, 1);
      assert.deepEqual(
        JSON.parse(capabilities.text),
        toolBefore[0]?.["capabilities"],
      );
      assert.deepEqual(JSON.parse(capabilities.text), {
        effects: ["deny", "allow", "ask", "modify", "message", "flow"],
        modify: { input: { replace: true, merge: true } },
        flow: { operations: ["stop"] },
      });
      assert.deepEqual(await receipts(readiness.controlEndpoint), [
        { kind: "discovery", request: DISCOVERY, response },
        { kind: "discovery", request: numbered, response: second },
        { kind: "discovery", request: invalid, response: error },
      ]);
    } finally {
      await server.stop();
    }
  });

  test("verdicts: observed 202, schema 400, lineage 409, no body, each recorded before its answer", async () => {
    const directory = tempDir("ahp-ts-cat-verdicts-");
    const server = await startCatalogueServer(directory);
    try {
      const { endpoint, controlEndpoint } = server.readiness;
      const url = endpoint ?? "";
      const valid = notification(turnEnd("ok"));
      const failure = notification(
        event("failed", "hook.failure", {
          parentEventId: "ok",
          failure: {
            backendId: "com.example.hook",
            reason: "timeout",
            policy: "fail-open",
          },
        }),
      );
      assert.equal(schemas.observe(failure), null);
      const invalid = notification(event("bad", "turn.end"));
      const noEvent = { jsonrpc: "2.0", method: "hooks/observe", params: {} };
      const withId = { ...notification(turnEnd("req")), id: "req" };
      const proposal = notification(taskEvent("p", "task.change.before"));
      const wrongTask = notification(
        taskEvent(
          "a",
          "task.change.after",
          { id: "t2" },
          { parentEventId: "p" },
        ),
      );
      const selfParent = notification(
        taskEvent("c", "task.change.before", {}, { parentEventId: "c" }),
      );
      // the same id, after its rejection: nothing was remembered
      const afterRejection = notification(
        taskEvent("c", "task.change.after", { prior: { status: "open" } }),
      );
      const sent: [JsonObject, number, JsonObject][] = [
        [valid, 202, observed(valid)],
        [valid, 202, observed(valid)],
        [failure, 202, observed(failure)],
        [invalid, 400, rejected(invalid, "schema")],
        [noEvent, 400, rejected(noEvent, "schema")],
        [withId, 400, rejected(withId, "schema")],
        [proposal, 202, observed(proposal)],
        [wrongTask, 409, rejected(wrongTask, "lineage")],
        [selfParent, 409, rejected(selfParent, "lineage")],
        [afterRejection, 202, observed(afterRejection)],
      ];
      for (const [message, status] of sent) {
        const answer = await post(url, message);
        assert.equal(answer.status, status, JSON.stringify(message));
        assert.equal(answer.text, "");
      }
      // /wait-observed counts rejected entries too
      for (const [eventId, count] of [
        ["ok", 2],
        ["bad", 1],
        ["a", 1],
        ["c", 2],
      ] as const) {
        assert.deepEqual(
          await control(controlEndpoint, "POST", "/wait-observed", {
            eventId,
            count,
          }),
          { status: 200, body: { ok: true } },
        );
      }
      assert.deepEqual(
        await receipts(controlEndpoint),
        sent.map(([, , entry]) => entry),
      );
    } finally {
      await server.stop();
    }
  });

  test("nothing else is served or recorded; malformed JSON is -32700", async () => {
    const directory = tempDir("ahp-ts-cat-other-");
    const server = await startCatalogueServer(directory);
    try {
      const url = server.readiness.endpoint ?? "";
      const intercept = await post(url, {
        jsonrpc: "2.0",
        id: "x",
        method: "hooks/intercept",
        params: {},
      });
      assert.equal(
        ((JSON.parse(intercept.text) as JsonObject)["error"] as JsonObject)[
          "code"
        ],
        -32601,
      );
      assert.equal(
        (await post(url, { jsonrpc: "2.0", method: "hooks/other" })).status,
        204,
      );
      const malformed = await post(url, '{"jsonrpc": "2.0", "id": ');
      assert.equal(malformed.status, 400);
      assert.equal(
        ((JSON.parse(malformed.text) as JsonObject)["error"] as JsonObject)[
          "code"
        ],
        -32700,
      );
      const duplicate = await post(
        url,
        '{"jsonrpc": "2.0", "method": "hooks/observe", "method": "hooks/observe", "params": {}}',
      );
      assert.equal(duplicate.status, 400);
      assert.deepEqual(await receipts(server.readiness.controlEndpoint), []);
      // the control routes of this suite only
      assert.equal(
        (
          await control(server.readiness.controlEndpoint, "POST", "/release", {
            id: "x",
          })
        ).status,
        404,
      );
    } finally {
      await server.stop();
    }
  });

  test("a wait that is never satisfied gets 408", async () => {
    const directory = tempDir("ahp-ts-cat-wait-");
    const { suite } = catalogueServer({ schemas, waitLimitMs: 200 });
    const readinessFile = join(directory, "ready.json");
    const running = await startInProcessServer(
      {
        configFile: join(directory, "in-process.json"),
        transport: "http",
        readinessFile,
        auth: { mode: "none", profile: "strict" },
        tls: null,
      },
      suite,
    );
    try {
      const answer = await control(
        running.controlEndpoint,
        "POST",
        "/wait-observed",
        { eventId: "never", count: 1 },
      );
      assert.equal(answer.status, 408);
      const bad = await control(
        running.controlEndpoint,
        "POST",
        "/wait-observed",
        { count: 1 },
      );
      assert.equal(bad.status, 400);
    } finally {
      running.stop();
      await running.stopped;
    }
  });

  test("config: uploadAuth is not needed; an unusable scenario file is exit 2 naming it", async () => {
    const directory = tempDir("ahp-ts-cat-config-");
    const config = writeJson(
      join(directory, "server.json"),
      serverConfig(directory, join(directory, "missing.json")),
    );
    const result = await runCli("lifecycle-server", config);
    assert.equal(result.code, 2, result.stderr);
    assert.match(result.stderr, /field scenarioFile:/);
    assert.equal(result.stderr.trim().split("\n").length, 1);
  });
});

describe("catalogue server over stdio (a real process)", () => {
  test("discovery is answered; notifications never are; every verdict recorded", async () => {
    const directory = tempDir("ahp-ts-cat-stdio-");
    const readinessFile = join(directory, "ready.json");
    const config = writeJson(
      join(directory, "server.json"),
      serverConfig(directory, UPSTREAM, { transport: "stdio", readinessFile }),
    );
    const child = spawn(
      process.execPath,
      [CLI, "lifecycle-server", "--config", config],
      { cwd: ADAPTER_DIR, stdio: ["pipe", "pipe", "ignore"] },
    );
    const lines = new LineReader(child.stdout);
    try {
      await waitForFile(readinessFile);
      const readiness = JSON.parse(readFileSync(readinessFile, "utf8")) as {
        endpoint: null;
        controlEndpoint: string;
      };
      assert.equal(readiness.endpoint, null);
      const valid = notification(turnEnd("s1"));
      const invalid = notification(event("s2", "turn.end"));
      const cycle = notification(
        taskEvent("s3", "task.change.before", {}, { parentEventId: "s3" }),
      );
      for (const message of [valid, invalid, cycle])
        child.stdin.write(`${JSON.stringify(message)}\n`);
      for (const eventId of ["s1", "s2", "s3"])
        await control(readiness.controlEndpoint, "POST", "/wait-observed", {
          eventId,
          count: 1,
        });
      child.stdin.write(`${JSON.stringify(DISCOVERY)}\n`);
      const line = await lines.next();
      const response = JSON.parse(line?.toString() ?? "null") as JsonObject;
      assert.deepEqual(
        response,
        discoveryResponse("discovery", catalogueManifest()),
      );
      assert.deepEqual(await receipts(readiness.controlEndpoint), [
        observed(valid),
        rejected(invalid, "schema"),
        rejected(cycle, "lineage"),
        { kind: "discovery", request: DISCOVERY, response },
      ]);
      child.stdin.end();
      assert.equal(await exited(child), 0);
      assert.equal(await lines.next(), null, "nothing but the one answer");
    } finally {
      child.kill("SIGKILL");
    }
  });
});

// ---------------------------------------------------------------- the client

interface Report {
  readonly language: string;
  readonly discovery: Json;
  readonly results: {
    readonly id: string;
    readonly status: string;
    readonly actual?: { sent: JsonObject[]; registrations: JsonObject[] };
    readonly error?: string;
  }[];
  readonly receipts?: { entries: JsonObject[] };
}

interface Expected {
  readonly sent: JsonObject[];
  readonly registrations: { accepted: boolean; rule?: string }[];
  readonly deliveries: { accepted: boolean; errorKind: string | null }[];
}

const upstream = JSON.parse(readFileSync(UPSTREAM, "utf8")) as {
  scenarios: { id: string; expected: Expected }[];
};

async function runClient(
  directory: string,
  config: JsonObject,
): Promise<{ code: number | null; stderr: string; report: Report }> {
  contractCheck("catalogue-client-config.schema.json", config, "client config");
  const path = writeJson(join(directory, "client.json"), config);
  const result = await runCli("lifecycle-client", path, {}, 90_000);
  const report = JSON.parse(
    readFileSync(config["reportFile"] as string, "utf8"),
  ) as Report;
  contractCheck("catalogue-report.schema.json", report, "report");
  return { code: result.code, stderr: result.stderr, report };
}

const clientBase = (directory: string, file: string): JsonObject => ({
  suite: "catalogue",
  scenarioFile: file,
  reportFile: join(directory, "report.json"),
  childPidFile: join(directory, "child.json"),
  auth: { mode: "none", profile: "strict" },
  timeoutMs: 10000,
  schemaDir: SCHEMA_DIR,
});

function stdioClientConfig(directory: string, file: string): JsonObject {
  const server = writeJson(
    join(directory, "stdio-server.json"),
    serverConfig(directory, file, {
      transport: "stdio",
      readinessFile: join(directory, "stdio-ready.json"),
    }),
  );
  return {
    ...clientBase(directory, file),
    transport: "stdio",
    serverCommand: [process.execPath, CLI, "lifecycle-server"],
    serverCwd: ADAPTER_DIR,
    serverConfig: server,
  };
}

/** What the harness checks of a run on the upstream vector, from its expectations. */
function judgeUpstream(report: Report, entries: JsonObject[]): void {
  assert.equal(report.language, "typescript");
  assert.deepEqual(
    report.results.map((row) => row.id),
    upstream.scenarios.map((row) => row.id),
  );
  const expectedEntries: JsonObject[] = [];
  for (const [index, scenario] of upstream.scenarios.entries()) {
    const row = report.results[index]!;
    assert.equal(row.status, "completed", `${row.id}: ${row.error ?? ""}`);
    const actual = row.actual!;
    assert.deepEqual(Object.keys(actual).sort(), ["registrations", "sent"]);
    assert.deepEqual(actual.sent, scenario.expected.sent, row.id);
    assert.deepEqual(
      actual.registrations.map((r) => ({ accepted: r["accepted"] })),
      scenario.expected.registrations.map((r) => ({ accepted: r.accepted })),
      row.id,
    );
    // [ext] every rejection names its rule, every acceptance nothing more
    for (const registration of actual.registrations) {
      if (registration["accepted"] === true)
        assert.deepEqual(registration, { accepted: true });
      else assert.equal(typeof registration["rule"], "string");
    }
    for (const [j, message] of scenario.expected.sent.entries()) {
      const delivery = scenario.expected.deliveries[j]!;
      expectedEntries.push(
        delivery.accepted
          ? observed(message)
          : rejected(message, delivery.errorKind ?? ""),
      );
    }
  }
  const [discovery, ...rest] = entries;
  assert.deepEqual(discovery, {
    kind: "discovery",
    request: DISCOVERY,
    response: report.discovery,
  });
  assert.deepEqual(
    report.discovery,
    discoveryResponse("discovery", catalogueManifest()),
  );
  assert.deepEqual(rest, expectedEntries);
}

describe("catalogue client against the catalogue server (real processes)", () => {
  test("over HTTP (auth none): the upstream vector", async () => {
    const directory = tempDir("ahp-ts-cat-http-");
    const server = await startCatalogueServer(directory);
    try {
      const { code, stderr, report } = await runClient(directory, {
        ...clientBase(directory, UPSTREAM),
        transport: "http",
        endpoint: server.readiness.endpoint ?? "",
        controlEndpoint: server.readiness.controlEndpoint,
      });
      assert.equal(code, 0, stderr);
      const entries = await receipts(server.readiness.controlEndpoint);
      judgeUpstream(report, entries);
      assert.deepEqual(report.receipts?.entries, entries);
    } finally {
      await server.stop();
    }
  });

  test("over stdio: the client starts the server and reports its receipts", async () => {
    const directory = tempDir("ahp-ts-cat-stdio-client-");
    const config = stdioClientConfig(directory, UPSTREAM);
    const { code, stderr, report } = await runClient(directory, config);
    assert.equal(code, 0, stderr);
    assert.ok(report.receipts, "the report carries the receipts");
    judgeUpstream(report, report.receipts.entries);
    const { pid } = JSON.parse(
      readFileSync(config["childPidFile"] as string, "utf8"),
    ) as { pid: number };
    assert.ok(processGone(pid), "the server was reaped");
  });

  test("an unknown op is unsupported and runs nothing; an invalid notify is not sent; malformed steps fail their row", async () => {
    const directory = tempDir("ahp-ts-cat-rows-");
    const valid = notification(turnEnd("r1"));
    const file = writeJson(join(directory, "scenarios.json"), {
      version: 1,
      suite: "catalogue",
      scenarios: [
        {
          id: "unknown-op",
          category: "execution",
          steps: [{ op: "notify", message: valid }, { op: "frobnicate" }],
          requests: {},
          responses: {},
        },
        {
          id: "invalid-notify",
          category: "execution",
          steps: [
            { op: "notify", message: notification(event("r2", "turn.end")) },
            { op: "notify", message: valid },
          ],
          requests: {},
          responses: {},
        },
        {
          id: "raw-without-id",
          category: "execution",
          steps: [{ op: "rawNotify", message: { jsonrpc: "2.0" } }],
          requests: {},
          responses: {},
        },
        {
          id: "register-bad-context",
          category: "registration",
          steps: [
            { op: "register", registration: {}, requirements: {}, context: {} },
          ],
          requests: {},
          responses: {},
        },
        {
          id: "register-defaults",
          category: "registration",
          steps: [
            {
              op: "register",
              registration: {
                protocolVersion: "draft",
                hooks: [
                  {
                    id: "com.example.hook",
                    transport: { type: "http", url: "https://h.example/" },
                    subscriptions: [
                      {
                        events: ["*"],
                        mode: "observe",
                        content: { default: "metadata" },
                      },
                    ],
                  },
                ],
              },
            },
            { op: "register", registration: { protocolVersion: "draft" } },
          ],
          requests: {},
          responses: {},
        },
      ],
    });
    const server = await startCatalogueServer(directory);
    try {
      const { code, stderr, report } = await runClient(directory, {
        ...clientBase(directory, file),
        transport: "http",
        endpoint: server.readiness.endpoint ?? "",
        controlEndpoint: server.readiness.controlEndpoint,
        language: "typescript-copy",
      });
      assert.equal(code, 0, stderr);
      assert.equal(report.language, "typescript-copy");
      const [unknown, invalid, raw, badContext, defaults] = report.results;
      assert.equal(unknown?.status, "unsupported");
      assert.match(unknown?.error ?? "", /frobnicate/);
      assert.equal(invalid?.status, "completed");
      assert.deepEqual(invalid?.actual, { sent: [valid], registrations: [] });
      assert.equal(raw?.status, "failed");
      assert.equal(badContext?.status, "failed");
      assert.match(badContext?.error ?? "", /requirements/);
      assert.deepEqual(defaults?.actual, {
        sent: [],
        registrations: [
          { accepted: true },
          { accepted: false, rule: "schema" },
        ],
      });
      // Only the one valid notification reached the server.
      const entries = await receipts(server.readiness.controlEndpoint);
      assert.deepEqual(
        entries.map((entry) => entry["kind"]),
        ["discovery", "observed"],
      );
    } finally {
      await server.stop();
    }
  });

  test("a server that cannot be reached fails every row; the report is still written", async () => {
    const directory = tempDir("ahp-ts-cat-down-");
    const config = stdioClientConfig(directory, UPSTREAM);
    config["serverCommand"] = [join(directory, "no-such-server")];
    const { code, report } = await runClient(directory, config);
    assert.equal(code, 0);
    assert.equal(report.discovery, null);
    assert.ok(report.results.every((row) => row.status === "failed"));
    assert.equal(report.results.length, upstream.scenarios.length);
  });
});
