// The compaction suite (docs/COMPACTION.md): the outcome rules, the
// synthetic summary, the derived after request, and the real client
// against the real server over HTTP and stdio on a hand-written file.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import * as engine from "../sdk/engine.js";
import type { Json, JsonObject } from "../sdk/json.js";
import { loadSchemas } from "../sdk/schemas.js";
import {
  afterCapabilities,
  afterRequest,
  syntheticSummary,
  textPartWithBody,
} from "../sdk/compaction.js";
import { compactionOutcome, type Settled } from "../suites/compaction.js";
import * as b from "./builders.js";
import { label } from "./lifecycleHarness.js";
import {
  ADAPTER_DIR,
  CLI,
  control,
  runCli,
  SCHEMA_DIR,
  startServer,
  tempDir,
  writeJson,
  type RunningServer,
} from "./processes.js";

const schemas = loadSchemas(SCHEMA_DIR);
const deps = {
  validateResponse: schemas.response,
  content: schemas.content,
  hostRule: () => null,
};

const CAPS: JsonObject = {
  effects: ["deny", "modify", "message", "return"],
  modify: { instructions: { replace: true, merge: true } },
};

/** The before request of row `row`: two messages, optional instructions. */
function beforeRequest(row: string, instructions?: Json[]): JsonObject {
  const id = `${row}:before`;
  return b.request(
    id,
    {
      type: "context.compact.before",
      trigger: "auto",
      items: [
        b.say(`${row}-m1`, "user", "hello"),
        b.say(`${row}-m2`, "assistant", "hi"),
      ],
      ...(instructions === undefined ? {} : { instructions }),
    },
    CAPS,
  );
}

const ok = (id: string, effects: Json[]): JsonObject => b.success(id, effects);
const summaryPart = (row: string, text: string): JsonObject => ({
  id: `${row}:summary`,
  kind: "text",
  mediaType: "text/plain",
  selection: "body",
  text,
});

function settled(extra: Partial<Settled> = {}): Settled {
  return {
    called: [],
    failures: [],
    observations: [],
    effective: [],
    state: undefined,
    failedClosed: false,
    supplier: null,
    ...extra,
  };
}

const generate = () => [summaryPart("r", "generated")];

describe("compaction outcome (step 2)", () => {
  const request = beforeRequest("r");

  it("generates a summary when the compaction is executed", () => {
    const outcome = compactionOutcome(
      engine,
      deps,
      request,
      settled(),
      generate,
    );
    assert.deepEqual(outcome, {
      applied: true,
      summary: generate(),
      execution: { status: "executed" },
      provenance: { kind: "generated" },
    });
  });

  it("binds a supplied summary to its supplier", () => {
    const supplied = [b.text("s1", "given")];
    const outcome = compactionOutcome(
      engine,
      deps,
      request,
      settled({
        state: { permission: "none", candidate: { value: supplied } },
        supplier: "sup",
      }),
      generate,
    );
    assert.deepEqual(outcome, {
      applied: true,
      summary: supplied,
      execution: { status: "skipped", reason: "supplied_result" },
      provenance: { kind: "supplied", supplier: "sup" },
    });
  });

  const none = {
    applied: false,
    summary: null,
    execution: null,
    provenance: null,
  };
  for (const permission of ["deny", "ask"]) {
    it(`applies nothing on ${permission}`, () => {
      const outcome = compactionOutcome(
        engine,
        deps,
        request,
        settled({ state: { permission, candidate: null } }),
        generate,
      );
      assert.deepEqual(outcome, none);
    });
  }

  it("applies nothing when a supplied summary meets an ask", () => {
    const outcome = compactionOutcome(
      engine,
      deps,
      request,
      settled({
        state: { permission: "ask", candidate: { value: [b.text("s", "x")] } },
      }),
      generate,
    );
    assert.deepEqual(outcome, none);
  });

  it("applies nothing on a stop", () => {
    const outcome = compactionOutcome(
      engine,
      deps,
      request,
      settled({ state: { permission: "none", candidate: null, flow: "stop" } }),
      generate,
    );
    assert.deepEqual(outcome, none);
  });

  it("applies nothing after a fail-closed failure", () => {
    const outcome = compactionOutcome(
      engine,
      deps,
      request,
      settled({ failedClosed: true }),
      generate,
    );
    assert.deepEqual(outcome, none);
  });
});

describe("the synthetic summary (step 3)", () => {
  it("counts the items without instructions", () => {
    assert.deepEqual(syntheticSummary("row", 3, undefined), [
      summaryPart("row", "Summary of 3 items."),
    ]);
    assert.deepEqual(syntheticSummary("row", 1, []), [
      summaryPart("row", "Summary of 1 items."),
    ]);
  });

  it("appends the instructions' texts joined by a space", () => {
    assert.deepEqual(
      syntheticSummary("row", 2, [
        b.text("i1", "keep names"),
        b.text("i2", "be brief"),
      ]),
      [
        summaryPart(
          "row",
          "Summary of 2 items. Instructions: keep names be brief",
        ),
      ],
    );
  });

  it("adds nothing for instructions without text", () => {
    assert.deepEqual(syntheticSummary("row", 2, [b.metadataPart("i1")]), [
      summaryPart("row", "Summary of 2 items."),
    ]);
  });
});

describe("the derived after request (step 4)", () => {
  const beforeEvent = beforeRequest("row")["params"] as JsonObject;
  const event = beforeEvent["event"] as JsonObject;
  const summary = [summaryPart("row", "Summary of 2 items.")];

  it("carries every field of the contract", () => {
    const derived = afterRequest(
      "row",
      event,
      summary,
      { status: "executed" },
      false,
    );
    assert.deepEqual(derived, {
      jsonrpc: "2.0",
      id: "row:after",
      method: "hooks/intercept",
      params: {
        protocolVersion: "draft",
        event: {
          id: "row:after",
          source: "urn:ahp-ts:test",
          time: "2026-01-01T00:00:00Z",
          session: { id: "s-1" },
          type: "context.compact.after",
          parentEventId: "row:before",
          summary,
          removed: [{ id: "row-m1" }, { id: "row-m2" }],
          execution: { status: "executed" },
        },
        capabilities: {
          effects: ["modify"],
          modify: { summary: { replace: true, merge: false } },
        },
      },
    });
    assert.equal(schemas.request(derived), null);
  });

  it("advertises nothing when observe-only, and omits an absent session", () => {
    const { session: _session, ...sessionless } = event;
    void _session;
    const derived = afterRequest(
      "row",
      sessionless,
      summary,
      { status: "skipped", reason: "supplied_result" },
      true,
    );
    const params = derived["params"] as JsonObject;
    assert.deepEqual(params["capabilities"], { effects: [] });
    assert.deepEqual(afterCapabilities(true), { effects: [] });
    const afterEvent = params["event"] as JsonObject;
    assert.equal("session" in afterEvent, false);
    assert.deepEqual(afterEvent["execution"], {
      status: "skipped",
      reason: "supplied_result",
    });
    assert.equal(schemas.request(derived), null);
  });

  it("finds a text part carrying a body", () => {
    assert.equal(textPartWithBody(event), false);
    assert.equal(
      textPartWithBody({
        instructions: [b.part("x", "body", { body: { ref: "r" } })],
      }),
      true,
    );
  });
});

// ---------------------------------------------------------------- end to end

const setInstructions = (text: string): JsonObject =>
  b.modify("instructions", "replace", [b.text("ins", text)]);

/** The hand-written scenario file and what each row must report. */
function scenarios(): { rows: JsonObject[]; expected: Record<string, Json> } {
  const rows: JsonObject[] = [];
  const expected: Record<string, Json> = {};
  const calls = (
    called: string[],
    failures: string[] = [],
    observations: string[] = [],
  ) => ({
    called,
    failures,
    observations,
  });
  const empty = calls([]);

  // A generated summary: the before chain edits the instructions, an observer watches.
  rows.push({
    id: "cmp-generated",
    request: beforeRequest("cmp-generated"),
    before: [
      { id: "edit", mode: "intercept" },
      { id: "watch", mode: "observe" },
    ],
    after: [{ id: "tail", mode: "intercept" }],
    afterObserveOnly: false,
    responseSequences: {
      before: [ok("cmp-generated:before", [setInstructions("be brief")])],
      after: [ok("cmp-generated:after", [])],
    },
  });
  expected["cmp-generated"] = {
    applied: true,
    instructions: [b.text("ins", "be brief")],
    summary: [
      summaryPart(
        "cmp-generated",
        "Summary of 2 items. Instructions: be brief",
      ),
    ],
    execution: { status: "executed" },
    provenance: { kind: "generated" },
    before: calls(["edit"], [], ["watch"]),
    after: calls(["tail"]),
  };

  // A supplied summary, then an after modify replaces it.
  const supplied = [b.text("sup-1", "supplied summary")];
  const edited = [b.text("edit-1", "edited summary")];
  rows.push({
    id: "cmp-supplied",
    request: beforeRequest("cmp-supplied", [b.text("i1", "keep")]),
    before: [{ id: "sup", mode: "intercept" }],
    after: [
      { id: "editor", mode: "intercept" },
      { id: "audit", mode: "observe" },
    ],
    responseSequences: {
      before: [
        ok("cmp-supplied:before", [{ type: "return", value: supplied }]),
      ],
      after: [
        ok("cmp-supplied:after", [b.modify("summary", "replace", edited)]),
      ],
    },
  });
  expected["cmp-supplied"] = {
    applied: true,
    instructions: [b.text("i1", "keep")],
    summary: edited,
    execution: { status: "skipped", reason: "supplied_result" },
    provenance: { kind: "supplied", supplier: "sup" },
    before: calls(["sup"]),
    after: calls(["editor"], [], ["audit"]),
  };

  // A deny short-circuits: the second subscription is only notified; no after boundary.
  rows.push({
    id: "cmp-deny",
    request: beforeRequest("cmp-deny"),
    before: [
      { id: "gate", mode: "intercept" },
      { id: "late", mode: "intercept" },
    ],
    after: [{ id: "never", mode: "intercept" }],
    responseSequences: {
      before: [ok("cmp-deny:before", [{ type: "deny", reason: "no" }])],
      after: [ok("cmp-deny:after", [])],
    },
  });
  expected["cmp-deny"] = {
    applied: false,
    instructions: [],
    summary: null,
    execution: null,
    provenance: null,
    before: calls(["gate"], [], ["late"]),
    after: empty,
  };

  // A fail-closed after fault: the after chain ends and nothing is applied.
  rows.push({
    id: "cmp-after-fault",
    request: beforeRequest("cmp-after-fault"),
    before: [],
    after: [
      { id: "broken", mode: "intercept", failurePolicy: "fail-closed" },
      { id: "skipped", mode: "intercept" },
    ],
    responseSequences: {
      before: [],
      after: [{ fault: "server-error" }],
    },
  });
  expected["cmp-after-fault"] = {
    applied: false,
    instructions: [],
    summary: null,
    execution: null,
    provenance: null,
    before: empty,
    after: calls(["broken"], ["broken"], ["skipped"]),
  };

  // An observe-only after boundary: an effect in the reply is unadvertised (fail-open).
  rows.push({
    id: "cmp-observe-only",
    request: beforeRequest("cmp-observe-only"),
    before: [{ id: "pass", mode: "intercept" }],
    after: [{ id: "pushy", mode: "intercept" }],
    afterObserveOnly: true,
    responseSequences: {
      before: [
        ok("cmp-observe-only:before", [{ type: "message", text: "fine" }]),
      ],
      after: [
        ok("cmp-observe-only:after", [b.modify("summary", "replace", edited)]),
      ],
    },
  });
  expected["cmp-observe-only"] = {
    applied: true,
    instructions: [],
    summary: [summaryPart("cmp-observe-only", "Summary of 2 items.")],
    execution: { status: "executed" },
    provenance: { kind: "generated" },
    before: calls(["pass"]),
    after: calls(["pushy"], ["pushy"]),
  };

  // Negatives: a text part with a body, an unknown id, an invalid request.
  const withBody = beforeRequest("cmp-generated", [
    b.part("bad", "body", { body: { ref: "blob" } }),
  ]);
  rows.push({ id: "neg-body", negative: withBody });
  const unknown = beforeRequest("cmp-nowhere");
  rows.push({ id: "neg-unknown", negative: unknown });
  rows.push({
    id: "neg-invalid",
    negative: {
      jsonrpc: "2.0",
      id: "neg-invalid",
      method: "hooks/intercept",
      params: {},
    },
  });
  for (const id of ["neg-body", "neg-unknown", "neg-invalid"])
    expected[id] = { error: -32602 };
  return { rows, expected };
}

interface Report {
  results: { id: string; status: string; actual?: Json; error?: string }[];
  receipts?: { entries: JsonObject[] };
}

function checkRun(report: Report, expected: Record<string, Json>): void {
  for (const [id, actual] of Object.entries(expected)) {
    const result = report.results.find((r) => r.id === id);
    assert.ok(result, `no result for ${id}`);
    assert.equal(result.status, "completed", `${id}: ${result.error ?? ""}`);
    assert.deepEqual(result.actual, actual, id);
  }
  const entries = report.receipts?.entries ?? [];
  const labels = entries.map(label);
  // Each call received then replied (a fault too); one settlement per boundary that ran.
  assert.deepEqual(
    labels.filter((l) => l.includes("cmp-generated")),
    [
      "received:cmp-generated:before",
      "replied:cmp-generated:before",
      "chain-settled:cmp-generated:before",
      "observed:cmp-generated:before",
      "received:cmp-generated:after",
      "replied:cmp-generated:after",
      "chain-settled:cmp-generated:after",
    ],
  );
  assert.deepEqual(
    labels.filter((l) => l.includes("cmp-deny")),
    [
      "received:cmp-deny:before",
      "replied:cmp-deny:before",
      "chain-settled:cmp-deny:before",
      "observed:cmp-deny:before",
    ],
  );
  assert.deepEqual(
    labels.filter((l) => l.includes("cmp-after-fault")),
    [
      "chain-settled:cmp-after-fault:before",
      "received:cmp-after-fault:after",
      "replied:cmp-after-fault:after",
      "chain-settled:cmp-after-fault:after",
      "observed:cmp-after-fault:after",
    ],
  );
  // The calls carried what the chain settled: the after call the synthetic summary.
  const afterCall = entries.find(
    (e) => e["kind"] === "received" && e["id"] === "cmp-supplied:after",
  );
  const afterEvent = (
    (afterCall?.["message"] as JsonObject)["params"] as JsonObject
  )["event"] as JsonObject;
  assert.deepEqual(afterEvent["summary"], [
    b.text("sup-1", "supplied summary"),
  ]);
  assert.equal(afterEvent["parentEventId"], "cmp-supplied:before");
  // The audit observer saw the edited summary.
  const audit = entries.find(
    (e) => e["kind"] === "observed" && e["eventId"] === "cmp-supplied:after",
  );
  assert.deepEqual((audit?.["event"] as JsonObject)["summary"], [
    b.text("edit-1", "edited summary"),
  ]);
  // Nothing recorded for a negative.
  assert.equal(
    entries.filter((e) => JSON.stringify(e).includes("cmp-nowhere")).length,
    0,
  );
  assert.equal(entries.filter((e) => e["id"] === "neg-invalid").length, 0);
  assert.equal(
    entries.filter(
      (e) => e["kind"] === "received" && e["id"] === "cmp-generated:before",
    ).length,
    1,
  );
}

/**
 * `GET /capabilities` of a running server: 200 with exactly the bare
 * capabilities of the tool.before intercept entry of the manifest it answers
 * `hooks/capabilities` with, and no new receipt.
 */
async function assertBareCapabilities(readiness: {
  endpoint: string;
  controlEndpoint: string;
}): Promise<void> {
  const entries = async (): Promise<unknown[]> =>
    (
      (await control(readiness.controlEndpoint, "GET", "/receipts")).body as {
        entries: unknown[];
      }
    ).entries;
  const before = (await entries()).length;
  const got = await control(readiness.endpoint, "GET", "/capabilities");
  const discovery = await control(readiness.endpoint, "POST", "", {
    jsonrpc: "2.0",
    id: "d-1",
    method: "hooks/capabilities",
    params: { protocolVersion: "draft" },
  });
  const manifest = ((discovery.body as JsonObject)["result"] as JsonObject)[
    "manifest"
  ] as JsonObject;
  const toolBefore = (manifest["events"] as JsonObject[]).filter(
    (entry) =>
      entry["event"] === "tool.before" &&
      (entry["modes"] as string[]).includes("intercept"),
  );
  assert.equal(toolBefore.length, 1);
  assert.deepEqual(
    [got.status, got.body],
    [200, toolBefore[0]?.["capabilities"]],
  );
  assert.equal((await entries()).length, before);
}

describe("compaction end to end", () => {
  const directory = tempDir("ahp-ts-compaction-");
  const { rows, expected } = scenarios();
  const file = writeJson(join(directory, "scenarios.json"), {
    version: 1,
    suite: "compaction",
    scenarios: rows,
  });
  const serverConfig = (extra: JsonObject): JsonObject => ({
    suite: "compaction",
    transport: "http",
    readinessFile: join(directory, "ready.json"),
    scenarioFile: file,
    auth: { mode: "none", profile: "strict" },
    schemaDir: SCHEMA_DIR,
    ...extra,
  });
  const clientBase = (extra: JsonObject): JsonObject => ({
    suite: "compaction",
    scenarioFile: file,
    reportFile: join(directory, "report.json"),
    childPidFile: join(directory, "child.json"),
    auth: { mode: "none", profile: "strict" },
    timeoutMs: 10000,
    schemaDir: SCHEMA_DIR,
    ...extra,
  });
  let server: RunningServer | null = null;

  before(async () => {
    const path = writeJson(join(directory, "server.json"), serverConfig({}));
    server = await startServer(
      path,
      join(directory, "ready.json"),
      "lifecycle-server",
    );
  });
  after(async () => {
    await server?.stop();
  });

  async function runClient(config: JsonObject): Promise<Report> {
    const path = writeJson(join(directory, "client.json"), config);
    const result = await runCli("lifecycle-client", path, {}, 60_000);
    assert.equal(result.code, 0, result.stderr);
    return JSON.parse(
      readFileSync(config["reportFile"] as string, "utf8"),
    ) as Report;
  }

  it("runs every row over HTTP", async () => {
    const readiness = server?.readiness as unknown as {
      endpoint: string;
      controlEndpoint: string;
    };
    const report = await runClient(
      clientBase({
        transport: "http",
        endpoint: readiness.endpoint,
        controlEndpoint: readiness.controlEndpoint,
      }),
    );
    checkRun(report, expected);
  });

  it("GET /capabilities answers the bare tool.before capabilities, unrecorded", async () => {
    await assertBareCapabilities(
      server?.readiness as unknown as {
        endpoint: string;
        controlEndpoint: string;
      },
    );
  });

  it("runs every row over stdio", async () => {
    const stdioServer = writeJson(
      join(directory, "stdio-server.json"),
      serverConfig({
        transport: "stdio",
        readinessFile: join(directory, "stdio-ready.json"),
      }),
    );
    const report = await runClient(
      clientBase({
        transport: "stdio",
        reportFile: join(directory, "stdio-report.json"),
        serverCommand: [process.execPath, CLI, "lifecycle-server"],
        serverCwd: ADAPTER_DIR,
        serverConfig: stdioServer,
      }),
    );
    checkRun(report, expected);
  });
});

describe("a server's rows", () => {
  it("need no request: a run is answered by its id and responseSequences", async () => {
    const directory = tempDir("ahp-ts-compaction-bare-");
    const reply = ok("bare:before", []);
    const file = writeJson(join(directory, "scenarios.json"), {
      version: 1,
      suite: "compaction",
      scenarios: [{ id: "bare", responseSequences: { before: [reply] } }],
    });
    const config = writeJson(join(directory, "server.json"), {
      suite: "compaction",
      transport: "http",
      readinessFile: join(directory, "ready.json"),
      scenarioFile: file,
      auth: { mode: "none", profile: "strict" },
      schemaDir: SCHEMA_DIR,
    });
    const server = await startServer(
      config,
      join(directory, "ready.json"),
      "lifecycle-server",
    );
    try {
      const { endpoint } = server.readiness as unknown as { endpoint: string };
      const answer = await fetch(endpoint, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(beforeRequest("bare")),
      });
      assert.equal(answer.status, 200);
      assert.deepEqual(await answer.json(), reply);
    } finally {
      await server.stop();
    }
  });
});
