// The control routes of the step-driven suites ("test control v1",
// docs/LIFECYCLE.md): health, the receipt entries, bounded waits on them,
// sticky releases of held replies by request id, the client's marks, stray
// frames written over stdio (`/emit`), shutdown. Answers are upstream style:
// `{"ok": true}`; a wait that runs out gets 408. The catalogue suite
// (docs/CATALOGUE.md) has health, receipts, the wait for an event's
// verdicts and shutdown.

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

/**
 * The step-driven control routes over `log`; `holds` keeps the held replies
 * by request id; `markKinds` are the kinds `POST /mark` takes (the
 * lifecycle suite's by default).
 */
export function lifecycleControlRoutes(
  context: ServerContext,
  log: EntryLog,
  holds: Barriers,
  waitLimitMs = WAIT_LIMIT_MS,
  markKinds: readonly string[] = MARK_KINDS,
): ControlRoutes {
  return {
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
    "POST /wait-observed": waitObserved(log, ["observed"], waitLimitMs),
    "POST /release": (input) => {
      holds.release(stringField(input, "id"));
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
      holds.releaseAll();
      return new ControlAnswer(OK, 200, context.stop);
    },
  };
}

/**
 * The catalogue suite's control routes over `log`: `/wait-observed` counts
 * the event's verdicts, `observed` or `rejected`.
 */
export function catalogueControlRoutes(
  context: ServerContext,
  log: EntryLog,
  waitLimitMs = WAIT_LIMIT_MS,
): ControlRoutes {
  return {
    "GET /health": () => ({ ready: true }),
    "GET /receipts": () => ({ entries: log.snapshot() }),
    "POST /wait-observed": waitObserved(
      log,
      ["observed", "rejected"],
      waitLimitMs,
    ),
    "POST /shutdown": () => new ControlAnswer(OK, 200, context.stop),
  };
}
