// docs/LIFECYCLE.md, "Operational failures, several backends, silent
// observers [ext]": the server's scripted faults (`server-error`,
// `malformed`, `timeout`) and silent observers over HTTP and stdio, and the
// client's chains meeting every operational failure (each fault, another
// id, a JSON-RPC error, a deadline of its own or the config's, an
// unreachable backend over both transports) and silent observers, with the
// receipts each causes. Inputs are built by hand; outcomes are literals.

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readFileSync, rmSync } from "node:fs";
import http from "node:http";
import net from "node:net";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import type { Json, JsonObject } from "../sdk/json.js";
import { LineReader } from "../sdk/stdioTransport.js";
import { assertContract } from "./contractSchemas.js";
import {
  httpClientConfig,
  label,
  note,
  ok,
  req,
  runLifecycleClient,
  scenarioFile,
  serverConfig,
  setInput,
  startLifecycleServer,
  stdioClientConfig,
  type LifecycleReadiness,
  type LifecycleReport,
} from "./lifecycleHarness.js";
import {
  ADAPTER_DIR,
  CLI,
  control,
  exited,
  runCli,
  tempDir,
  waitForFile,
  writeJson,
  type RunningServer,
} from "./processes.js";

const work = tempDir("ahp-ts-lifecycle-faults-");
after(() => rmSync(work, { recursive: true, force: true }));

const MALFORMED = '{"jsonrpc": "2.0", "id": ';
const serverError = (id: string): JsonObject => ({
  jsonrpc: "2.0",
  id,
  error: { code: -32603, message: "scripted server error" },
});
const fault = (kind: string): JsonObject => ({ fault: kind });

/** The observation of `eventId` (a tool.before event like req()'s). */
function observation(eventId: string, input: Json = { value: "original" }) {
  const event = structuredClone(
    (req(eventId)["params"] as JsonObject)["event"],
  ) as JsonObject;
  (event["tool"] as JsonObject)["input"] = input;
  return {
    jsonrpc: "2.0",
    method: "hooks/observe",
    params: { protocolVersion: "draft", event },
  };
}

interface Answer {
  readonly status: number;
  readonly contentType: string | undefined;
  readonly text: string;
}

/**
 * POSTs JSON on a connection of its own; resolves with the answer, or with
 * null when none came within `withinMs` (the request is then destroyed) or
 * the connection closed without one.
 */
function post(
  url: string,
  body: unknown,
  withinMs = 10_000,
): Promise<Answer | null> {
  const text = JSON.stringify(body);
  return new Promise((resolve) => {
    const request = http.request(url, {
      method: "POST",
      agent: false,
      headers: {
        "Content-Type": "application/json",
        "Content-Length": String(Buffer.byteLength(text)),
      },
    });
    const timer = setTimeout(() => {
      request.destroy();
      resolve(null);
    }, withinMs);
    request.on("error", () => {
      clearTimeout(timer);
      resolve(null);
    });
    request.on("response", (response) => {
      const chunks: Buffer[] = [];
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.on("end", () => {
        clearTimeout(timer);
        resolve({
          status: response.statusCode ?? 0,
          contentType: response.headers["content-type"],
          text: Buffer.concat(chunks).toString("utf8"),
        });
      });
    });
    request.end(text);
  });
}

async function entriesOf(
  readiness: Pick<LifecycleReadiness, "controlEndpoint">,
): Promise<JsonObject[]> {
  const answer = await control(readiness.controlEndpoint, "GET", "/receipts");
  assertContract(
    "lifecycle-control.schema.json#/$defs/receipts",
    answer.body,
    "GET /receipts",
  );
  return (answer.body as { entries: JsonObject[] }).entries;
}

/** `kind:id` of the entries that concern `id` (request id or event id). */
function about(entries: JsonObject[], id: string): string[] {
  return entries
    .filter((entry) => entry["id"] === id || entry["eventId"] === id)
    .map((entry) => label(entry).split(":")[0] ?? "");
}

// ---------------------------------------------------------------- server

const SERVER_ROWS: JsonObject[] = [
  {
    id: "faults",
    requests: { a: req("faults:a") },
    responses: { a: ok("faults:a", [note("never used")]) },
    responseSequences: {
      a: [
        fault("server-error"),
        fault("malformed"),
        fault("timeout"),
        ok("faults:a", [note("after the faults")]),
      ],
    },
    observeFaults: { a: ["silent", null, "silent"] },
  },
  {
    id: "timeout-only",
    requests: { a: req("timeout-only:a"), b: req("timeout-only:b") },
    responses: { b: ok("timeout-only:b", [note("b")]) },
    responseSequences: { a: [fault("timeout")] },
    observeFaults: { a: ["silent"] },
  },
];
const serverFile = scenarioFile(join(work, "server-faults.json"), SERVER_ROWS);

describe("lifecycle server faults over HTTP (a real process)", () => {
  let server: RunningServer;
  let ready: LifecycleReadiness;
  before(async () => {
    ({ server, readiness: ready } = await startLifecycleServer(
      tempDir("ahp-ts-lc-faults-http-"),
      serverFile,
    ));
  });
  after(() => server.stop());

  test("server-error and malformed are held until released, recorded replied, then written as scripted", async () => {
    const endpoint = ready.endpoint ?? "";
    const pending = post(endpoint, req("faults:a"));
    await control(ready.controlEndpoint, "POST", "/wait", {
      id: "faults:a",
      count: 1,
    });
    assert.deepEqual(about(await entriesOf(ready), "faults:a"), ["received"]);
    await control(ready.controlEndpoint, "POST", "/release", {
      id: "faults:a",
    });
    const first = await pending;
    assert.equal(first?.status, 500);
    assert.equal(first?.contentType, "application/json");
    assert.deepEqual(JSON.parse(first?.text ?? ""), serverError("faults:a"));
    const second = await post(endpoint, req("faults:a"));
    assert.equal(second?.status, 200);
    assert.equal(second?.contentType, "application/json");
    assert.equal(second?.text, MALFORMED);
    assert.equal(Buffer.byteLength(second?.text ?? ""), 25);
    // timeout: no answer at all, no replied; the next receipt gets the next entry.
    assert.equal(await post(endpoint, req("faults:a"), 300), null);
    const fourth = await post(endpoint, req("faults:a"));
    assert.deepEqual(
      JSON.parse(fourth?.text ?? ""),
      ok("faults:a", [note("after the faults")]),
    );
    assert.deepEqual(about(await entriesOf(ready), "faults:a"), [
      "received",
      "replied",
      "received",
      "replied",
      "received",
      "received",
      "replied",
    ]);
  });

  test("observeFaults: the n-th observation of the event is silent or usual; past the end usual", async () => {
    const before = (await entriesOf(ready)).length;
    const url = new URL("/observe", ready.endpoint ?? "").href;
    const answers = [];
    for (let n = 0; n < 4; n += 1)
      answers.push(await post(url, observation("faults:a"), 300));
    assert.equal(answers[0], null, "1st: silent");
    assert.equal(answers[1]?.status, 200, "2nd: the hostile answer");
    assert.equal(
      (JSON.parse(answers[1]?.text ?? "{}") as JsonObject)["id"],
      "unsolicited-observer",
    );
    assert.equal(answers[2], null, "3rd: silent");
    assert.equal(answers[3]?.status, 200, "past the end: the usual answer");
    const entries = (await entriesOf(ready)).slice(before);
    assert.deepEqual(
      entries.map((e) => label(e)),
      Array<string>(4).fill("observed:faults:a"),
      "a silent observer's notification is recorded all the same",
    );
  });
});

describe("lifecycle server: a scripted timeout at /shutdown", () => {
  test("a timeout and a silent observer never answer, not even at /shutdown, and the process exits promptly", async () => {
    const { server, readiness } = await startLifecycleServer(
      tempDir("ahp-ts-lc-faults-shutdown-"),
      serverFile,
    );
    try {
      const endpoint = readiness.endpoint ?? "";
      await control(readiness.controlEndpoint, "POST", "/release", {
        id: "timeout-only:a",
      });
      const timedOut = post(endpoint, req("timeout-only:a"), 20_000);
      const held = post(endpoint, req("timeout-only:b"), 20_000);
      const silent = post(
        new URL("/observe", endpoint).href,
        observation("timeout-only:a"),
        20_000,
      );
      await control(readiness.controlEndpoint, "POST", "/wait", {
        id: "timeout-only:b",
        count: 1,
      });
      await control(readiness.controlEndpoint, "POST", "/wait-observed", {
        eventId: "timeout-only:a",
        count: 1,
      });
      const entries = await entriesOf(readiness);
      assert.deepEqual(about(entries, "timeout-only:a"), [
        "received",
        "observed",
      ]);
      const started = Date.now();
      const gone = exited(server.child);
      assert.deepEqual(
        await control(readiness.controlEndpoint, "POST", "/shutdown"),
        { status: 200, body: { ok: true } },
      );
      assert.equal((await held)?.status, 200, "a held reply goes at shutdown");
      assert.equal(await timedOut, null, "closed without a byte written");
      assert.equal(await silent, null, "a silent observer: closed, unanswered");
      assert.equal(await gone, 0);
      assert.ok(Date.now() - started < 5000, "the server exits promptly");
    } finally {
      await server.stop();
    }
  });
});

describe("lifecycle server faults over stdio (a real process)", () => {
  test("server-error and malformed as lines, timeout and silence as no line; the process exits at EOF", async () => {
    const directory = tempDir("ahp-ts-lc-faults-stdio-");
    const readinessFile = join(directory, "ready.json");
    const config = writeJson(
      join(directory, "server.json"),
      serverConfig(directory, serverFile, {
        transport: "stdio",
        readinessFile,
      }),
    );
    const child = spawn(
      process.execPath,
      [CLI, "lifecycle-server", "--config", config],
      { cwd: ADAPTER_DIR, stdio: ["pipe", "pipe", "inherit"] },
    );
    const lines = new LineReader(child.stdout);
    const next = async () => (await lines.next())?.toString("utf8") ?? null;
    const write = (message: unknown) =>
      child.stdin.write(`${JSON.stringify(message)}\n`);
    try {
      await waitForFile(readinessFile);
      const readiness = JSON.parse(
        readFileSync(readinessFile, "utf8"),
      ) as LifecycleReadiness;
      const wait = (id: string, count: number) =>
        control(readiness.controlEndpoint, "POST", "/wait", { id, count });
      write(req("faults:a"));
      await wait("faults:a", 1);
      await control(readiness.controlEndpoint, "POST", "/release", {
        id: "faults:a",
      });
      assert.deepEqual(
        JSON.parse((await next()) ?? ""),
        serverError("faults:a"),
      );
      write(req("faults:a"));
      assert.equal(await next(), MALFORMED);
      // timeout, then a silent observation, then the usual one: the next
      // line is the hostile answer to the third message, nothing before it.
      write(req("faults:a"));
      await wait("faults:a", 3);
      write(observation("faults:a"));
      write(observation("faults:a"));
      assert.equal(
        (JSON.parse((await next()) ?? "") as JsonObject)["id"],
        "unsolicited-observer",
      );
      write(req("faults:a"));
      assert.deepEqual(
        JSON.parse((await next()) ?? ""),
        ok("faults:a", [note("after the faults")]),
      );
      assert.deepEqual(about(await entriesOf(readiness), "faults:a"), [
        "received",
        "replied",
        "received",
        "replied",
        "received",
        "observed",
        "observed",
        "received",
        "replied",
      ]);
      child.stdin.end();
      assert.equal(await exited(child), 0);
      assert.equal(await next(), null, "nothing more was ever written");
    } finally {
      child.kill("SIGKILL");
    }
  });
});

// ---------------------------------------------------------------- client

type Sub = {
  name: string;
  mode?: "intercept" | "observe";
  policy?: "fail-open" | "fail-closed";
  content?: "metadata" | "omit";
  backend?: string;
  timeoutMs?: number;
};

const ITEMS = [
  {
    id: "fault-item",
    kind: "text",
    mediaType: "text/plain",
    selection: "metadata",
  },
];
const original = { value: "original" };
const settled = { value: "settled" };
const deny = { type: "deny", reason: "policy" };

/** A chain over `id` whose n-th call is answered by `sequence(id)[n]`. */
function chain(
  id: string,
  subscriptions: Sub[],
  sequence: (id: string) => Json[],
  extra: JsonObject = {},
): JsonObject {
  return {
    id,
    chain: {
      subscriptions: subscriptions.map((sub) => ({
        id: `${id}:${sub.name}`,
        backend: sub.backend ?? "shared",
        mode: sub.mode ?? "intercept",
        failurePolicy: sub.policy ?? "fail-open",
        content: sub.content ?? "metadata",
        ...(sub.timeoutMs === undefined ? {} : { timeoutMs: sub.timeoutMs }),
      })),
      interrupt: false,
      holdObservers: false,
      ...((extra["chain"] as JsonObject | undefined) ?? {}),
    },
    requests: { a: req(id, original, { items: ITEMS }) },
    responses: { a: ok(id, [setInput("settled"), deny]) },
    responseSequences: { a: sequence(id) },
    ...(extra["observeFaults"] === undefined
      ? {}
      : { observeFaults: extra["observeFaults"] }),
  };
}

/** The first call fails as `first` scripts; the second denies with a settled input. */
const thenDeny =
  (first: (id: string) => Json) =>
  (id: string): Json[] => [first(id), ok(id, [setInput("settled"), deny])];

/** a (its deadline `timeoutMs`), b (omit), c, and an observer. */
const subs = (a: Partial<Sub> = {}): Sub[] => [
  { name: "a", ...a },
  { name: "b", content: "omit" },
  { name: "c" },
  { name: "audit", mode: "observe" },
];

const CLIENT_ROWS: JsonObject[] = [
  chain(
    "f-server-error",
    subs(),
    thenDeny(() => fault("server-error")),
  ),
  // A deadline far off: over stdio the unparseable line fails the call at once.
  chain(
    "f-malformed",
    subs({ timeoutMs: 60_000 }),
    thenDeny(() => fault("malformed")),
  ),
  chain(
    "f-timeout",
    subs({ timeoutMs: 300 }),
    thenDeny(() => fault("timeout")),
  ),
  // No deadline of its own: the config's timeoutMs (1500 in these runs).
  chain(
    "f-default-deadline",
    subs(),
    thenDeny(() => fault("timeout")),
  ),
  chain(
    "f-wrong-id",
    subs({ timeoutMs: 400 }),
    thenDeny(() => ok("someone-else", [{ type: "allow" }])),
  ),
  chain(
    "f-rpc-error",
    subs(),
    thenDeny((id) => ({
      jsonrpc: "2.0",
      id,
      error: { code: -32000, message: "refused" },
    })),
  ),
  chain("f-unreachable", subs({ backend: "unreachable" }), (id) => [
    ok(id, [setInput("settled"), deny]),
  ]),
  chain(
    "f-closed",
    subs({ timeoutMs: 300, policy: "fail-closed" }),
    thenDeny(() => fault("timeout")),
  ),
  chain(
    "f-mixed",
    [
      { name: "a", timeoutMs: 300 },
      { name: "b" },
      { name: "c" },
      { name: "d" },
      { name: "audit", mode: "observe" },
    ],
    (id) => [
      fault("timeout"),
      fault("server-error"),
      fault("malformed"),
      ok(id, [setInput("settled"), deny]),
    ],
  ),
  chain(
    "f-silent",
    subs(),
    thenDeny(() => fault("server-error")),
    { observeFaults: { a: ["silent", "silent"] } },
  ),
  chain(
    "f-silent-held",
    subs(),
    thenDeny(() => fault("malformed")),
    { observeFaults: { a: [null, "silent"] }, chain: { holdObservers: true } },
  ),
];
const clientFile = scenarioFile(join(work, "client-faults.json"), CLIENT_ROWS);

/** A loopback port nothing listens on (listened on once, then closed). */
async function refusingPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) =>
    server.listen(0, "127.0.0.1", () => resolve()),
  );
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

function assertFaultRows(report: LifecycleReport): void {
  assertContract("lifecycle-report.schema.json", report);
  const entries = report.receipts?.entries ?? [];
  const actual = (id: string) => {
    const row = report.results.find((result) => result.id === id);
    assert.equal(row?.status, "completed", `${id}: ${row?.error ?? ""}`);
    return row?.actual;
  };
  const names = (id: string, ...list: string[]) =>
    list.map((name) => `${id}:${name}`);
  const failedFirst = (id: string) => ({
    called: names(id, "a", "b"),
    failures: names(id, "a"),
    observations: names(id, "c", "audit"),
    input: settled,
  });
  const answered = [
    "received",
    "replied",
    "received",
    "replied",
    "chain-settled",
    "observed",
    "observed",
  ];
  for (const id of [
    "f-server-error",
    "f-malformed",
    "f-wrong-id",
    "f-rpc-error",
    "f-silent",
  ]) {
    assert.deepEqual(actual(id), failedFirst(id), id);
    assert.deepEqual(about(entries, id), answered, id);
  }
  // A timeout is received and never replied.
  const timedOut = [
    "received",
    "received",
    "replied",
    "chain-settled",
    "observed",
    "observed",
  ];
  for (const id of ["f-timeout", "f-default-deadline"]) {
    assert.deepEqual(actual(id), failedFirst(id), id);
    assert.deepEqual(about(entries, id), timedOut, id);
  }
  // The unreachable backend records nothing: b's call is the server's first.
  assert.deepEqual(actual("f-unreachable"), failedFirst("f-unreachable"));
  assert.deepEqual(about(entries, "f-unreachable"), [
    "received",
    "replied",
    "chain-settled",
    "observed",
    "observed",
  ]);
  const unreachableCall = entries.find(
    (e) => e["kind"] === "received" && e["id"] === "f-unreachable",
  )?.["message"] as JsonObject;
  const callEvent = (unreachableCall["params"] as JsonObject)[
    "event"
  ] as JsonObject;
  assert.deepEqual(callEvent["items"], [], "the call that went out is b's");
  // Fail-closed: the chain ends with the original input; the rest observe it.
  assert.deepEqual(actual("f-closed"), {
    called: names("f-closed", "a"),
    failures: names("f-closed", "a"),
    observations: names("f-closed", "b", "c", "audit"),
    input: original,
  });
  assert.deepEqual(about(entries, "f-closed"), [
    "received",
    "chain-settled",
    "observed",
    "observed",
    "observed",
  ]);
  assert.deepEqual(actual("f-mixed"), {
    called: names("f-mixed", "a", "b", "c", "d"),
    failures: names("f-mixed", "a", "b", "c"),
    observations: names("f-mixed", "audit"),
    input: settled,
  });
  assert.deepEqual(about(entries, "f-mixed"), [
    "received",
    "received",
    "replied",
    "received",
    "replied",
    "received",
    "replied",
    "chain-settled",
    "observed",
  ]);
  // Silent observers delay nothing; held ones are marked one by one (our
  // mark, then the server's own just before each observed entry).
  assert.deepEqual(actual("f-silent-held"), failedFirst("f-silent-held"));
  assert.deepEqual(about(entries, "f-silent-held"), [
    "received",
    "replied",
    "received",
    "replied",
    "chain-settled",
    "observer-blocked",
    "observer-blocked",
    "observed",
    "observer-blocked",
    "observer-blocked",
    "observed",
  ]);
}

/** The deadlines above add up to some 3 s; a silent observer or a lost line must not add more. */
const PROMPT_MS = 15_000;

describe("lifecycle client: operational failures and silent observers", () => {
  test("over HTTP, with an unreachable endpoint", async () => {
    const directory = tempDir("ahp-ts-lc-faults-client-http-");
    const { server, readiness } = await startLifecycleServer(
      directory,
      clientFile,
    );
    try {
      const port = await refusingPort();
      const started = Date.now();
      const result = await runLifecycleClient(
        directory,
        httpClientConfig(directory, clientFile, readiness, {
          timeoutMs: 1500,
          backends: {
            unreachable: { endpoint: `http://127.0.0.1:${port}/intercept` },
          },
        }),
      );
      const took = Date.now() - started;
      assert.equal(result.code, 0, result.stderr);
      assertFaultRows(result.report);
      assert.ok(took < PROMPT_MS, `the client took ${took} ms`);
      assert.match(result.stderr, /f-unreachable:a failed .*ECONNREFUSED/);
    } finally {
      await server.stop();
    }
  });

  test("over stdio, with a backend command that cannot be started", async () => {
    const directory = tempDir("ahp-ts-lc-faults-client-stdio-");
    const started = Date.now();
    const result = await runLifecycleClient(
      directory,
      stdioClientConfig(directory, clientFile, {
        timeoutMs: 1500,
        backends: {
          unreachable: { command: [join(directory, "no-such-backend")] },
        },
      }),
    );
    const took = Date.now() - started;
    assert.equal(result.code, 0, result.stderr);
    assertFaultRows(result.report);
    assert.ok(took < PROMPT_MS, `the client took ${took} ms`);
    assert.match(result.stderr, /f-unreachable:a failed .*ENOENT/);
    // The lines it dropped were noted, and the backend stayed usable.
    assert.match(result.stderr, /dropped a line no request waits for/);
  });

  test("a config without backends: a call to unreachable still fails, as an operational failure", async () => {
    const directory = tempDir("ahp-ts-lc-faults-client-nobackends-");
    const file = scenarioFile(join(directory, "one.json"), [
      chain("f-unreachable", subs({ backend: "unreachable" }), (id) => [
        ok(id, [setInput("settled"), deny]),
      ]),
    ]);
    const result = await runLifecycleClient(
      directory,
      stdioClientConfig(directory, file, { timeoutMs: 1500 }),
    );
    assert.equal(result.code, 0, result.stderr);
    const row = result.report.results[0];
    assert.equal(row?.status, "completed", row?.error);
    assert.deepEqual(row?.actual, {
      called: ["f-unreachable:a", "f-unreachable:b"],
      failures: ["f-unreachable:a"],
      observations: ["f-unreachable:c", "f-unreachable:audit"],
      input: settled,
    });
  });

  test("an unusable backends block is exit 2 naming the field", async () => {
    const directory = tempDir("ahp-ts-lc-faults-client-config-");
    const base = stdioClientConfig(directory, clientFile);
    for (const [backends, field] of [
      [[], "backends"],
      [{ unreachable: "x" }, "backends.unreachable"],
      [{ unreachable: {} }, "backends.unreachable"],
      [{ unreachable: { command: [] } }, "backends.unreachable.command"],
      [
        { unreachable: { command: ["/x"], endpoint: "http://127.0.0.1:1" } },
        "backends.unreachable",
      ],
    ] as const) {
      const path = writeJson(join(directory, `${field}.json`), {
        ...base,
        backends,
      });
      const outcome = await runCli("lifecycle-client", path);
      assert.equal(outcome.code, 2, outcome.stderr);
      assert.ok(
        outcome.stderr.includes(`field ${field}:`),
        `${JSON.stringify(backends)}: ${outcome.stderr}`,
      );
    }
  });
});
