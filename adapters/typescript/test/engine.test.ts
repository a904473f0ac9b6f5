// Focused tests of each composition rule at each boundary: hand-built
// requests and responses with literal expected outcomes. (The scenario sets
// themselves are judged by the harness, from the replay report.)

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { applyResponse, type EngineDeps, type Outcome } from "../sdk/engine.js";
import type { Json, JsonObject } from "../sdk/json.js";
import { loadSchemas } from "../sdk/schemas.js";
import * as b from "./builders.js";
import { SCHEMA_DIR } from "./processes.js";

const schemas = loadSchemas(SCHEMA_DIR);
const deps: EngineDeps = {
  validateResponse: schemas.response,
  content: schemas.content,
};

const NO_STATE = { permission: "none", candidate: null };

/**
 * Applies `effects` to a request built from `payload` and `state` (null: the
 * request carries no state); asserts the request itself is valid.
 */
function run(
  payload: JsonObject,
  caps: JsonObject,
  effects: Json,
  state: JsonObject | null = NO_STATE,
): Outcome {
  const request = b.request("t-1", payload, caps, state ?? undefined);
  assert.equal(schemas.request(request), null, "test request is schema-valid");
  return applyResponse(request, b.success("t-1", effects), deps);
}

/** As `run`, for requests that over-advertise (the schema refuses them; the engine must still hold). */
function runOverAdvertised(
  payload: JsonObject,
  caps: JsonObject,
  effects: Json,
): Outcome {
  const request = b.request("t-1", payload, caps, NO_STATE);
  assert.notEqual(
    schemas.request(request),
    null,
    "test request over-advertises",
  );
  return applyResponse(request, b.success("t-1", effects), deps);
}

function applied(outcome: Outcome): JsonObject {
  assert.equal(
    outcome.status,
    "applied",
    outcome.status === "applied" ? "" : outcome.reason,
  );
  return (outcome as { actual: JsonObject }).actual;
}

function rejected(outcome: Outcome): void {
  assert.equal(outcome.status, "rejected", JSON.stringify(outcome));
}

const toolCaps = b.capabilities(
  ["deny", "allow", "ask", "modify", "message", "return"],
  { modify: b.modifyCaps("input") },
);

describe("envelope and correlation (rule 1, 2)", () => {
  const request = b.request("t-1", b.toolBefore({ q: 1 }), toolCaps, NO_STATE);
  const empty = b.success("t-1", []);
  const cases: [string, Json][] = [
    ["null response", null],
    ["array response", [empty]],
    ["wrong jsonrpc", { ...empty, jsonrpc: "1.0" }],
    ["id of another type", b.success(1, [])],
    [
      "missing id",
      { jsonrpc: "2.0", result: { protocolVersion: "draft", effects: [] } },
    ],
    ["error beside result", { ...empty, error: { code: -1, message: "x" } }],
    [
      "error response",
      {
        jsonrpc: "2.0",
        id: "t-1",
        error: { code: -32002, message: "unsupported" },
      },
    ],
    ["result not an object", { ...empty, result: [] }],
    [
      "other protocol version",
      { ...empty, result: { protocolVersion: "0.1", effects: [] } },
    ],
    ["unknown effect type", b.success("t-1", [{ type: "com.example.custom" }])],
    [
      "modify with a path",
      b.success("t-1", [{ ...b.modify("input", "merge", {}), path: "/q" }]),
    ],
  ];
  for (const [name, response] of cases) {
    test(`rejects ${name}`, () =>
      rejected(applyResponse(request, response, deps)));
  }
  test("ignores unknown fields on the result envelope", () => {
    const response = {
      ...empty,
      extra: 1,
      result: { protocolVersion: "draft", effects: [], later: true },
    };
    assert.equal(
      applied(applyResponse(request, response, deps))["decision"],
      "allow",
    );
  });
});

describe("unsupported events", () => {
  test("an event type outside the nine boundaries is unsupported, not guessed", () => {
    const payload = {
      type: "turn.start",
      turn: { id: "turn-1" },
      trigger: "user",
      items: [],
    };
    const request = b.request(
      "t-1",
      payload,
      b.capabilities(["message"]),
      NO_STATE,
    );
    assert.equal(
      applyResponse(request, b.success("t-1", []), deps).status,
      "unsupported",
    );
  });
});

describe("tool.before", () => {
  const input = { q: "x", options: { deep: true, limit: 3 }, keep: "yes" };
  const tool = (effects: Json, state?: JsonObject | null) =>
    run(b.toolBefore(input), toolCaps, effects, state);
  const cached = { permission: "none", candidate: { value: { cached: 1 } } };
  test("merge is shallow and null is a literal value", () => {
    const actual = applied(
      tool([b.modify("input", "merge", { options: { limit: 1 }, keep: null })]),
    );
    assert.deepEqual(actual["input"], {
      q: "x",
      options: { limit: 1 },
      keep: null,
    });
    assert.deepEqual(actual["effective"], {
      input: { q: "x", options: { limit: 1 }, keep: null },
    });
    assert.equal(actual["executed"], true);
  });
  test("replace removes omitted keys; modifications chain in order", () => {
    const effects = [
      b.modify("input", "replace", { q: "y" }),
      b.modify("input", "merge", { page: 2 }),
    ];
    assert.deepEqual(applied(tool(effects))["input"], { q: "y", page: 2 });
  });
  test("an operation whose capability flag is false is rejected", () => {
    const caps = b.capabilities(["modify", "message"], {
      modify: b.modifyCaps("input", true, false),
    });
    rejected(
      run(b.toolBefore(input), caps, [
        { type: "message", text: "m" },
        b.modify("input", "merge", {}),
      ]),
    );
  });
  test("a target of another boundary is rejected even when advertised", () => {
    const caps = b.capabilities(["modify"], {
      modify: { ...b.modifyCaps("input"), ...b.modifyCaps("output") },
    });
    rejected(
      runOverAdvertised(b.toolBefore(input), caps, [
        b.modify("output", "merge", []),
      ]),
    );
  });
  test("a reordered but equal input keeps the incoming candidate", () => {
    const reordered = {
      keep: "yes",
      options: { limit: 3, deep: true },
      q: "x",
    };
    const actual = applied(
      tool([b.modify("input", "replace", reordered)], cached),
    );
    assert.deepEqual(actual["result"], { cached: 1 });
    assert.equal(actual["executed"], false);
  });
  test("a changed input invalidates the incoming candidate", () => {
    const actual = applied(
      tool([b.modify("input", "merge", { q: "z" })], cached),
    );
    assert.equal("result" in actual, false);
    assert.equal(actual["executed"], true);
  });
  test("a return binds after the response's modifications; the later return wins", () => {
    const effects = [
      { type: "return", value: 1 },
      b.modify("input", "merge", { q: "z" }),
      { type: "return", value: { final: true } },
    ];
    assert.deepEqual(applied(tool(effects))["result"], { final: true });
  });
  test("deny > ask > allow, and messages publish under deny", () => {
    const actual = applied(
      tool([
        { type: "allow" },
        { type: "message", text: "a" },
        { type: "deny", reason: "no" },
        { type: "ask" },
      ]),
    );
    assert.equal(actual["decision"], "deny");
    assert.equal(actual["executed"], false);
    assert.deepEqual(actual["messages"], ["a"]);
  });
  test("an incoming ask survives an allow", () => {
    const actual = applied(
      tool([{ type: "allow" }], { permission: "ask", candidate: null }),
    );
    assert.equal(actual["decision"], "ask");
  });
  test("omitted state means permission none, resolved to allow", () => {
    assert.equal(applied(tool([], null))["decision"], "allow");
  });
});

describe("host rule: the task tool needs a positive integer task", () => {
  const taskTool = b.toolBefore({ task: 1 }, "task");
  const merge = (task: Json) => [
    { type: "message", text: "staged" },
    b.modify("input", "merge", { task }),
  ];
  for (const bad of [true, 1.5, 0, -1, "1", null]) {
    test(`rejects task ${JSON.stringify(bad)}`, () =>
      rejected(run(taskTool, toolCaps, merge(bad))));
  }
  test("rejects a staged input without task", () => {
    rejected(
      run(taskTool, toolCaps, [b.modify("input", "replace", { other: 1 })]),
    );
  });
  test("accepts a positive integer, also when written 2.0", () => {
    const response = `{"jsonrpc":"2.0","id":"t-1","result":{"protocolVersion":"draft","effects":[{"type":"modify","target":"input","operation":"merge","value":{"task":2.0}}]}}`;
    const request = b.request("t-1", taskTool, toolCaps, NO_STATE);
    assert.deepEqual(
      applied(applyResponse(request, JSON.parse(response) as Json, deps))[
        "input"
      ],
      { task: 2 },
    );
  });
  test("does not apply to other tools", () => {
    assert.equal(
      applied(run(b.toolBefore({ task: 1 }), toolCaps, merge(0)))["decision"],
      "allow",
    );
  });
});

describe("tool.after (output: message list, no gated operation)", () => {
  const caps = b.capabilities(["modify", "message", "flow"], {
    modify: b.modifyCaps("output"),
    flow: { operations: ["stop"] },
  });
  const items = [b.say("m1", "tool", "result")];
  const output = (operation: string, value: Json) => [
    b.modify("output", operation, value),
  ];
  test("merge appends and keeps duplicates", () => {
    const actual = applied(
      run(b.toolAfter(items), caps, output("merge", items)),
    );
    assert.deepEqual(actual["effective"], { output: [...items, ...items] });
    assert.equal(actual["executed"], false);
    assert.equal(actual["decision"], "allow");
    assert.equal("input" in actual, false);
  });
  for (const [name, value] of [
    ["an object", { id: "m" }],
    ["a bare part list", [b.text("p", "x")]],
    ["a string", "text"],
  ] as [string, Json][]) {
    test(`rejects ${name}`, () =>
      rejected(run(b.toolAfter(items), caps, output("replace", value))));
  }
  test("rejects whole-list replace over withheld content, allows merge", () => {
    const withheld = [b.message("m1", "tool", b.metadataPart("p1"))];
    const gap = [b.message("m1", "tool", b.gapPart("p1"))];
    for (const incomplete of [withheld, gap]) {
      rejected(run(b.toolAfter(incomplete), caps, output("replace", items)));
    }
    applied(run(b.toolAfter(withheld), caps, output("merge", items)));
  });
  test("a return is not allowed here", () => {
    const returning = b.capabilities(["modify", "return"], {
      modify: b.modifyCaps("output"),
    });
    rejected(
      runOverAdvertised(b.toolAfter(items), returning, [
        { type: "return", value: items },
      ]),
    );
  });
  test("flow stop is reported", () => {
    const stop = [{ type: "flow", operation: "stop", reason: "enough" }];
    assert.equal(applied(run(b.toolAfter(items), caps, stop))["flow"], "stop");
  });
});

describe("turn.finish.before (flow)", () => {
  const caps = (remaining: number) =>
    b.capabilities(["flow", "message"], {
      flow: {
        operations: ["stop", "continue"],
        remainingContinuations: remaining,
        continuationCount: 0,
      },
    });
  const items = [b.say("m1", "assistant", "done")];
  const finish = (remaining: number, effects: Json, state?: JsonObject) =>
    run(b.turnFinish(items), caps(remaining), effects, state);
  test("several continues accumulate instructions and consume one allowance", () => {
    const effects = [
      { type: "flow", operation: "continue", instruction: "a" },
      { type: "flow", operation: "continue" },
      { type: "flow", operation: "continue", instruction: "b" },
    ];
    const actual = applied(finish(3, effects));
    assert.equal(actual["flow"], "continue");
    assert.deepEqual(actual["continuationInstructions"], ["a", "b"]);
    assert.equal(actual["continuationRemaining"], 2);
    assert.deepEqual(actual["effective"], { response: items });
  });
  test("stop wins over continue and keeps the allowance", () => {
    const effects = [
      { type: "flow", operation: "stop", reason: "r" },
      { type: "flow", operation: "continue", instruction: "a" },
    ];
    const actual = applied(finish(1, effects));
    assert.equal(actual["flow"], "stop");
    assert.equal(actual["continuationRemaining"], 1);
  });
  test("an exhausted allowance rejects the whole response", () => {
    rejected(
      finish(0, [
        { type: "message", text: "m" },
        { type: "flow", operation: "continue" },
      ]),
    );
  });
  test("an incoming stop is a stop; no flow effect leaves no flow key otherwise", () => {
    assert.equal(
      applied(finish(1, [], { ...NO_STATE, flow: "stop" }))["flow"],
      "stop",
    );
    const actual = applied(finish(1, []));
    assert.equal("flow" in actual, false);
    assert.deepEqual(actual["continuationInstructions"], []);
    assert.equal(actual["continuationRemaining"], 1);
  });
});

describe("model.request.before (request; return: message list)", () => {
  const caps = b.capabilities(["deny", "modify", "return", "message"], {
    modify: b.modifyCaps("request"),
  });
  const items = [b.say("u1", "user", "hi")];
  const model = (effects: Json, state?: JsonObject) =>
    run(b.modelRequest(items), caps, effects, state);
  test("a returned message list is the result and the request does not execute", () => {
    const reply = [b.say("a1", "assistant", "cached")];
    const actual = applied(model([{ type: "return", value: reply }]));
    assert.deepEqual(actual["result"], reply);
    assert.equal(actual["executed"], false);
  });
  test("a return of the wrong shape is rejected", () => {
    for (const value of [{ text: "cached" }, [b.text("p", "x")]]) {
      rejected(model([{ type: "return", value }]));
    }
  });
  test("deny blocks the request", () => {
    const actual = applied(model([{ type: "deny", reason: "budget" }]));
    assert.equal(actual["decision"], "deny");
    assert.equal(actual["executed"], false);
  });
  test("an appended message invalidates the incoming candidate", () => {
    const state = {
      permission: "none",
      candidate: { value: [b.say("a1", "assistant", "old")] },
    };
    const actual = applied(model([b.modify("request", "merge", items)], state));
    assert.equal("result" in actual, false);
    assert.equal(actual["executed"], true);
  });
});

describe("context.compact.before (instructions: text parts; return: summary)", () => {
  const caps = b.capabilities(["modify", "return"], {
    modify: b.modifyCaps("instructions"),
  });
  const instructions = (value: Json) => [
    b.modify("instructions", "merge", value),
  ];
  test("absent instructions mean an empty list", () => {
    const actual = applied(
      run(b.compactBefore(), caps, instructions([b.text("i1", "keep")])),
    );
    assert.deepEqual(actual["effective"], {
      instructions: [b.text("i1", "keep")],
    });
    assert.equal(actual["executed"], true);
  });
  test("attachments and messages are not text parts", () => {
    for (const value of [[b.attachment("a1")], [b.say("m", "user", "x")]]) {
      rejected(run(b.compactBefore([]), caps, instructions(value)));
    }
  });
  test("a text-part summary is a supplied result; a message list is not", () => {
    const summary = (value: Json) =>
      run(b.compactBefore(), caps, [{ type: "return", value }]);
    assert.deepEqual(applied(summary([b.text("s1", "sum")]))["result"], [
      b.text("s1", "sum"),
    ]);
    rejected(summary([b.say("m", "assistant", "sum")]));
  });
});

describe("context.compact.after (summary)", () => {
  const caps = b.capabilities(["modify"], { modify: b.modifyCaps("summary") });
  const replace = [b.modify("summary", "replace", [b.text("s2", "new")])];
  test("replace substitutes the summary; nothing is gated", () => {
    const actual = applied(
      run(b.compactAfter([b.text("s1", "old")]), caps, replace),
    );
    assert.deepEqual(actual["effective"], { summary: [b.text("s2", "new")] });
    assert.equal(actual["executed"], false);
  });
  test("replace over an omitted part is rejected", () => {
    rejected(run(b.compactAfter([b.part("s1", "omit")]), caps, replace));
  });
});

describe("user.message.outbound (content: message list)", () => {
  const caps = b.capabilities(["deny", "modify"], {
    modify: b.modifyCaps("content"),
  });
  const messages = [b.say("o1", "assistant", "hello")];
  test("a list edit applies and delivery proceeds", () => {
    const value = [b.say("o2", "assistant", "hi")];
    const actual = applied(
      run(b.outbound(messages), caps, [b.modify("content", "replace", value)]),
    );
    assert.deepEqual(actual["effective"], { content: value });
    assert.equal(actual["executed"], true);
  });
  test("an object value is rejected", () => {
    rejected(
      run(b.outbound(messages), caps, [
        b.modify("content", "merge", { name: "x" }),
      ]),
    );
  });
});

describe("user.elicitation.result (content: the flat answer object)", () => {
  const caps = b.capabilities(["modify", "message"], {
    modify: b.modifyCaps("content"),
  });
  const answer = { action: "accept", content: { name: "old", keep: true } };
  const accepted = b.elicitationResult("form", "accept", b.answerPart(answer));
  const declined = b.elicitationResult(
    "form",
    "decline",
    b.answerPart({ action: "decline" }),
  );
  const edit = (operation: string, value: Json) => [
    b.modify("content", operation, value),
  ];
  test("merge is shallow over the answer fields", () => {
    const actual = applied(
      run(accepted, caps, edit("merge", { name: "new", tags: ["a"] })),
    );
    assert.deepEqual(actual["effective"], {
      content: { name: "new", keep: true, tags: ["a"] },
    });
    assert.equal(actual["executed"], false);
  });
  test("replace substitutes the whole answer", () => {
    const actual = applied(run(accepted, caps, edit("replace", { n: 1 })));
    assert.deepEqual(actual["effective"], { content: { n: 1 } });
  });
  test("nested values and lists are rejected", () => {
    for (const value of [{ nested: { a: 1 } }, [1]]) {
      rejected(run(accepted, caps, edit("merge", value)));
    }
  });
  test("edits need an accepted form result with a body", () => {
    const locked = [
      declined,
      b.elicitationResult("url", "accept", b.answerPart({ action: "accept" })),
      b.elicitationResult("form", "accept", b.answerPart(answer, "metadata")),
    ];
    for (const payload of locked) {
      rejected(run(payload, caps, edit("merge", { a: "b" })));
    }
  });
  test("a message alone is accepted at a locked result", () => {
    applied(run(declined, caps, [{ type: "message", text: "ok" }]));
  });
});

describe("workspace.change.before (workspace)", () => {
  const caps = b.capabilities(["deny", "modify"], {
    modify: b.modifyCaps("workspace"),
  });
  const change = { cwd: "/a", workspaceRoots: ["/a"] };
  const workspace = (effects: Json) =>
    run(b.workspaceBefore(change), caps, effects);
  const edit = (operation: string, value: Json) =>
    workspace([b.modify("workspace", operation, value)]);
  test("merge overwrites keys; replace removes the omitted ones", () => {
    assert.deepEqual(applied(edit("merge", { cwd: "/b" }))["effective"], {
      workspace: { cwd: "/b", workspaceRoots: ["/a"] },
    });
    const actual = applied(edit("replace", { cwd: "/c" }));
    assert.deepEqual(actual["effective"], { workspace: { cwd: "/c" } });
    assert.equal(actual["executed"], true);
  });
  test("other keys and empty changes are rejected", () => {
    rejected(edit("merge", { settings: {} }));
    rejected(edit("replace", {}));
    rejected(edit("replace", { cwd: 3 }));
  });
  test("deny blocks the change", () => {
    assert.equal(
      applied(workspace([{ type: "deny", reason: "no" }]))["executed"],
      false,
    );
  });
});

describe("inject", () => {
  const caps = b.capabilities(["inject"], {
    inject: { context: { append: true, deliverAt: ["next_turn"] } },
  });
  const value = [b.say("c1", "user", "ctx")];
  const inject = (deliverAt: string) => ({
    type: "inject",
    target: "context",
    operation: "append",
    deliverAt,
    value,
  });
  test("accepted injections are published whole, in order", () => {
    assert.deepEqual(
      applied(run(b.toolBefore({}), caps, [inject("next_turn")]))["injections"],
      [inject("next_turn")],
    );
  });
  test("an unadvertised delivery time rejects the response", () => {
    rejected(run(b.toolBefore({}), caps, [inject("next_turn"), inject("now")]));
  });
});

// ---------------------------------------------------------------------------
// The rules settled in docs/scenarios.md: the final staged value judges both
// the incoming candidate and the incoming grant; the `permission` key; slot
// values checked against the canonical definitions; the incoming continue.

describe("final staged value: incoming candidate and incoming allow", () => {
  const input = { q: "x", n: 1 };
  const tool = (effects: Json, state: JsonObject) =>
    run(b.toolBefore(input), toolCaps, effects, state);
  const restore = [
    b.modify("input", "merge", { q: "changed" }),
    b.modify("input", "replace", { n: 1, q: "x" }),
  ];
  const change = [b.modify("input", "merge", { q: "changed" })];
  const granted = { permission: "allow", candidate: null };

  test("tool.before: modify-then-restore keeps the incoming candidate", () => {
    const state = { permission: "none", candidate: { value: { cached: 1 } } };
    const actual = applied(tool(restore, state));
    assert.deepEqual(actual["result"], { cached: 1 });
    assert.equal(actual["executed"], false);
  });
  test("model.request.before: modify-then-restore keeps the incoming candidate", () => {
    const items = [b.say("u1", "user", "hi")];
    const caps = b.capabilities(["modify", "return"], {
      modify: b.modifyCaps("request"),
    });
    const cached = [b.say("a1", "assistant", "cached")];
    const actual = applied(
      run(
        b.modelRequest(items),
        caps,
        [
          b.modify("request", "merge", [b.say("u2", "user", "more")]),
          b.modify("request", "replace", items),
        ],
        { permission: "none", candidate: { value: cached } },
      ),
    );
    assert.deepEqual(actual["result"], cached);
    assert.equal(actual["executed"], false);
    assert.equal(actual["permission"], "none");
  });
  test("a restored input keeps the incoming allow", () => {
    const actual = applied(tool(restore, granted));
    assert.equal(actual["permission"], "allow");
    assert.equal(actual["decision"], "allow");
    assert.equal(actual["executed"], true);
  });
  test("a reordered but deep-equal input keeps the incoming allow", () => {
    const actual = applied(
      tool([b.modify("input", "replace", { n: 1, q: "x" })], granted),
    );
    assert.equal(actual["permission"], "allow");
  });
  test("a changed input drops the incoming allow to none; decision stays allow", () => {
    const actual = applied(tool(change, granted));
    assert.equal(actual["permission"], "none");
    assert.equal(actual["decision"], "allow");
    assert.equal(actual["executed"], true);
  });
  test("a boolean is not a number: true in place of 1 is a change", () => {
    const actual = applied(
      tool([b.modify("input", "merge", { n: true })], granted),
    );
    assert.equal(actual["permission"], "none");
  });
  test("the response's own allow is dropped by a change too", () => {
    // An allow is for the original value (upstream observation-chain-continue).
    const actual = applied(tool([...change, { type: "allow" }], granted));
    assert.equal(actual["permission"], "none");
    const kept = applied(tool([{ type: "allow" }], granted));
    assert.equal(kept["permission"], "allow");
  });
  test("incoming ask and deny are never invalidated", () => {
    for (const incoming of ["ask", "deny"]) {
      const actual = applied(
        tool(change, { permission: incoming, candidate: null }),
      );
      assert.equal(actual["permission"], incoming);
      assert.equal(actual["decision"], incoming);
      assert.equal(actual["executed"], false);
    }
  });
  test("a changed value drops the incoming allow at boundaries without return", () => {
    const outboundCaps = b.capabilities(["modify"], {
      modify: b.modifyCaps("content"),
    });
    const messages = [b.say("o1", "assistant", "hello")];
    const outbound = (value: Json) =>
      applied(
        run(
          b.outbound(messages),
          outboundCaps,
          [b.modify("content", "replace", value)],
          granted,
        ),
      )["permission"];
    assert.equal(outbound([b.say("o2", "assistant", "hi")]), "none");
    assert.equal(outbound(messages), "allow");
    const workspaceCaps = b.capabilities(["modify"], {
      modify: b.modifyCaps("workspace"),
    });
    const actual = applied(
      run(
        b.workspaceBefore({ cwd: "/a" }),
        workspaceCaps,
        [b.modify("workspace", "merge", { cwd: "/b" })],
        granted,
      ),
    );
    assert.equal(actual["permission"], "none");
    assert.equal(actual["decision"], "allow");
  });
});

describe("the permission key", () => {
  test("is reported before none resolves to allow", () => {
    const actual = applied(run(b.toolBefore({}), toolCaps, []));
    assert.equal(actual["permission"], "none");
    assert.equal(actual["decision"], "allow");
    assert.equal(
      applied(run(b.toolBefore({}), toolCaps, [], null))["permission"],
      "none",
    );
  });
  test("is the strongest of the incoming permission and the response's effects", () => {
    const actual = applied(
      run(b.toolBefore({}), toolCaps, [{ type: "ask" }, { type: "allow" }], {
        permission: "allow",
        candidate: null,
      }),
    );
    assert.equal(actual["permission"], "ask");
    assert.equal(actual["decision"], "ask");
  });
  const items = [b.say("m1", "assistant", "x")];
  const present: [string, JsonObject, JsonObject][] = [
    ["tool.before", b.toolBefore({}), b.capabilities(["deny"])],
    ["model.request.before", b.modelRequest(items), b.capabilities(["deny"])],
    ["context.compact.before", b.compactBefore(), b.capabilities(["deny"])],
    ["user.message.outbound", b.outbound(items), b.capabilities(["deny"])],
    [
      "workspace.change.before",
      b.workspaceBefore({ cwd: "/a" }),
      b.capabilities(["deny"]),
    ],
  ];
  for (const [name, payload, caps] of present) {
    test(`is present at ${name}`, () => {
      const denied = applied(
        run(payload, caps, [{ type: "deny", reason: "r" }]),
      );
      assert.equal(denied["permission"], "deny");
      assert.equal(applied(run(payload, caps, []))["permission"], "none");
    });
  }
  const absent: [string, JsonObject][] = [
    ["tool.after", b.toolAfter(items)],
    ["turn.finish.before", b.turnFinish(items)],
    ["context.compact.after", b.compactAfter([b.text("s1", "sum")])],
    [
      "user.elicitation.result",
      b.elicitationResult(
        "form",
        "accept",
        b.answerPart({ action: "accept", content: { a: "b" } }),
      ),
    ],
  ];
  for (const [name, payload] of absent) {
    test(`is absent at ${name}, also with an incoming allow`, () => {
      const actual = applied(
        run(payload, b.capabilities(["message"]), [], {
          permission: "allow",
          candidate: null,
        }),
      );
      assert.equal("permission" in actual, false);
      assert.equal(actual["decision"], "allow");
    });
  }
});

describe("slot values are checked against the canonical definitions", () => {
  const emptyCategory = b.part("p1", "body", { text: "x", category: "" });
  const jsonMediaType = b.part(
    "a1",
    "body",
    { body: { ref: "blob-1" } },
    "attachment",
    "application/json; charset=utf-8",
  );
  const emptyGapReason = b.part("g1", "body", { gap: { reason: "" } });

  // The response schema already checks some modify values by target; the
  // engine must hold on its own, so these also run with that check switched off.
  const slotOnly: EngineDeps = {
    validateResponse: () => null,
    content: schemas.content,
  };
  const bothWays = (
    payload: JsonObject,
    caps: JsonObject,
    effects: Json,
  ): void => {
    const request = b.request("t-1", payload, caps, NO_STATE);
    assert.equal(schemas.request(request), null, "test request is valid");
    const response = b.success("t-1", effects);
    rejected(applyResponse(request, response, deps));
    rejected(applyResponse(request, response, slotOnly));
  };
  test("workspace: an empty cwd or an empty root is rejected, merged or replaced", () => {
    const caps = b.capabilities(["message", "modify"], {
      modify: b.modifyCaps("workspace"),
    });
    const note = { type: "message", text: "staged" };
    for (const [operation, value] of [
      ["merge", { cwd: "" }],
      ["replace", { cwd: "" }],
      ["merge", { workspaceRoots: [""] }],
      ["merge", { cwd: "/b", other: 1 }],
    ] as [string, Json][]) {
      bothWays(b.workspaceBefore({ cwd: "/a", workspaceRoots: ["/a"] }), caps, [
        note,
        b.modify("workspace", operation, value),
      ]);
    }
  });
  test("message and text-part lists: the engine's own check, without the response schema", () => {
    const output = b.capabilities(["modify"], {
      modify: b.modifyCaps("output"),
    });
    for (const bad of [emptyCategory, jsonMediaType, emptyGapReason]) {
      bothWays(b.toolAfter([b.say("m1", "tool", "r")]), output, [
        b.modify("output", "merge", [b.message("m2", "tool", bad)]),
      ]);
    }
    const instructions = b.capabilities(["modify"], {
      modify: b.modifyCaps("instructions"),
    });
    bothWays(b.compactBefore(), instructions, [
      b.modify("instructions", "merge", [emptyCategory]),
    ]);
  });
  test("outbound: a user message in the content is rejected", () => {
    const caps = b.capabilities(["message", "modify"], {
      modify: b.modifyCaps("content"),
    });
    const messages = [b.say("o1", "assistant", "hello")];
    for (const operation of ["merge", "replace"]) {
      rejected(
        run(b.outbound(messages), caps, [
          { type: "message", text: "staged" },
          b.modify("content", operation, [b.say("u1", "user", "sneaky")]),
        ]),
      );
    }
  });
  test("model.request.before: a return whose part has an empty category is rejected", () => {
    const caps = b.capabilities(["message", "return"]);
    rejected(
      run(b.modelRequest([b.say("u1", "user", "hi")]), caps, [
        { type: "message", text: "staged" },
        {
          type: "return",
          value: [b.message("a1", "assistant", emptyCategory)],
        },
      ]),
    );
  });
  test("message lists: an empty category, a JSON media type with parameters or an empty gap reason is rejected", () => {
    const caps = b.capabilities(["modify"], { modify: b.modifyCaps("output") });
    const items = [b.say("m1", "tool", "result")];
    for (const bad of [emptyCategory, jsonMediaType, emptyGapReason]) {
      rejected(
        run(b.toolAfter(items), caps, [
          b.modify("output", "merge", [b.message("m2", "tool", bad)]),
        ]),
      );
    }
  });
  test("attachment media types: any non-empty string but a text or JSON type, parameters included", () => {
    const caps = b.capabilities(["modify"], { modify: b.modifyCaps("output") });
    const items = [b.say("m1", "tool", "result")];
    const withType = (mediaType: string): JsonObject =>
      b.part(
        "a1",
        "body",
        { body: { ref: "blob-1" } },
        "attachment",
        mediaType,
      );
    for (const good of ["png", "image/png; q=1", "IMAGE/PNG"]) {
      const added = b.message("m2", "tool", withType(good));
      const actual = applied(
        run(b.toolAfter(items), caps, [b.modify("output", "merge", [added])]),
      );
      assert.deepEqual(actual["effective"], { output: [...items, added] });
    }
    for (const bad of [
      "",
      "Text/HTML",
      "application/JSON",
      "application/ld+json;x=1",
      "image/x+json",
    ]) {
      rejected(
        run(b.toolAfter(items), caps, [
          b.modify("output", "merge", [b.message("m2", "tool", withType(bad))]),
        ]),
      );
    }
  });
  test("text-part lists: an empty category is rejected in instructions, summary and a compaction return", () => {
    const before = b.capabilities(["modify", "return"], {
      modify: b.modifyCaps("instructions"),
    });
    rejected(
      run(b.compactBefore(), before, [
        b.modify("instructions", "merge", [emptyCategory]),
      ]),
    );
    rejected(
      run(b.compactBefore(), before, [
        { type: "return", value: [emptyCategory] },
      ]),
    );
    const after = b.capabilities(["modify"], {
      modify: b.modifyCaps("summary"),
    });
    rejected(
      run(b.compactAfter([b.text("s1", "old")]), after, [
        b.modify("summary", "replace", [emptyCategory]),
      ]),
    );
  });
  test("elicitation: the staged answer is checked, not only the supplied value", () => {
    const caps = b.capabilities(["modify"], {
      modify: b.modifyCaps("content"),
    });
    const nested = b.elicitationResult(
      "form",
      "accept",
      b.answerPart({ action: "accept", content: { deep: { a: 1 } } }),
    );
    rejected(run(nested, caps, [b.modify("content", "merge", { a: "b" })]));
    const actual = applied(
      run(nested, caps, [b.modify("content", "replace", { a: ["x", "y"] })]),
    );
    assert.deepEqual(actual["effective"], { content: { a: ["x", "y"] } });
  });
  test("tool.before: the input must be an object; a return may be any JSON", () => {
    rejected(
      run(b.toolBefore({ q: 1 }), toolCaps, [
        b.modify("input", "replace", [1]),
      ]),
    );
    for (const value of [null, "", 0, false, [], { deep: { x: [] } }]) {
      assert.deepEqual(
        applied(run(b.toolBefore({}), toolCaps, [{ type: "return", value }]))[
          "result"
        ],
        value,
      );
    }
  });
});

describe("an incoming continue", () => {
  const finishCaps = (remaining: number) =>
    b.capabilities(["flow"], {
      flow: {
        operations: ["stop", "continue"],
        remainingContinuations: remaining,
        continuationCount: 0,
      },
    });
  const items = [b.say("m1", "assistant", "done")];
  const continued = { permission: "none", candidate: null, flow: "continue" };
  const finish = (
    remaining: number,
    effects: Json,
    state: JsonObject = continued,
  ) => applied(run(b.turnFinish(items), finishCaps(remaining), effects, state));

  test("is a continue outcome where continue is advertised; one allowance", () => {
    const actual = finish(2, []);
    assert.equal(actual["flow"], "continue");
    assert.equal(actual["continuationRemaining"], 1);
    assert.deepEqual(actual["continuationInstructions"], []);
  });
  test("shares the one allowance with the response's continues", () => {
    const actual = finish(2, [
      { type: "flow", operation: "continue", instruction: "again" },
    ]);
    assert.equal(actual["flow"], "continue");
    assert.equal(actual["continuationRemaining"], 1);
    assert.deepEqual(actual["continuationInstructions"], ["again"]);
  });
  test("a continue effect is still accepted with one allowance left", () => {
    const actual = finish(1, [{ type: "flow", operation: "continue" }]);
    assert.equal(actual["continuationRemaining"], 0);
  });
  test("yields to a stop, which keeps the allowance", () => {
    const actual = finish(2, [
      { type: "flow", operation: "stop", reason: "r" },
    ]);
    assert.equal(actual["flow"], "stop");
    assert.equal(actual["continuationRemaining"], 2);
  });
  test("incoming instructions and injections are not reported", () => {
    const actual = finish(2, [], {
      ...continued,
      instructions: ["from earlier"],
      injections: [{ any: 1 }],
    });
    assert.deepEqual(actual["continuationInstructions"], []);
    assert.equal("injections" in actual, false);
  });
  test("is ignored at tool.before, where continue cannot be advertised", () => {
    const actual = applied(run(b.toolBefore({}), toolCaps, [], continued));
    assert.equal("flow" in actual, false);
    assert.equal("continuationRemaining" in actual, false);
    assert.equal(actual["executed"], true);
  });
  test("is ignored where only stop is advertised", () => {
    const caps = b.capabilities(["flow"], { flow: { operations: ["stop"] } });
    const actual = applied(
      run(b.toolAfter([b.say("t1", "tool", "r")]), caps, [], continued),
    );
    assert.equal("flow" in actual, false);
  });
  test("with no allowance left reports remaining - 1, unclamped (deterministic reading of an undefined point)", () => {
    assert.equal(finish(0, [])["continuationRemaining"], -1);
  });
});

describe("the state a serial chain carries to the next interceptor", () => {
  const caps = b.capabilities(
    ["allow", "ask", "deny", "modify", "return", "flow"],
    {
      modify: b.modifyCaps("input"),
      flow: { operations: ["stop"] },
    },
  );
  const carried = (effects: Json, state: JsonObject | null = NO_STATE) => {
    const outcome = run(b.toolBefore({ q: 1 }), caps, effects, state);
    assert.equal(outcome.status, "applied");
    return (outcome as { state: JsonObject }).state;
  };

  test("an allow for a changed value becomes none; ask and deny stay", () => {
    assert.deepEqual(
      carried([b.modify("input", "merge", { q: 2 }), { type: "allow" }]),
      NO_STATE,
    );
    assert.deepEqual(carried([{ type: "allow" }]), {
      permission: "allow",
      candidate: null,
    });
    assert.deepEqual(carried([], { permission: "ask", candidate: null }), {
      permission: "ask",
      candidate: null,
    });
    assert.deepEqual(
      carried([{ type: "deny", reason: "no" }, { type: "allow" }]),
      {
        permission: "deny",
        candidate: null,
      },
    );
  });

  test("the surviving candidate and the flow outcome", () => {
    assert.deepEqual(carried([{ type: "return", value: 5 }]), {
      permission: "none",
      candidate: { value: 5 },
    });
    assert.deepEqual(
      carried([{ type: "flow", operation: "stop", reason: "x" }]),
      {
        permission: "none",
        candidate: null,
        flow: "stop",
      },
    );
    // An incoming candidate does not survive a changed value.
    assert.deepEqual(
      carried([b.modify("input", "merge", { q: 3 })], {
        permission: "none",
        candidate: { value: 1 },
      }),
      NO_STATE,
    );
  });
});

describe("the host rule is the host's: a host may bring its own", () => {
  test("without the task rule, a task input without `task` is accepted", () => {
    const request = b.request(
      "t-1",
      b.toolBefore({ value: "x" }, "task"),
      b.capabilities(["allow"]),
      NO_STATE,
    );
    assert.equal(
      applyResponse(request, b.success("t-1", [{ type: "allow" }]), deps)
        .status,
      "rejected",
    );
    const own = applyResponse(request, b.success("t-1", [{ type: "allow" }]), {
      ...deps,
      hostRule: () => null,
    });
    assert.equal(own.status, "applied");
  });
});
