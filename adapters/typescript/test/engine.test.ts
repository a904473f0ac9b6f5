// The composition engine over every scenario file present (answers read here,
// in tests only), then focused tests of each rule at each boundary.

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { basename } from "node:path";
import { applyResponse, type EngineDeps, type Outcome } from "../engine.js";
import type { Json, JsonObject } from "../json.js";
import { loadSchemas } from "../schemas.js";
import * as b from "./builders.js";
import { mismatch, readAnswered, scenarioFiles } from "./expectations.js";

const schemas = loadSchemas();
const deps: EngineDeps = {
  validateResponse: schemas.response,
  content: schemas.content,
};

function actualOf(outcome: Outcome): JsonObject {
  if (outcome.status === "applied") return outcome.actual;
  if (outcome.status === "rejected") return { rejected: true };
  return { unsupported: outcome.reason };
}

for (const file of scenarioFiles()) {
  describe(`scenario file ${basename(file)}`, () => {
    for (const scenario of readAnswered(file)) {
      test(scenario.id, () => {
        assert.equal(
          schemas.request(scenario.request),
          null,
          "the scenario request is schema-valid",
        );
        const outcome = applyResponse(
          scenario.request,
          scenario.response,
          deps,
        );
        const reason =
          outcome.status === "applied" ? "" : ` (${outcome.reason})`;
        assert.equal(
          mismatch(scenario, actualOf(outcome)),
          null,
          `derived ${JSON.stringify(actualOf(outcome))}${reason}`,
        );
      });
    }
  });
}

/** Applies `effects` to a request built from `payload`; asserts the request itself is valid. */
function run(
  payload: JsonObject,
  caps: JsonObject,
  effects: Json,
  state?: JsonObject,
): Outcome {
  const request = b.request("t-1", payload, caps, state);
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

const NO_STATE = { permission: "none", candidate: null };
const toolCaps = b.capabilities(
  ["deny", "allow", "ask", "modify", "message", "return"],
  { modify: b.modifyCaps("input") },
);

describe("envelope and correlation (rule 1, 2)", () => {
  const request = b.request("t-1", b.toolBefore({ q: 1 }), toolCaps, NO_STATE);
  const cases: [string, Json][] = [
    ["null response", null],
    ["array response", [b.success("t-1", [])]],
    [
      "wrong jsonrpc",
      {
        jsonrpc: "1.0",
        id: "t-1",
        result: { protocolVersion: "draft", effects: [] },
      },
    ],
    [
      "id of another type",
      {
        jsonrpc: "2.0",
        id: 1,
        result: { protocolVersion: "draft", effects: [] },
      },
    ],
    [
      "missing id",
      { jsonrpc: "2.0", result: { protocolVersion: "draft", effects: [] } },
    ],
    [
      "error beside result",
      { ...b.success("t-1", []), error: { code: -1, message: "x" } },
    ],
    [
      "error response",
      {
        jsonrpc: "2.0",
        id: "t-1",
        error: { code: -32002, message: "unsupported" },
      },
    ],
    ["result not an object", { jsonrpc: "2.0", id: "t-1", result: [] }],
    [
      "other protocol version",
      {
        jsonrpc: "2.0",
        id: "t-1",
        result: { protocolVersion: "0.1", effects: [] },
      },
    ],
    ["unknown effect type", b.success("t-1", [{ type: "com.example.custom" }])],
    [
      "modify with a path",
      b.success("t-1", [
        {
          type: "modify",
          target: "input",
          operation: "merge",
          value: {},
          path: "/q",
        },
      ]),
    ],
  ];
  for (const [name, response] of cases) {
    test(`rejects ${name}`, () =>
      rejected(applyResponse(request, response, deps)));
  }
  test("ignores unknown fields on the result envelope", () => {
    const response = {
      ...b.success("t-1", []),
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
  test("merge is shallow and null is a literal value", () => {
    const actual = applied(
      run(
        b.toolBefore(input),
        toolCaps,
        [
          {
            type: "modify",
            target: "input",
            operation: "merge",
            value: { options: { limit: 1 }, keep: null },
          },
        ],
        NO_STATE,
      ),
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
      {
        type: "modify",
        target: "input",
        operation: "replace",
        value: { q: "y" },
      },
      {
        type: "modify",
        target: "input",
        operation: "merge",
        value: { page: 2 },
      },
    ];
    assert.deepEqual(
      applied(run(b.toolBefore(input), toolCaps, effects, NO_STATE))["input"],
      { q: "y", page: 2 },
    );
  });
  test("an operation whose capability flag is false is rejected", () => {
    const caps = b.capabilities(["modify", "message"], {
      modify: b.modifyCaps("input", true, false),
    });
    rejected(
      run(
        b.toolBefore(input),
        caps,
        [
          { type: "message", text: "m" },
          { type: "modify", target: "input", operation: "merge", value: {} },
        ],
        NO_STATE,
      ),
    );
  });
  test("a target of another boundary is rejected even when advertised", () => {
    const caps = b.capabilities(["modify"], {
      modify: { ...b.modifyCaps("input"), ...b.modifyCaps("output") },
    });
    rejected(
      runOverAdvertised(b.toolBefore(input), caps, [
        { type: "modify", target: "output", operation: "merge", value: [] },
      ]),
    );
  });
  test("a reordered but equal input keeps the incoming candidate", () => {
    const state = { permission: "none", candidate: { value: { cached: 1 } } };
    const effects = [
      {
        type: "modify",
        target: "input",
        operation: "replace",
        value: { keep: "yes", options: { limit: 3, deep: true }, q: "x" },
      },
    ];
    const actual = applied(run(b.toolBefore(input), toolCaps, effects, state));
    assert.deepEqual(actual["result"], { cached: 1 });
    assert.equal(actual["executed"], false);
  });
  test("a changed input invalidates the incoming candidate", () => {
    const state = { permission: "none", candidate: { value: { cached: 1 } } };
    const actual = applied(
      run(
        b.toolBefore(input),
        toolCaps,
        [
          {
            type: "modify",
            target: "input",
            operation: "merge",
            value: { q: "z" },
          },
        ],
        state,
      ),
    );
    assert.equal("result" in actual, false);
    assert.equal(actual["executed"], true);
  });
  test("a return binds after the response's modifications; the later return wins", () => {
    const effects = [
      { type: "return", value: 1 },
      {
        type: "modify",
        target: "input",
        operation: "merge",
        value: { q: "z" },
      },
      { type: "return", value: { final: true } },
    ];
    assert.deepEqual(
      applied(run(b.toolBefore(input), toolCaps, effects, NO_STATE))["result"],
      { final: true },
    );
  });
  test("deny > ask > allow, and messages publish under deny", () => {
    const actual = applied(
      run(
        b.toolBefore(input),
        toolCaps,
        [
          { type: "allow" },
          { type: "message", text: "a" },
          { type: "deny", reason: "no" },
          { type: "ask" },
        ],
        NO_STATE,
      ),
    );
    assert.equal(actual["decision"], "deny");
    assert.equal(actual["executed"], false);
    assert.deepEqual(actual["messages"], ["a"]);
  });
  test("an incoming ask survives an allow", () => {
    const actual = applied(
      run(b.toolBefore(input), toolCaps, [{ type: "allow" }], {
        permission: "ask",
        candidate: null,
      }),
    );
    assert.equal(actual["decision"], "ask");
  });
  test("omitted state means permission none, resolved to allow", () => {
    assert.equal(
      applied(run(b.toolBefore(input), toolCaps, []))["decision"],
      "allow",
    );
  });
});

describe("host rule: the task tool needs a positive integer task", () => {
  const merge = (task: Json) => [
    { type: "message", text: "staged" },
    { type: "modify", target: "input", operation: "merge", value: { task } },
  ];
  for (const bad of [true, 1.5, 0, -1, "1", null]) {
    test(`rejects task ${JSON.stringify(bad)}`, () =>
      rejected(
        run(b.toolBefore({ task: 1 }, "task"), toolCaps, merge(bad), NO_STATE),
      ));
  }
  test("rejects a staged input without task", () => {
    rejected(
      run(
        b.toolBefore({ task: 1 }, "task"),
        toolCaps,
        [
          {
            type: "modify",
            target: "input",
            operation: "replace",
            value: { other: 1 },
          },
        ],
        NO_STATE,
      ),
    );
  });
  test("accepts a positive integer, also when written 2.0", () => {
    const response = `{"jsonrpc":"2.0","id":"t-1","result":{"protocolVersion":"draft","effects":[{"type":"modify","target":"input","operation":"merge","value":{"task":2.0}}]}}`;
    const request = b.request(
      "t-1",
      b.toolBefore({ task: 1 }, "task"),
      toolCaps,
      NO_STATE,
    );
    assert.deepEqual(
      applied(applyResponse(request, JSON.parse(response) as Json, deps))[
        "input"
      ],
      { task: 2 },
    );
  });
  test("does not apply to other tools", () => {
    assert.equal(
      applied(run(b.toolBefore({ task: 1 }), toolCaps, merge(0), NO_STATE))[
        "decision"
      ],
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
  test("merge appends and keeps duplicates", () => {
    const actual = applied(
      run(
        b.toolAfter(items),
        caps,
        [
          {
            type: "modify",
            target: "output",
            operation: "merge",
            value: items,
          },
        ],
        NO_STATE,
      ),
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
      rejected(
        run(
          b.toolAfter(items),
          caps,
          [{ type: "modify", target: "output", operation: "replace", value }],
          NO_STATE,
        ),
      ));
  }
  test("rejects whole-list replace over withheld content, allows merge", () => {
    const withheld = [b.message("m1", "tool", b.metadataPart("p1"))];
    rejected(
      run(
        b.toolAfter(withheld),
        caps,
        [
          {
            type: "modify",
            target: "output",
            operation: "replace",
            value: items,
          },
        ],
        NO_STATE,
      ),
    );
    const gap = [b.message("m1", "tool", b.gapPart("p1"))];
    rejected(
      run(
        b.toolAfter(gap),
        caps,
        [
          {
            type: "modify",
            target: "output",
            operation: "replace",
            value: items,
          },
        ],
        NO_STATE,
      ),
    );
    applied(
      run(
        b.toolAfter(withheld),
        caps,
        [
          {
            type: "modify",
            target: "output",
            operation: "merge",
            value: items,
          },
        ],
        NO_STATE,
      ),
    );
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
    assert.equal(
      applied(
        run(
          b.toolAfter(items),
          caps,
          [{ type: "flow", operation: "stop", reason: "enough" }],
          NO_STATE,
        ),
      )["flow"],
      "stop",
    );
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
  test("several continues accumulate instructions and consume one allowance", () => {
    const effects = [
      { type: "flow", operation: "continue", instruction: "a" },
      { type: "flow", operation: "continue" },
      { type: "flow", operation: "continue", instruction: "b" },
    ];
    const actual = applied(
      run(b.turnFinish(items), caps(3), effects, NO_STATE),
    );
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
    const actual = applied(
      run(b.turnFinish(items), caps(1), effects, NO_STATE),
    );
    assert.equal(actual["flow"], "stop");
    assert.equal(actual["continuationRemaining"], 1);
  });
  test("an exhausted allowance rejects the whole response", () => {
    rejected(
      run(
        b.turnFinish(items),
        caps(0),
        [
          { type: "message", text: "m" },
          { type: "flow", operation: "continue" },
        ],
        NO_STATE,
      ),
    );
  });
  test("an incoming stop is a stop; no flow effect leaves no flow key otherwise", () => {
    assert.equal(
      applied(
        run(b.turnFinish(items), caps(1), [], { ...NO_STATE, flow: "stop" }),
      )["flow"],
      "stop",
    );
    const actual = applied(run(b.turnFinish(items), caps(1), [], NO_STATE));
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
  test("a returned message list is the result and the request does not execute", () => {
    const reply = [b.say("a1", "assistant", "cached")];
    const actual = applied(
      run(
        b.modelRequest(items),
        caps,
        [{ type: "return", value: reply }],
        NO_STATE,
      ),
    );
    assert.deepEqual(actual["result"], reply);
    assert.equal(actual["executed"], false);
  });
  test("a return of the wrong shape is rejected", () => {
    rejected(
      run(
        b.modelRequest(items),
        caps,
        [{ type: "return", value: { text: "cached" } }],
        NO_STATE,
      ),
    );
    rejected(
      run(
        b.modelRequest(items),
        caps,
        [{ type: "return", value: [b.text("p", "x")] }],
        NO_STATE,
      ),
    );
  });
  test("deny blocks the request", () => {
    const actual = applied(
      run(
        b.modelRequest(items),
        caps,
        [{ type: "deny", reason: "budget" }],
        NO_STATE,
      ),
    );
    assert.equal(actual["decision"], "deny");
    assert.equal(actual["executed"], false);
  });
  test("an appended message invalidates the incoming candidate", () => {
    const state = {
      permission: "none",
      candidate: { value: [b.say("a1", "assistant", "old")] },
    };
    const actual = applied(
      run(
        b.modelRequest(items),
        caps,
        [
          {
            type: "modify",
            target: "request",
            operation: "merge",
            value: items,
          },
        ],
        state,
      ),
    );
    assert.equal("result" in actual, false);
    assert.equal(actual["executed"], true);
  });
});

describe("context.compact.before (instructions: text parts; return: summary)", () => {
  const caps = b.capabilities(["modify", "return"], {
    modify: b.modifyCaps("instructions"),
  });
  test("absent instructions mean an empty list", () => {
    const actual = applied(
      run(
        b.compactBefore(),
        caps,
        [
          {
            type: "modify",
            target: "instructions",
            operation: "merge",
            value: [b.text("i1", "keep")],
          },
        ],
        NO_STATE,
      ),
    );
    assert.deepEqual(actual["effective"], {
      instructions: [b.text("i1", "keep")],
    });
    assert.equal(actual["executed"], true);
  });
  test("attachments and messages are not text parts", () => {
    rejected(
      run(
        b.compactBefore([]),
        caps,
        [
          {
            type: "modify",
            target: "instructions",
            operation: "merge",
            value: [b.attachment("a1")],
          },
        ],
        NO_STATE,
      ),
    );
    rejected(
      run(
        b.compactBefore([]),
        caps,
        [
          {
            type: "modify",
            target: "instructions",
            operation: "merge",
            value: [b.say("m", "user", "x")],
          },
        ],
        NO_STATE,
      ),
    );
  });
  test("a text-part summary is a supplied result; a message list is not", () => {
    assert.deepEqual(
      applied(
        run(
          b.compactBefore(),
          caps,
          [{ type: "return", value: [b.text("s1", "sum")] }],
          NO_STATE,
        ),
      )["result"],
      [b.text("s1", "sum")],
    );
    rejected(
      run(
        b.compactBefore(),
        caps,
        [{ type: "return", value: [b.say("m", "assistant", "sum")] }],
        NO_STATE,
      ),
    );
  });
});

describe("context.compact.after (summary)", () => {
  const caps = b.capabilities(["modify"], { modify: b.modifyCaps("summary") });
  test("replace substitutes the summary; nothing is gated", () => {
    const actual = applied(
      run(
        b.compactAfter([b.text("s1", "old")]),
        caps,
        [
          {
            type: "modify",
            target: "summary",
            operation: "replace",
            value: [b.text("s2", "new")],
          },
        ],
        NO_STATE,
      ),
    );
    assert.deepEqual(actual["effective"], { summary: [b.text("s2", "new")] });
    assert.equal(actual["executed"], false);
  });
  test("replace over an omitted part is rejected", () => {
    const omitted = {
      id: "s1",
      kind: "text",
      mediaType: "text/plain",
      selection: "omit",
    };
    rejected(
      run(
        b.compactAfter([omitted]),
        caps,
        [
          {
            type: "modify",
            target: "summary",
            operation: "replace",
            value: [b.text("s2", "new")],
          },
        ],
        NO_STATE,
      ),
    );
  });
});

describe("user.message.outbound (content: message list)", () => {
  const caps = b.capabilities(["deny", "modify"], {
    modify: b.modifyCaps("content"),
  });
  const messages = [b.say("o1", "assistant", "hello")];
  test("a list edit applies and delivery proceeds", () => {
    const actual = applied(
      run(
        b.outbound(messages),
        caps,
        [
          {
            type: "modify",
            target: "content",
            operation: "replace",
            value: [b.say("o2", "assistant", "hi")],
          },
        ],
        NO_STATE,
      ),
    );
    assert.deepEqual(actual["effective"], {
      content: [b.say("o2", "assistant", "hi")],
    });
    assert.equal(actual["executed"], true);
  });
  test("an object value is rejected", () => {
    rejected(
      run(
        b.outbound(messages),
        caps,
        [
          {
            type: "modify",
            target: "content",
            operation: "merge",
            value: { name: "x" },
          },
        ],
        NO_STATE,
      ),
    );
  });
});

describe("user.elicitation.result (content: the flat answer object)", () => {
  const caps = b.capabilities(["modify", "message"], {
    modify: b.modifyCaps("content"),
  });
  const answer = { action: "accept", content: { name: "old", keep: true } };
  const edit = (operation: string, value: Json) => [
    { type: "modify", target: "content", operation, value },
  ];
  test("merge is shallow over the answer fields", () => {
    const actual = applied(
      run(
        b.elicitationResult("form", "accept", b.answerPart(answer)),
        caps,
        edit("merge", { name: "new", tags: ["a"] }),
        NO_STATE,
      ),
    );
    assert.deepEqual(actual["effective"], {
      content: { name: "new", keep: true, tags: ["a"] },
    });
    assert.equal(actual["executed"], false);
  });
  test("replace substitutes the whole answer", () => {
    const actual = applied(
      run(
        b.elicitationResult("form", "accept", b.answerPart(answer)),
        caps,
        edit("replace", { n: 1 }),
        NO_STATE,
      ),
    );
    assert.deepEqual(actual["effective"], { content: { n: 1 } });
  });
  test("nested values and lists are rejected", () => {
    rejected(
      run(
        b.elicitationResult("form", "accept", b.answerPart(answer)),
        caps,
        edit("merge", { nested: { a: 1 } }),
        NO_STATE,
      ),
    );
    rejected(
      run(
        b.elicitationResult("form", "accept", b.answerPart(answer)),
        caps,
        edit("merge", [1]),
        NO_STATE,
      ),
    );
  });
  test("edits need an accepted form result with a body", () => {
    rejected(
      run(
        b.elicitationResult(
          "form",
          "decline",
          b.answerPart({ action: "decline" }),
        ),
        caps,
        edit("merge", { a: "b" }),
        NO_STATE,
      ),
    );
    rejected(
      run(
        b.elicitationResult(
          "url",
          "accept",
          b.answerPart({ action: "accept" }),
        ),
        caps,
        edit("merge", { a: "b" }),
        NO_STATE,
      ),
    );
    rejected(
      run(
        b.elicitationResult("form", "accept", b.answerPart(answer, "metadata")),
        caps,
        edit("merge", { a: "b" }),
        NO_STATE,
      ),
    );
  });
  test("a message alone is accepted at a locked result", () => {
    applied(
      run(
        b.elicitationResult(
          "form",
          "decline",
          b.answerPart({ action: "decline" }),
        ),
        caps,
        [{ type: "message", text: "ok" }],
        NO_STATE,
      ),
    );
  });
});

describe("workspace.change.before (workspace)", () => {
  const caps = b.capabilities(["deny", "modify"], {
    modify: b.modifyCaps("workspace"),
  });
  const change = { cwd: "/a", workspaceRoots: ["/a"] };
  const edit = (operation: string, value: Json) => [
    { type: "modify", target: "workspace", operation, value },
  ];
  test("merge overwrites keys; replace removes the omitted ones", () => {
    assert.deepEqual(
      applied(
        run(
          b.workspaceBefore(change),
          caps,
          edit("merge", { cwd: "/b" }),
          NO_STATE,
        ),
      )["effective"],
      { workspace: { cwd: "/b", workspaceRoots: ["/a"] } },
    );
    const actual = applied(
      run(
        b.workspaceBefore(change),
        caps,
        edit("replace", { cwd: "/c" }),
        NO_STATE,
      ),
    );
    assert.deepEqual(actual["effective"], { workspace: { cwd: "/c" } });
    assert.equal(actual["executed"], true);
  });
  test("other keys and empty changes are rejected", () => {
    rejected(
      run(
        b.workspaceBefore(change),
        caps,
        edit("merge", { settings: {} }),
        NO_STATE,
      ),
    );
    rejected(
      run(b.workspaceBefore(change), caps, edit("replace", {}), NO_STATE),
    );
    rejected(
      run(
        b.workspaceBefore(change),
        caps,
        edit("replace", { cwd: 3 }),
        NO_STATE,
      ),
    );
  });
  test("deny blocks the change", () => {
    assert.equal(
      applied(
        run(
          b.workspaceBefore(change),
          caps,
          [{ type: "deny", reason: "no" }],
          NO_STATE,
        ),
      )["executed"],
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
      applied(run(b.toolBefore({}), caps, [inject("next_turn")], NO_STATE))[
        "injections"
      ],
      [inject("next_turn")],
    );
  });
  test("an unadvertised delivery time rejects the response", () => {
    rejected(
      run(
        b.toolBefore({}),
        caps,
        [inject("next_turn"), inject("now")],
        NO_STATE,
      ),
    );
  });
});
