// Source-local lineage (docs/CATALOGUE.md, "Lineage"): a receiver's memory
// of the events it accepted, by identity `(source, id)`, and the rules an
// event that passed its schema must meet against it. An edge is an event's
// `parentEventId`, naming an event of the same `source`; a parent of
// another source, never delivered or filtered is unknown and free (it is
// checked when it arrives). State is per instance; a rejection changes
// nothing. No I/O, no knowledge of the test contract.

import {
  hasKey,
  isObject,
  jsonEqual,
  type Json,
  type JsonObject,
} from "./json.js";

/** The rule an event breaks: identity (1), cycle (2), proposal (3), no-op (4). */
export type LineageRule = "identity" | "cycle" | "proposal" | "no-op";

export type LineageVerdict =
  | { readonly accepted: true; readonly redelivery: boolean }
  | {
      readonly accepted: false;
      readonly rule: LineageRule;
      readonly reason: string;
    };

/** What the rules need of an accepted event. */
interface Known {
  readonly id: string;
  readonly type: string;
  readonly parentEventId: string | undefined;
  /** `task.id` and `task.operation` of a task event. */
  readonly taskId: Json | undefined;
  readonly taskOperation: Json | undefined;
  /** `workspace.kind` of a workspace event. */
  readonly workspaceKind: Json | undefined;
}

const TASK_PROPOSAL = "task.change.before";
const TASK_ACTUAL = "task.change.after";
const WORKSPACE_PROPOSAL = "workspace.change.before";
const WORKSPACE_ACTUAL = "workspace.change.after";

const isTask = (type: string) => type === TASK_PROPOSAL || type === TASK_ACTUAL;
const isWorkspace = (type: string) =>
  type === WORKSPACE_PROPOSAL || type === WORKSPACE_ACTUAL;
const isProposal = (type: string) =>
  type === TASK_PROPOSAL || type === WORKSPACE_PROPOSAL;
const isActual = (type: string) =>
  type === TASK_ACTUAL || type === WORKSPACE_ACTUAL;

function field(value: Json | undefined, key: string): Json | undefined {
  return isObject(value) ? value[key] : undefined;
}

function stringField(event: JsonObject, key: string): string | undefined {
  const value = event[key];
  return typeof value === "string" ? value : undefined;
}

/** The parts of `event` the rules look at (null when it has no string id, source and type). */
function summary(
  event: JsonObject,
): (Known & { readonly source: string }) | null {
  const id = stringField(event, "id");
  const source = stringField(event, "source");
  const type = stringField(event, "type");
  if (id === undefined || source === undefined || type === undefined)
    return null;
  return {
    id,
    source,
    type,
    parentEventId: stringField(event, "parentEventId"),
    taskId: isTask(type) ? field(event["task"], "id") : undefined,
    taskOperation: isTask(type) ? field(event["task"], "operation") : undefined,
    workspaceKind: isWorkspace(type)
      ? field(event["workspace"], "kind")
      : undefined,
  };
}

/** Equal JSON values, both absent counting as equal. */
function same(a: Json | undefined, b: Json | undefined): boolean {
  return a === undefined || b === undefined ? a === b : jsonEqual(a, b);
}

/**
 * Rule 3 for one proposal and one actual change whose parent it is: the
 * same kind, and the proposal's identity kept. Null when they agree.
 */
function pairProblem(proposal: Known, actual: Known): string | null {
  const task = proposal.type === TASK_PROPOSAL;
  if (task !== (actual.type === TASK_ACTUAL))
    return `${actual.type} ${actual.id} under the ${proposal.type} ${proposal.id}: the wrong kind`;
  if (task) {
    if (!same(proposal.taskId, actual.taskId))
      return `${actual.id} changes task ${JSON.stringify(actual.taskId ?? null)}, its proposal ${proposal.id} task ${JSON.stringify(proposal.taskId ?? null)}`;
    if (!same(proposal.taskOperation, actual.taskOperation))
      return `${actual.id} is a ${JSON.stringify(actual.taskOperation ?? null)}, its proposal ${proposal.id} a ${JSON.stringify(proposal.taskOperation ?? null)}`;
    return null;
  }
  if (!same(proposal.workspaceKind, actual.workspaceKind))
    return `${actual.id} changes workspace kind ${JSON.stringify(actual.workspaceKind ?? null)}, its proposal ${proposal.id} ${JSON.stringify(proposal.workspaceKind ?? null)}`;
  return null;
}

/** Whether every key of `change` is in `prior` with an equal value (vacuously true for no key). */
function coveredBy(change: JsonObject, prior: JsonObject): boolean {
  return Object.keys(change).every(
    (key) => hasKey(prior, key) && jsonEqual(change[key], prior[key]),
  );
}

/** Rule 4: why `event` is an actual change that changes nothing, or null. */
function noOpProblem(event: JsonObject, type: string): string | null {
  if (type === TASK_ACTUAL) {
    const task = event["task"];
    if (!isObject(task) || task["operation"] !== "update") return null;
    const change = task["change"];
    if (!isObject(change)) return null;
    if (Object.keys(change).length === 0)
      return "a task update that changes no key";
    const prior = task["prior"];
    if (isObject(prior) && coveredBy(change, prior))
      return "a task update whose every change equals its prior value";
    return null;
  }
  if (type === WORKSPACE_ACTUAL) {
    const workspace = event["workspace"];
    const change = field(workspace, "change");
    const prior = field(workspace, "prior");
    if (isObject(change) && isObject(prior) && coveredBy(change, prior))
      return "a workspace change whose every change equals its prior value";
    return null;
  }
  if (type === "file.changed") {
    const changes = event["changes"];
    if (!Array.isArray(changes)) return null;
    for (const [index, change] of changes.entries()) {
      if (!isObject(change) || change["operation"] !== "update") continue;
      const before = change["before"];
      const after = change["after"];
      if (
        before !== undefined &&
        after !== undefined &&
        jsonEqual(before, after)
      )
        return `changes[${index}] updates a file to what it was`;
    }
  }
  return null;
}

/** The events of one source this receiver accepted, and who named whom as parent. */
class SourceEvents {
  readonly events = new Map<string, Known>();
  /** By parent id: the accepted events that named it, in arrival order. */
  readonly children = new Map<string, Known[]>();

  add(event: Known): void {
    this.events.set(event.id, event);
    if (event.parentEventId === undefined) return;
    const named = this.children.get(event.parentEventId) ?? [];
    named.push(event);
    this.children.set(event.parentEventId, named);
  }
}

/**
 * A receiver's lineage state, for the life of the receiver. `judge` checks
 * an event (that passed its schema) against rules 1 to 4 in order and, when
 * it is accepted and new, remembers it; a rejected event or a redelivery
 * changes nothing.
 */
export class LineageChecker {
  private readonly sources = new Map<string, SourceEvents>();

  /** Checks `event` without remembering it. */
  check(event: JsonObject): LineageVerdict {
    const incoming = summary(event);
    // The schema requires string id, source and type; without them there is
    // no identity to keep, and nothing to remember.
    if (incoming === null) return { accepted: true, redelivery: false };
    const own = this.sources.get(incoming.source);
    const reject = (rule: LineageRule, reason: string): LineageVerdict => ({
      accepted: false,
      rule,
      reason,
    });

    // 1. Identity: a known (source, id) must be the same event again.
    const known = own?.events.get(incoming.id);
    if (known !== undefined) {
      if (known.type !== incoming.type)
        return reject(
          "identity",
          `${incoming.id} was a ${known.type}, now a ${incoming.type}`,
        );
      if (known.parentEventId !== incoming.parentEventId)
        return reject(
          "identity",
          `${incoming.id} had parent ${JSON.stringify(known.parentEventId ?? null)}, now ${JSON.stringify(incoming.parentEventId ?? null)}`,
        );
      if (isTask(incoming.type) && !same(known.taskId, incoming.taskId))
        return reject("identity", `${incoming.id} names another task`);
      if (
        isWorkspace(incoming.type) &&
        !same(known.workspaceKind, incoming.workspaceKind)
      )
        return reject(
          "identity",
          `${incoming.id} names another workspace kind`,
        );
      return { accepted: true, redelivery: true };
    }

    // 2. Cycles: its own parent, or a chain of known parents back to it
    // (also through events that named it before it arrived).
    const seen = new Set<string>();
    for (
      let parent = incoming.parentEventId;
      parent !== undefined && !seen.has(parent);
      parent = own?.events.get(parent)?.parentEventId
    ) {
      if (parent === incoming.id)
        return reject(
          "cycle",
          seen.size === 0
            ? `${incoming.id} is its own parent`
            : `${incoming.id} closes a cycle of parents`,
        );
      seen.add(parent);
    }

    // 3. Proposal and actual, both ways: its known proposal, and (a late
    // parent) the known actual changes that named it.
    const parent =
      incoming.parentEventId === undefined
        ? undefined
        : own?.events.get(incoming.parentEventId);
    if (
      parent !== undefined &&
      isActual(incoming.type) &&
      isProposal(parent.type)
    ) {
      const problem = pairProblem(parent, incoming);
      if (problem !== null) return reject("proposal", problem);
    }
    if (isProposal(incoming.type)) {
      for (const child of own?.children.get(incoming.id) ?? []) {
        if (!isActual(child.type)) continue;
        const problem = pairProblem(incoming, child);
        if (problem !== null) return reject("proposal", problem);
      }
    }

    // 4. Actual changes that change nothing.
    const noOp = noOpProblem(event, incoming.type);
    if (noOp !== null) return reject("no-op", noOp);

    // 5. An unknown parent is accepted; it is checked when it arrives.
    return { accepted: true, redelivery: false };
  }

  /** Checks `event` and, when it is accepted and new, remembers it. */
  judge(event: JsonObject): LineageVerdict {
    const verdict = this.check(event);
    if (verdict.accepted && !verdict.redelivery) {
      const incoming = summary(event);
      if (incoming !== null) {
        let own = this.sources.get(incoming.source);
        if (own === undefined) {
          own = new SourceEvents();
          this.sources.set(incoming.source, own);
        }
        own.add(incoming);
      }
    }
    return verdict;
  }

  /** How many distinct events are known (all sources). */
  get size(): number {
    let count = 0;
    for (const own of this.sources.values()) count += own.events.size;
    return count;
  }
}
