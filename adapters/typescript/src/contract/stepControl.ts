// The control routes of the step-driven suites ("test control v1",
// docs/LIFECYCLE.md): health, the receipt entries, bounded waits on them,
// sticky releases of held replies by request id, the client's marks, stray
// frames written over stdio (`/emit`), shutdown. Answers are upstream style:
// `{"ok": true}`; a wait that runs out gets 408. A suite takes the calls it
// serves (any other is 404), the entry kinds `/wait-observed` counts and the
// marks `/mark` takes.

import { isObject, type Json, type JsonObject } from "../sdk/json.js";
import type { Barriers } from "./barriers.js";
import {
  BadControlRequest,
  ControlAnswer,
  stringField,
  type ControlRoutes,
} from "./control.js";
import { MARK_KINDS, WAIT_LIMIT_MS, type EntryLog } from "./entries.js";
import type { ServerContext } from "./server.js";

const OK: JsonObject = { ok: true };

function countField(input: JsonObject): number {
  const count = input["count"] ?? 1;
  if (typeof count !== "number" || !Number.isInteger(count) || count < 0)
    throw new BadControlRequest("count must be a non-negative integer");
  return count;
}

async function waited(
  satisfied: Promise<boolean>,
  what: string,
  limitMs: number,
): Promise<Json> {
  if (await satisfied) return OK;
  throw new BadControlRequest(
    `${what} did not happen within ${limitMs / 1000} s`,
    408,
  );
}

/**
 * `POST /wait-observed {eventId, count}`: blocks until `count` entries of
 * one of `kinds` exist for the event.
 */
function waitObserved(
  log: EntryLog,
  kinds: readonly string[],
  waitLimitMs: number,
): ControlRoutes[string] {
  return (input) => {
    const eventId = stringField(input, "eventId");
    const count = countField(input);
    return waited(
      log.waitFor(
        (e) =>
          typeof e["kind"] === "string" &&
          kinds.includes(e["kind"]) &&
          e["eventId"] === eventId,
        count,
        waitLimitMs,
      ),
      `${count} ${kinds.join(" or ")} entr${count === 1 ? "y" : "ies"} of ${eventId}`,
      waitLimitMs,
    );
  };
}

/** What a suite's control routes are made of; every field has a default. */
export interface StepControlOptions {
  /**
   * The held replies by request id (`/release`; `/shutdown` lets them go);
   * none: nothing is ever held.
   */
  readonly holds?: Barriers | undefined;
  /** How long a wait may block before its 408. */
  readonly waitLimitMs?: number | undefined;
  /** The kinds `POST /mark` takes (default: MARK_KINDS). */
  readonly markKinds?: readonly string[] | undefined;
  /** The entry kinds `/wait-observed` counts for an event (default: `observed`). */
  readonly observedKinds?: readonly string[] | undefined;
  /** The calls served, as `"METHOD /path"` (default: every one). */
  readonly calls?: readonly string[] | undefined;
}

/** The step-driven control routes over `log`. */
export function stepControlRoutes(
  context: ServerContext,
  log: EntryLog,
  options: StepControlOptions = {},
): ControlRoutes {
  const { holds } = options;
  const waitLimitMs = options.waitLimitMs ?? WAIT_LIMIT_MS;
  const markKinds = options.markKinds ?? MARK_KINDS;
  const routes: ControlRoutes = {
    "GET /health": () => ({ ready: true }),
    "GET /receipts": () => ({ entries: log.snapshot() }),
    "POST /wait": (input) => {
      const id = stringField(input, "id");
      const count = countField(input);
      return waited(
        log.waitFor(
          (e) => e["kind"] === "received" && e["id"] === id,
          count,
          waitLimitMs,
        ),
        `${count} receipt(s) of ${id}`,
        waitLimitMs,
      );
    },
    "POST /wait-observed": waitObserved(
      log,
      options.observedKinds ?? ["observed"],
      waitLimitMs,
    ),
    "POST /release": (input) => {
      const id = stringField(input, "id");
      holds?.release(id);
      return OK;
    },
    "POST /mark": (input) => {
      const kind = stringField(input, "kind");
      if (!markKinds.includes(kind))
        throw new BadControlRequest(
          `kind must be one of ${markKinds.join(", ")}`,
        );
      log.append({
        kind,
        id: stringField(input, "id"),
        scenario: stringField(input, "scenario"),
      });
      return OK;
    },
    "POST /emit": async (input) => {
      if (context.writeFrame === null)
        throw new BadControlRequest("/emit is for a stdio server only");
      const frame = input["response"];
      if (!isObject(frame))
        throw new BadControlRequest("response must be a JSON-RPC object");
      const id = frame["id"];
      if (typeof id !== "string" && typeof id !== "number")
        throw new BadControlRequest("response needs a string or number id");
      log.append({ kind: "emitted", id });
      await context.writeFrame(frame);
      return OK;
    },
    "POST /shutdown": () => {
      holds?.releaseAll();
      return new ControlAnswer(OK, 200, context.stop);
    },
  };
  const { calls } = options;
  return calls === undefined
    ? routes
    : Object.fromEntries(
        Object.entries(routes).filter(([call]) => calls.includes(call)),
      );
}
