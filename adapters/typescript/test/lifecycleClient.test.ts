// The lifecycle client (docs/LIFECYCLE.md, "Client: the steps" and
// "Chains") as a real process against the real server, over HTTP and stdio:
// every step op, alias rebinding, content sources, stray frames, serial
// chains, the marks and receipts each causes, the child server's pid file
// and reaping. Inputs are built here by hand and outcomes are asserted as
// literals; no scenario's expectation is read.

import assert from "node:assert/strict";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import type { Json, JsonObject } from "../sdk/json.js";
import { assertContract } from "./contractSchemas.js";
import {
  attachmentItem,
  httpClientConfig,
  label,
  note,
  ok,
  req,
  runLifecycleClient,
  scenarioFile,
  setInput,
  sha,
  startLifecycleServer,
  stdioClientConfig,
  STRANGER_ENV,
  uploadStep,
  type LifecycleReport,
} from "./lifecycleHarness.js";
import {
  processGone,
  runCli,
  tempDir,
  writeJson,
  type RunningServer,
} from "./processes.js";

const work = tempDir("ahp-ts-lifecycle-client-");
after(() => rmSync(work, { recursive: true, force: true }));

const allow = { type: "allow" };
const deny = { type: "deny", reason: "policy" };
const original = { value: "original" };
const settled = { value: "settled" };
const step = (op: string, fields: JsonObject = {}): JsonObject => ({
  op,
  ...fields,
});
const send = (key: string, slot = key, extra: JsonObject = {}) =>
  step("send", { key, slot, ...extra });
const wait = (key: string, count = 1) => step("wait", { key, count });
const release = (key: string) => step("release", { key });
const receive = (slot: string) => step("receive", { slot });
const accept = (key: string) => step("accept", { key });
const cancel = (key: string) => step("cancel", { key });
const failOpen = (key: string) => step("failOpen", { key });
const observe = (key: string, subscription: string, items?: JsonObject[]) =>
  step("observe", {
    key,
    subscription,
    ...(items === undefined ? {} : { items }),
  });
/** send, wait, release, receive, accept: one request taken and published. */
const roundTrip = (key: string) => [
  send(key),
  wait(key),
  release(key),
  receive(key),
  accept(key),
];

/** A scenario with one request `a` (id `${id}:a`) answered with `effects`. */
function single(
  id: string,
  effects: Json[],
  steps: JsonObject[],
  extra: JsonObject = {},
): JsonObject {
  return {
    id,
    requests: { a: req(`${id}:a`) },
    responses: { a: ok(`${id}:a`, effects) },
    steps,
    ...extra,
  };
}

const SOURCE_BYTES = Buffer.from("bytes only a content source has");

const STEP_ROWS: JsonObject[] = [
  single(
    "publish",
    [setInput("settled"), note("published"), allow],
    [...roundTrip("a"), observe("a", "metadata")],
  ),
  single(
    "cancel-first",
    [setInput("settled")],
    [
      send("a"),
      wait("a"),
      cancel("a"),
      failOpen("a"),
      accept("a"),
      release("a"),
      receive("a"),
      accept("a"),
    ],
  ),
  single(
    "cancel-after-publication",
    [note("kept")],
    [
      ...roundTrip("a"),
      cancel("a"),
      accept("a"),
      failOpen("a"),
      observe("a", "body"),
    ],
  ),
  single(
    "fail-open",
    [setInput("late")],
    [
      send("a"),
      wait("a"),
      failOpen("a"),
      observe("a", "metadata"),
      release("a"),
      receive("a"),
      accept("a"),
    ],
  ),
  single(
    "duplicate",
    [setInput("settled")],
    [
      ...roundTrip("a"),
      send("a", "again", { bypassSDK: true }),
      wait("a", 2),
      receive("again"),
      accept("a"),
    ],
  ),
  single(
    "staged-once",
    [note("first")],
    [
      send("a"),
      wait("a"),
      release("a"),
      receive("a"),
      send("a", "again", { bypassSDK: true }),
      wait("a", 2),
      receive("again"),
      accept("a"),
    ],
    {
      responseSequences: {
        a: [
          ok("staged-once:a", [note("first")]),
          ok("staged-once:a", [note("second")]),
        ],
      },
    },
  ),
  single(
    "stop",
    [{ type: "flow", operation: "stop", reason: "halt" }],
    roundTrip("a"),
  ),
  single(
    "supplied",
    [{ type: "return", value: { supplied: true } }],
    roundTrip("a"),
  ),
  single(
    "rejected",
    [note("never"), { type: "flow", operation: "continue" }],
    [...roundTrip("a"), failOpen("a")],
  ),
  {
    id: "uploads",
    requests: {
      a: req("uploads:a", original, {
        items: [attachmentItem("doc-item", "doc")],
      }),
    },
    responses: { a: ok("uploads:a", [allow]) },
    steps: [
      uploadStep("doc", "document bytes"),
      uploadStep("bad-size", "body", { size: 99 }),
      uploadStep("bad-hash", "body", { sha256: "0".repeat(64) }),
      uploadStep(
        "stranger",
        "secret",
        {},
        {
          upload: {
            auth: { type: "bearer", tokenEnv: STRANGER_ENV },
            timeoutMs: 5000,
            maxBytes: 1048576,
          },
        },
      ),
      ...roundTrip("a"),
      observe("a", "body", [attachmentItem("doc-item", "doc")]),
    ],
  },
  {
    id: "content-source",
    requests: {
      a: req("content-source:a", original, {
        items: [attachmentItem("src-item", "src-1")],
      }),
    },
    responses: { a: ok("content-source:a", []) },
    steps: roundTrip("a"),
  },
  single("unknown-op", [], [step("teleport", { key: "a" })]),
  {
    id: "two-in-flight",
    transports: ["http"],
    requests: { a: req("two-in-flight:a"), b: req("two-in-flight:b") },
    responses: {
      a: ok("two-in-flight:a", [note("a")]),
      b: ok("two-in-flight:b", [note("b")]),
    },
    steps: [
      send("a"),
      wait("a"),
      send("b"),
      wait("b"),
      release("b"),
      receive("b"),
      release("a"),
      receive("a"),
      accept("a"),
      accept("b"),
    ],
  },
  {
    id: "emit",
    transports: ["stdio"],
    requests: { a: req("emit:a") },
    responses: { a: ok("emit:a", [note("live")]) },
    steps: [
      send("a"),
      wait("a"),
      step("emit", { response: ok("stray:x", [note("stale")]) }),
      release("a"),
      receive("a"),
      accept("a"),
    ],
  },
];
const stepFile = scenarioFile(join(work, "steps.json"), STEP_ROWS);
const contentSources = [
  {
    descriptor: {
      ref: "src-1",
      size: SOURCE_BYTES.length,
      sha256: sha(SOURCE_BYTES),
    },
    bytes: SOURCE_BYTES.toString("base64"),
  },
];

const stateOf = (input: Json, messages: string[], extra: JsonObject = {}) => ({
  decision: "allow",
  executed: true,
  input,
  messages,
  ...extra,
});

type Entries = JsonObject[];

function rowOf(report: LifecycleReport, id: string) {
  const row = report.results.find((result) => result.id === id);
  assert.ok(row !== undefined, `no result for ${id}`);
  return row;
}

/** Positions of entries of `kind` for `id` (request id, or event id for observations). */
function at(entries: Entries, kind: string, id: string): number[] {
  return entries.flatMap((entry, index) =>
    entry["kind"] === kind && (entry["id"] ?? entry["eventId"]) === id
      ? [index]
      : [],
  );
}

/** Asserts what every step row on both transports derives. */
function assertStepRows(
  report: LifecycleReport,
  transport: "http" | "stdio",
): void {
  assertContract("lifecycle-report.schema.json", report, `${transport} report`);
  const entries = report.receipts?.entries ?? [];
  const actual = (id: string) => {
    const row = rowOf(report, id);
    assert.equal(row.status, "completed", `${id}: ${row.error ?? ""}`);
    return row.actual;
  };
  const empty = {
    published: [],
    cancelled: [],
    ignored: [],
    states: {},
    observations: [],
    uploadStatuses: [],
  };

  assert.deepEqual(actual("publish"), {
    ...empty,
    published: ["publish:a"],
    states: { "publish:a": stateOf(settled, ["published"]) },
    observations: [
      { eventId: "publish:a", subscription: "metadata", input: settled },
    ],
  });
  const [received] = at(entries, "received", "publish:a");
  const [replied] = at(entries, "replied", "publish:a");
  const [acquired] = at(entries, "acquired", "publish:a");
  const [accepted] = at(entries, "accepted", "publish:a");
  const [observed] = at(entries, "observed", "publish:a");
  assert.ok(
    received! < replied! &&
      replied! < acquired! &&
      acquired! < accepted! &&
      accepted! < observed!,
  );
  const observedEvent = entries[observed!]?.["event"] as JsonObject;
  assert.deepEqual((observedEvent["tool"] as JsonObject)["input"], settled);

  assert.deepEqual(actual("cancel-first"), {
    ...empty,
    cancelled: ["cancel-first:a"],
    ignored: ["a"],
  });
  const [cancelled] = at(entries, "cancelled", "cancel-first:a");
  assert.ok(at(entries, "received", "cancel-first:a")[0]! < cancelled!);
  assert.ok(cancelled! < at(entries, "replied", "cancel-first:a")[0]!);
  assert.deepEqual(at(entries, "acquired", "cancel-first:a"), []);

  assert.deepEqual(actual("cancel-after-publication"), {
    ...empty,
    published: ["cancel-after-publication:a"],
    cancelled: ["cancel-after-publication:a"],
    states: { "cancel-after-publication:a": stateOf(original, ["kept"]) },
    observations: [
      {
        eventId: "cancel-after-publication:a",
        subscription: "body",
        input: original,
      },
    ],
  });

  assert.deepEqual(actual("fail-open"), {
    ...empty,
    published: ["fail-open:a"],
    ignored: ["a"],
    states: { "fail-open:a": stateOf(original, []) },
    observations: [
      { eventId: "fail-open:a", subscription: "metadata", input: original },
    ],
  });
  // A fail-open publication follows the receipt, with no acquisition.
  assert.ok(
    at(entries, "received", "fail-open:a")[0]! <
      at(entries, "accepted", "fail-open:a")[0]!,
  );
  assert.deepEqual(at(entries, "acquired", "fail-open:a"), []);

  assert.deepEqual(actual("duplicate"), {
    ...empty,
    published: ["duplicate:a"],
    ignored: ["again"],
    states: { "duplicate:a": stateOf(settled, []) },
  });
  assert.equal(at(entries, "received", "duplicate:a").length, 2);
  assert.equal(at(entries, "acquired", "duplicate:a").length, 1);
  assert.deepEqual(actual("staged-once"), {
    ...empty,
    published: ["staged-once:a"],
    ignored: ["again"],
    states: { "staged-once:a": stateOf(original, ["first"]) },
  });

  assert.deepEqual(actual("stop"), {
    ...empty,
    published: ["stop:a"],
    states: {
      "stop:a": stateOf(original, [], { executed: false, flow: "stop" }),
    },
  });
  assert.deepEqual(actual("supplied"), {
    ...empty,
    published: ["supplied:a"],
    states: {
      "supplied:a": stateOf(original, [], {
        executed: false,
        result: { supplied: true },
      }),
    },
  });
  // Not accepted under the core rules: nothing published; fail-open then applies.
  assert.deepEqual(actual("rejected"), {
    ...empty,
    published: ["rejected:a"],
    states: { "rejected:a": stateOf(original, []) },
  });

  assert.deepEqual(actual("uploads"), {
    ...empty,
    published: ["uploads:a"],
    states: { "uploads:a": stateOf(original, []) },
    observations: [
      { eventId: "uploads:a", subscription: "body", input: original },
    ],
    uploadStatuses: [201, 400, 400, 401],
  });
  const uploads = entries.filter((entry) => entry["kind"] === "upload");
  const body = Buffer.from("body");
  assert.deepEqual(
    uploads
      .slice(0, 4)
      .map(({ status, size, sha256 }) => ({ status, size, sha256 })),
    [
      { status: 201, size: 14, sha256: sha("document bytes") },
      { status: 400, size: 99, sha256: sha(body) },
      { status: 400, size: 4, sha256: "0".repeat(64) },
      { status: 401, size: 6, sha256: sha("secret") },
    ],
  );
  const ref = uploads[0]?.["ref"] as string;
  assert.match(ref, /^urn:uuid:/);
  const sent = entries[at(entries, "received", "uploads:a")[0]!]?.[
    "message"
  ] as JsonObject;
  const sentItems = ((sent["params"] as JsonObject)["event"] as JsonObject)[
    "items"
  ];
  assert.deepEqual(
    sentItems,
    [attachmentItem("doc-item", ref)],
    "the alias is rebound before sending",
  );
  const seen = entries[at(entries, "observed", "uploads:a")[0]!]?.[
    "event"
  ] as JsonObject;
  assert.deepEqual(seen["items"], [attachmentItem("doc-item", ref)]);

  assert.deepEqual(actual("content-source"), {
    ...empty,
    published: ["content-source:a"],
    states: { "content-source:a": stateOf(original, []) },
  });
  const sourceReceipt = uploads[4];
  assert.equal(sourceReceipt?.["status"], 201);
  assert.deepEqual(report.contentUploads, [
    {
      sourceRef: "src-1",
      descriptor: {
        ref: sourceReceipt?.["ref"] ?? null,
        size: SOURCE_BYTES.length,
        sha256: sha(SOURCE_BYTES),
      },
      method: "hooks/intercept",
      eventId: "content-source:a",
    },
  ]);
  assert.ok(
    entries.findIndex((entry) => entry === sourceReceipt) <
      at(entries, "received", "content-source:a")[0]!,
  );

  const unknown = rowOf(report, "unknown-op");
  assert.equal(unknown.status, "unsupported");
  assert.match(unknown.error ?? "", /teleport/);
  assert.deepEqual(
    at(entries, "received", "unknown-op:a"),
    [],
    "an unsupported row sends nothing",
  );
}

describe("lifecycle client: the steps over HTTP", () => {
  let server: RunningServer;
  let report: LifecycleReport;
  before(async () => {
    const directory = tempDir("ahp-ts-lc-client-http-");
    const started = await startLifecycleServer(directory, stepFile);
    server = started.server;
    const result = await runLifecycleClient(
      directory,
      httpClientConfig(directory, stepFile, started.readiness, {
        contentSources,
      }),
    );
    assert.equal(result.code, 0, result.stderr);
    report = result.report;
  });
  after(() => server.stop());

  test("every op derives what the steps call for, and marks it in order", () => {
    assertStepRows(report, "http");
  });

  test("two requests in flight, taken in reverse, published in the order accepted", () => {
    assert.deepEqual(rowOf(report, "two-in-flight").actual, {
      published: ["two-in-flight:a", "two-in-flight:b"],
      cancelled: [],
      ignored: [],
      states: {
        "two-in-flight:a": stateOf(original, ["a"]),
        "two-in-flight:b": stateOf(original, ["b"]),
      },
      observations: [],
      uploadStatuses: [],
    });
  });

  test("a stdio-only row is not run over HTTP", () => {
    const row = rowOf(report, "emit");
    assert.equal(row.status, "unsupported");
  });
});

describe("lifecycle client: the steps over stdio", () => {
  let report: LifecycleReport;
  let childPid: number;
  before(async () => {
    const directory = tempDir("ahp-ts-lc-client-stdio-");
    const config = stdioClientConfig(directory, stepFile, { contentSources });
    const result = await runLifecycleClient(directory, config);
    assert.equal(result.code, 0, result.stderr);
    report = result.report;
    const pidFile = config["childPidFile"] as string;
    assert.ok(existsSync(pidFile));
    childPid = (JSON.parse(readFileSync(pidFile, "utf8")) as { pid: number })
      .pid;
  });

  test("every op derives what the steps call for, and marks it in order", () => {
    assertStepRows(report, "stdio");
  });

  test("a stray frame is dropped, marked discarded, while the live request waits", () => {
    assert.deepEqual(rowOf(report, "emit").actual, {
      published: ["emit:a"],
      cancelled: [],
      ignored: ["unsolicited:stray:x"],
      states: { "emit:a": stateOf(original, ["live"]) },
      observations: [],
      uploadStatuses: [],
    });
    const entries = report.receipts?.entries ?? [];
    const order = [
      at(entries, "received", "emit:a")[0],
      at(entries, "emitted", "stray:x")[0],
      at(entries, "discarded", "stray:x")[0],
      at(entries, "replied", "emit:a")[0],
    ];
    assert.deepEqual(
      order,
      [...order].sort((x, y) => x! - y!),
    );
  });

  test("an HTTP-only row is not run over stdio", () => {
    assert.equal(rowOf(report, "two-in-flight").status, "unsupported");
  });

  test("the server the client started is gone once it exits", () => {
    assert.ok(childPid > 1);
    assert.ok(processGone(childPid));
  });
});

// ---------------------------------------------------------------- chains

type Sub = [
  string,
  "intercept" | "observe",
  "fail-open" | "fail-closed",
  "metadata" | "omit",
];
const ITEMS = [
  {
    id: "chain-item",
    kind: "text",
    mediaType: "text/plain",
    selection: "metadata",
  },
];

function chain(
  id: string,
  subscriptions: Sub[],
  sequence: Json[][],
  flags: { interrupt?: boolean; holdObservers?: boolean } = {},
): JsonObject {
  return {
    id,
    chain: {
      subscriptions: subscriptions.map(
        ([name, mode, failurePolicy, content]) => ({
          id: `${id}:${name}`,
          backend: "shared",
          mode,
          failurePolicy,
          content,
        }),
      ),
      interrupt: flags.interrupt ?? false,
      holdObservers: flags.holdObservers ?? false,
    },
    requests: { a: req(id, original, { items: ITEMS }) },
    responses: { a: ok(id, sequence.at(-1) ?? []) },
    responseSequences: { a: sequence.map((effects) => ok(id, effects)) },
  };
}

const THREE: Sub[] = [
  ["a", "intercept", "fail-open", "metadata"],
  ["b", "intercept", "fail-open", "omit"],
  ["c", "intercept", "fail-open", "metadata"],
  ["audit", "observe", "fail-open", "metadata"],
];
const unadvertised = { type: "flow", operation: "continue" };
const CHAIN_ROWS = [
  chain("deny-first", THREE, [[setInput("settled"), deny]]),
  chain("carried", THREE, [
    [setInput("settled"), allow],
    [{ type: "ask" }],
    [],
  ]),
  chain("fail-open", THREE, [[unadvertised], [deny]]),
  chain(
    "fail-closed",
    THREE.map(
      ([name, mode, , content]) => [name, mode, "fail-closed", content] as Sub,
    ),
    [[setInput("settled"), allow], [unadvertised]],
  ),
  chain("interrupt", THREE, [[deny]], { interrupt: true }),
  chain("held-observers", THREE, [[deny]], { holdObservers: true }),
  chain("observe-only", [["audit", "observe", "fail-open", "omit"]], [[deny]]),
];
const chainFile = scenarioFile(join(work, "chains.json"), CHAIN_ROWS);

/** The `hooks/observe` the server should have received for a chain event. */
function notified(id: string, input: Json, items: Json[]): JsonObject {
  const event = structuredClone(
    (req(id, original, { items: ITEMS })["params"] as JsonObject)["event"],
  ) as JsonObject;
  (event["tool"] as JsonObject)["input"] = input;
  event["items"] = items;
  return {
    jsonrpc: "2.0",
    method: "hooks/observe",
    params: { protocolVersion: "draft", event },
  };
}

function assertChains(report: LifecycleReport): void {
  assertContract("lifecycle-report.schema.json", report);
  const entries = report.receipts?.entries ?? [];
  const actual = (id: string) => {
    const row = rowOf(report, id);
    assert.equal(row.status, "completed", `${id}: ${row.error ?? ""}`);
    return row.actual;
  };
  const names = (id: string, ...subs: string[]) =>
    subs.map((sub) => `${id}:${sub}`);
  const messages = (kind: string, id: string) =>
    at(entries, kind, id).map(
      (index) => entries[index]?.["message"] as JsonObject,
    );
  const called = (id: string) =>
    messages("received", id).map((message) => {
      const params = message["params"] as JsonObject;
      const event = params["event"] as JsonObject;
      return {
        input: (event["tool"] as JsonObject)["input"],
        items: event["items"],
        state: params["state"],
      };
    });
  const marks = (id: string) =>
    entries
      .filter((entry) => entry["id"] === id || entry["eventId"] === id)
      .map((entry) => label(entry).split(":")[0]);

  // A deny ends the chain: the uncalled intercepts and the observer are notified.
  assert.deepEqual(actual("deny-first"), {
    called: names("deny-first", "a"),
    failures: [],
    observations: names("deny-first", "b", "c", "audit"),
    input: settled,
  });
  assert.deepEqual(messages("observed", "deny-first"), [
    notified("deny-first", settled, []),
    notified("deny-first", settled, ITEMS),
    notified("deny-first", settled, ITEMS),
  ]);
  assert.deepEqual(marks("deny-first"), [
    "received",
    "replied",
    "chain-settled",
    "observed",
    "observed",
    "observed",
  ]);

  // State carried forward: allow does not survive the changed input; ask does.
  assert.deepEqual(actual("carried"), {
    called: names("carried", "a", "b", "c"),
    failures: [],
    observations: names("carried", "audit"),
    input: settled,
  });
  assert.deepEqual(called("carried"), [
    {
      input: original,
      items: ITEMS,
      state: { permission: "none", candidate: null },
    },
    {
      input: settled,
      items: [],
      state: { permission: "none", candidate: null },
    },
    {
      input: settled,
      items: ITEMS,
      state: { permission: "ask", candidate: null },
    },
  ]);
  assert.deepEqual(marks("carried"), [
    "received",
    "replied",
    "received",
    "replied",
    "received",
    "replied",
    "chain-settled",
    "observed",
  ]);

  assert.deepEqual(actual("fail-open"), {
    called: names("fail-open", "a", "b"),
    failures: names("fail-open", "a"),
    observations: names("fail-open", "c", "audit"),
    input: original,
  });
  assert.deepEqual(actual("fail-closed"), {
    called: names("fail-closed", "a", "b"),
    failures: names("fail-closed", "b"),
    observations: names("fail-closed", "c", "audit"),
    input: original,
  });
  assert.deepEqual(
    messages("observed", "fail-closed")[0],
    notified("fail-closed", original, ITEMS),
  );

  assert.deepEqual(actual("interrupt"), {
    called: names("interrupt", "a"),
    failures: [],
    observations: [],
    input: original,
  });
  assert.deepEqual(marks("interrupt"), [
    "received",
    "cancelled",
    "chain-settled",
    "replied",
  ]);

  assert.deepEqual(actual("held-observers"), {
    called: names("held-observers", "a"),
    failures: [],
    observations: names("held-observers", "b", "c", "audit"),
    input: original,
  });
  // Each held observer: our mark (with scenario), then the server's own
  // (without, as upstream servers record it) just before its observed entry.
  assert.deepEqual(
    entries
      .filter(
        (entry) =>
          entry["id"] === "held-observers" ||
          entry["eventId"] === "held-observers",
      )
      .map((entry) => [entry["kind"], "scenario" in entry]),
    [
      ["received", false],
      ["replied", false],
      ["chain-settled", true],
      ...[0, 1, 2].flatMap(() => [
        ["observer-blocked", true],
        ["observer-blocked", false],
        ["observed", false],
      ]),
    ],
  );

  assert.deepEqual(actual("observe-only"), {
    called: [],
    failures: [],
    observations: names("observe-only", "audit"),
    input: original,
  });
  assert.deepEqual(messages("observed", "observe-only"), [
    notified("observe-only", original, []),
  ]);
  assert.deepEqual(marks("observe-only"), ["chain-settled", "observed"]);
}

describe("lifecycle client: chains", () => {
  test("over HTTP", async () => {
    const directory = tempDir("ahp-ts-lc-chain-http-");
    const { server, readiness } = await startLifecycleServer(
      directory,
      chainFile,
    );
    try {
      const result = await runLifecycleClient(
        directory,
        httpClientConfig(directory, chainFile, readiness),
      );
      assert.equal(result.code, 0, result.stderr);
      assertChains(result.report);
    } finally {
      await server.stop();
    }
  });

  test("over stdio", async () => {
    const directory = tempDir("ahp-ts-lc-chain-stdio-");
    const result = await runLifecycleClient(
      directory,
      stdioClientConfig(directory, chainFile),
    );
    assert.equal(result.code, 0, result.stderr);
    assertChains(result.report);
  });
});

describe("lifecycle client config", () => {
  test("a missing field is exit 2 naming it", async () => {
    const directory = tempDir("ahp-ts-lc-client-config-");
    const http = httpClientConfig(directory, stepFile, {
      endpoint: "http://127.0.0.1:9/intercept",
      controlEndpoint: "http://127.0.0.1:9",
      uploadEndpoint: "http://127.0.0.1:9/upload",
      pid: 1,
    });
    const stdio = stdioClientConfig(directory, stepFile);
    for (const [config, field] of [
      [{ ...http, controlEndpoint: null }, "controlEndpoint"],
      [{ ...stdio, childPidFile: null }, "childPidFile"],
      [{ ...stdio, serverConfig: null }, "serverConfig"],
      [
        {
          ...http,
          upload: { ...(http["upload"] as JsonObject), timeoutMs: 0 },
        },
        "upload.timeoutMs",
      ],
      [
        {
          ...http,
          contentSources: [
            { descriptor: { ref: "r", size: 1, sha256: "x" }, bytes: "" },
          ],
        },
        "contentSources[0].descriptor.sha256",
      ],
    ] as const) {
      const path = writeJson(join(directory, `${field}.json`), config);
      const result = await runCli("lifecycle-client", path);
      assert.equal(result.code, 2, result.stderr);
      assert.ok(result.stderr.includes(`field ${field}:`), result.stderr);
      assert.equal(result.stderr.trim().split("\n").length, 1);
    }
  });
});

describe("lifecycle client: what it does not run", () => {
  test("another suite: every row unsupported, naming it; exit 0", async () => {
    const directory = tempDir("ahp-ts-lc-suite-");
    const config = stdioClientConfig(directory, stepFile, {
      suite: "nonesuch",
    });
    const result = await runLifecycleClient(
      directory,
      config,
      undefined,
      false,
    );
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.report.results.length, STEP_ROWS.length);
    for (const row of result.report.results) {
      assert.equal(row.status, "unsupported");
      assert.match(row.error ?? "", /nonesuch/);
    }
    assert.equal(
      existsSync(config["childPidFile"] as string),
      false,
      "no server was started",
    );
  });
});
