// Source-local lineage (docs/CATALOGUE.md, "Lineage"), the SDK's checker on
// its own: each rule accepted and rejected, late parents, cycles through
// late parents, redelivery, source-locality, and that a rejection changes
// no state.

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { JsonObject } from "../sdk/json.js";
import { LineageChecker, type LineageVerdict } from "../sdk/lineage.js";

const A = "urn:source:a";
const B = "urn:source:b";

/** An event of `type` with id `id` (source A unless `extra` says otherwise). */
function ev(id: string, type: string, extra: JsonObject = {}): JsonObject {
  return { id, source: A, type, time: "2026-01-01T00:00:00Z", ...extra };
}

const task = (
  id: string,
  type: "task.change.before" | "task.change.after",
  body: JsonObject = {},
  extra: JsonObject = {},
): JsonObject =>
  ev(id, type, {
    task: {
      id: "t1",
      operation: "update",
      change: { status: "done" },
      ...body,
    },
    ...extra,
  });

const workspace = (
  id: string,
  type: "workspace.change.before" | "workspace.change.after",
  body: JsonObject = {},
  extra: JsonObject = {},
): JsonObject =>
  ev(id, type, {
    workspace: { kind: "cwd", change: { cwd: "/new" }, ...body },
    ...extra,
  });

const fileChanged = (
  id: string,
  changes: JsonObject[],
  extra: JsonObject = {},
) => ev(id, "file.changed", { changes, ...extra });

const part = (text: string): JsonObject => ({
  id: "p",
  kind: "text",
  text,
});

function accepted(verdict: LineageVerdict, redelivery = false): void {
  assert.deepEqual(verdict, { accepted: true, redelivery });
}

function rejected(verdict: LineageVerdict, rule: string): void {
  assert.equal(verdict.accepted, false, JSON.stringify(verdict));
  if (!verdict.accepted) assert.equal(verdict.rule, rule, verdict.reason);
}

/** Judges each event in turn; returns the verdicts. */
function judgeAll(...events: JsonObject[]): LineageVerdict[] {
  const checker = new LineageChecker();
  return events.map((event) => checker.judge(event));
}

describe("lineage rule 1: identity", () => {
  test("the same event again is a redelivery: accepted, nothing changes", () => {
    const checker = new LineageChecker();
    const event = task("x", "task.change.before");
    accepted(checker.judge(event));
    assert.equal(checker.size, 1);
    accepted(checker.judge(structuredClone(event)), true);
    // change values and other fields may differ on a redelivery
    accepted(
      checker.judge(task("x", "task.change.before", { change: { a: 1 } })),
      true,
    );
    assert.equal(checker.size, 1);
  });

  test("a known identity with another type, parent, task or workspace kind is lineage", () => {
    const checker = new LineageChecker();
    accepted(checker.judge(task("t", "task.change.before")));
    accepted(checker.judge(workspace("w", "workspace.change.before")));
    accepted(checker.judge(ev("p", "turn.end", { parentEventId: "q" })));
    rejected(checker.judge(task("t", "task.change.after")), "identity");
    rejected(
      checker.judge(task("t", "task.change.before", { id: "t2" })),
      "identity",
    );
    rejected(
      checker.judge(
        task("t", "task.change.before", {}, { parentEventId: "z" }),
      ),
      "identity",
    );
    rejected(
      checker.judge(
        workspace("w", "workspace.change.before", { kind: "roots" }),
      ),
      "identity",
    );
    rejected(checker.judge(ev("p", "turn.end")), "identity");
    rejected(
      checker.judge(ev("p", "turn.end", { parentEventId: "other" })),
      "identity",
    );
    accepted(checker.judge(ev("p", "turn.end", { parentEventId: "q" })), true);
    // the rejections changed nothing: the originals are still the known ones
    accepted(checker.judge(task("t", "task.change.before")), true);
    assert.equal(checker.size, 3);
  });

  test("identity is source-local: the same id from another source is a new event", () => {
    const checker = new LineageChecker();
    accepted(checker.judge(task("same", "task.change.before")));
    accepted(checker.judge(ev("same", "turn.end", { source: B })), false);
    assert.equal(checker.size, 2);
  });

  test("identity comes first: a redelivery is not judged by the later rules", () => {
    const checker = new LineageChecker();
    accepted(
      checker.judge(
        task("a", "task.change.after", { prior: { status: "open" } }),
      ),
    );
    // The same identity, now changing nothing: still a redelivery.
    accepted(
      checker.judge(
        task("a", "task.change.after", { prior: { status: "done" } }),
      ),
      true,
    );
  });
});

describe("lineage rule 2: cycles", () => {
  test("an event that is its own parent is lineage", () => {
    rejected(
      judgeAll(
        task("self", "task.change.before", {}, { parentEventId: "self" }),
      )[0]!,
      "cycle",
    );
  });

  test("a chain of known parents back to the event is lineage", () => {
    const [first, second, third, closing] = judgeAll(
      ev("b", "turn.end", { parentEventId: "a" }),
      ev("c", "turn.end", { parentEventId: "b" }),
      ev("d", "turn.end", { parentEventId: "c" }),
      ev("a", "turn.start", { parentEventId: "d" }),
    );
    accepted(first!);
    accepted(second!);
    accepted(third!);
    rejected(closing!, "cycle");
  });

  test("through late parents: events that named it before it arrived", () => {
    const checker = new LineageChecker();
    // x names y, which has not arrived: accepted (rule 5).
    accepted(
      checker.judge(task("x", "task.change.after", {}, { parentEventId: "y" })),
    );
    // y arrives naming x: x -> y -> x.
    rejected(
      checker.judge(
        task("y", "task.change.before", {}, { parentEventId: "x" }),
      ),
      "cycle",
    );
    // y rejected is not known: y with no parent is accepted, x's late parent.
    accepted(checker.judge(task("y", "task.change.before")));
  });

  test("a chain through another source is no cycle", () => {
    const [first, second] = judgeAll(
      ev("b", "turn.end", { parentEventId: "a" }),
      ev("a", "turn.end", { source: B, parentEventId: "b" }),
    );
    accepted(first!);
    accepted(second!);
  });

  test("an unknown parent ends the chain", () => {
    const [first, second] = judgeAll(
      ev("b", "turn.end", { parentEventId: "gone" }),
      ev("a", "turn.end", { parentEventId: "b" }),
    );
    accepted(first!);
    accepted(second!);
  });
});

describe("lineage rule 3: proposal and actual", () => {
  test("an actual task change keeps its known proposal's task id and operation; values may differ", () => {
    const [proposal, actual] = judgeAll(
      task("p", "task.change.before"),
      task(
        "a",
        "task.change.after",
        { change: { status: "blocked" }, prior: { status: "open" } },
        { parentEventId: "p" },
      ),
    );
    accepted(proposal!);
    accepted(actual!);
  });

  test("another task id or another operation under a known task proposal is lineage", () => {
    const checker = new LineageChecker();
    accepted(checker.judge(task("p", "task.change.before")));
    rejected(
      checker.judge(
        task("a", "task.change.after", { id: "other" }, { parentEventId: "p" }),
      ),
      "proposal",
    );
    rejected(
      checker.judge(
        task(
          "a",
          "task.change.after",
          { operation: "create" },
          { parentEventId: "p" },
        ),
      ),
      "proposal",
    );
  });

  test("an actual workspace change keeps its known proposal's kind", () => {
    const checker = new LineageChecker();
    accepted(checker.judge(workspace("p", "workspace.change.before")));
    accepted(
      checker.judge(
        workspace(
          "a",
          "workspace.change.after",
          { change: { cwd: "/elsewhere" } },
          { parentEventId: "p" },
        ),
      ),
    );
    rejected(
      checker.judge(
        workspace(
          "b",
          "workspace.change.after",
          { kind: "roots", change: { workspaceRoots: ["/r"] } },
          { parentEventId: "p" },
        ),
      ),
      "proposal",
    );
  });

  test("an actual change under a proposal of the other kind is lineage, both ways", () => {
    const checker = new LineageChecker();
    accepted(checker.judge(workspace("wp", "workspace.change.before")));
    accepted(checker.judge(task("tp", "task.change.before")));
    rejected(
      checker.judge(
        task("ta", "task.change.after", {}, { parentEventId: "wp" }),
      ),
      "proposal",
    );
    rejected(
      checker.judge(
        workspace("wa", "workspace.change.after", {}, { parentEventId: "tp" }),
      ),
      "proposal",
    );
  });

  test("a late proposal is checked against the actual changes that named it", () => {
    const checker = new LineageChecker();
    accepted(
      checker.judge(
        task(
          "child",
          "task.change.after",
          { id: "t9" },
          { parentEventId: "late" },
        ),
      ),
    );
    rejected(checker.judge(task("late", "task.change.before")), "proposal");
    // rejected, so still unknown: a matching proposal is accepted later
    accepted(checker.judge(task("late", "task.change.before", { id: "t9" })));

    const other = new LineageChecker();
    accepted(
      other.judge(
        task("child", "task.change.after", {}, { parentEventId: "late" }),
      ),
    );
    rejected(
      other.judge(workspace("late", "workspace.change.before")),
      "proposal",
    );

    const fine = new LineageChecker();
    accepted(
      fine.judge(
        workspace(
          "child",
          "workspace.change.after",
          {},
          { parentEventId: "late" },
        ),
      ),
    );
    accepted(fine.judge(workspace("late", "workspace.change.before")));
  });

  test("other parent relations are free", () => {
    accepted(
      judgeAll(
        workspace("wa", "workspace.change.after"),
        fileChanged(
          "f",
          [{ path: "/x", operation: "update", agentCaused: true }],
          {
            parentEventId: "wa",
          },
        ),
      )[1]!,
    );
    accepted(
      judgeAll(
        ev("tb", "tool.before"),
        task("ta", "task.change.after", {}, { parentEventId: "tb" }),
      )[1]!,
    );
    // an actual under an actual, a proposal under a proposal
    accepted(
      judgeAll(
        task("a1", "task.change.after", { id: "one" }),
        task("a2", "task.change.after", { id: "two" }, { parentEventId: "a1" }),
      )[1]!,
    );
    accepted(
      judgeAll(
        task("p1", "task.change.before", { id: "one" }),
        workspace("p2", "workspace.change.before", {}, { parentEventId: "p1" }),
      )[1]!,
    );
    // a late proposal whose known child is not an actual change
    accepted(
      judgeAll(
        fileChanged(
          "f",
          [{ path: "/x", operation: "create", agentCaused: true }],
          {
            parentEventId: "late",
          },
        ),
        task("late", "task.change.before"),
      )[1]!,
    );
  });

  test("a proposal of another source is not the parent", () => {
    const [proposal, actual, late] = judgeAll(
      task("p", "task.change.before", { id: "t1" }),
      task(
        "a",
        "task.change.after",
        { id: "t2" },
        { source: B, parentEventId: "p" },
      ),
      task("a", "task.change.before", { id: "t3" }, { parentEventId: "zz" }),
    );
    accepted(proposal!);
    accepted(actual!);
    accepted(late!);
  });
});

describe("lineage rule 4: actual changes that change nothing", () => {
  test("a task update with no change key, or every key equal to its prior value", () => {
    const checker = new LineageChecker();
    rejected(
      checker.judge(task("e", "task.change.after", { change: {} })),
      "no-op",
    );
    rejected(
      checker.judge(
        task("s", "task.change.after", {
          change: { status: "open", tags: ["a", { b: 1 }] },
          prior: { status: "open", tags: ["a", { b: 1 }], owner: "me" },
        }),
      ),
      "no-op",
    );
    accepted(
      checker.judge(
        task("d", "task.change.after", {
          change: { status: "open", owner: "you" },
          prior: { status: "open", owner: "me" },
        }),
      ),
    );
    // strictly equal: a boolean is not a number, a missing key is not null
    accepted(
      checker.judge(
        task("b", "task.change.after", {
          change: { v: true },
          prior: { v: 1 },
        }),
      ),
    );
    accepted(
      checker.judge(
        task("n", "task.change.after", { change: { v: null }, prior: {} }),
      ),
    );
    // no prior: a change
    accepted(checker.judge(task("np", "task.change.after")));
    // only updates: a create or a remove equal to its prior is a change
    accepted(
      checker.judge(
        task("c", "task.change.after", {
          operation: "create",
          change: {},
        }),
      ),
    );
    accepted(
      checker.judge(
        task("r", "task.change.after", {
          operation: "remove",
          change: { status: "open" },
          prior: { status: "open" },
        }),
      ),
    );
    // a proposal is never a no-op actual change
    accepted(checker.judge(task("pp", "task.change.before", { change: {} })));
  });

  test("a workspace change whose prior has every changed key with the same value", () => {
    const checker = new LineageChecker();
    rejected(
      checker.judge(
        workspace("same", "workspace.change.after", {
          change: { cwd: "/x" },
          prior: { cwd: "/x", workspaceRoots: ["/r"] },
        }),
      ),
      "no-op",
    );
    accepted(
      checker.judge(
        workspace("moved", "workspace.change.after", {
          change: { cwd: "/y" },
          prior: { cwd: "/x" },
        }),
      ),
    );
    accepted(
      checker.judge(
        workspace("partial", "workspace.change.after", {
          kind: "roots",
          change: { workspaceRoots: ["/a", "/b"] },
          prior: { workspaceRoots: ["/b", "/a"] },
        }),
      ),
    );
    accepted(checker.judge(workspace("noprior", "workspace.change.after")));
    accepted(
      checker.judge(
        workspace("proposal", "workspace.change.before", {
          change: { cwd: "/x" },
          prior: { cwd: "/x" },
        }),
      ),
    );
  });

  test("a file update whose before and after are both present and equal", () => {
    const checker = new LineageChecker();
    rejected(
      checker.judge(
        fileChanged("same", [
          { path: "/a", operation: "create", agentCaused: true },
          {
            path: "/b",
            operation: "update",
            agentCaused: true,
            before: part("x"),
            after: part("x"),
          },
        ]),
      ),
      "no-op",
    );
    accepted(
      checker.judge(
        fileChanged("differs", [
          {
            path: "/b",
            operation: "update",
            agentCaused: true,
            before: part("x"),
            after: part("y"),
          },
        ]),
      ),
    );
    accepted(
      checker.judge(
        fileChanged("one-side", [
          {
            path: "/b",
            operation: "update",
            agentCaused: true,
            after: part("x"),
          },
        ]),
      ),
    );
    accepted(
      checker.judge(
        fileChanged("not-update", [
          {
            path: "/b",
            operation: "remove",
            agentCaused: true,
            before: part("x"),
            after: part("x"),
          },
        ]),
      ),
    );
  });
});

describe("lineage rule 5 and state", () => {
  test("an unknown parent is accepted; it is checked when it arrives", () => {
    const checker = new LineageChecker();
    accepted(
      checker.judge(
        task("orphan", "task.change.after", {}, { parentEventId: "never" }),
      ),
    );
    accepted(
      checker.judge(
        task(
          "filtered",
          "task.change.after",
          { id: "x" },
          { parentEventId: "p" },
        ),
      ),
    );
    rejected(
      checker.judge(task("p", "task.change.before", { id: "y" })),
      "proposal",
    );
  });

  test("a rejection changes no state: not known, not a parent, not a child", () => {
    const checker = new LineageChecker();
    // rejected child of a late parent: must not make the parent fail later
    rejected(
      checker.judge(
        task(
          "noop",
          "task.change.after",
          { change: {}, id: "x" },
          { parentEventId: "p" },
        ),
      ),
      "no-op",
    );
    accepted(checker.judge(task("p", "task.change.before", { id: "y" })));
    // rejected event is not known: its id is free for any event
    accepted(checker.judge(ev("noop", "turn.end")));
    // rejected self-cycle is no link of a later cycle
    rejected(
      checker.judge(ev("c", "turn.end", { parentEventId: "c" })),
      "cycle",
    );
    accepted(checker.judge(ev("d", "turn.end", { parentEventId: "c" })));
    accepted(checker.judge(ev("c", "turn.start")));
    assert.equal(checker.size, 4);
  });

  test("state is per checker", () => {
    const one = new LineageChecker();
    const two = new LineageChecker();
    accepted(one.judge(task("p", "task.change.before")));
    accepted(two.judge(task("p", "task.change.after", { id: "other" })));
    accepted(one.judge(task("p", "task.change.before")), true);
    accepted(two.judge(task("p", "task.change.after", { id: "other" })), true);
  });

  test("check looks without remembering", () => {
    const checker = new LineageChecker();
    accepted(checker.check(task("p", "task.change.before")));
    assert.equal(checker.size, 0);
    accepted(checker.judge(task("p", "task.change.after")));
  });
});
