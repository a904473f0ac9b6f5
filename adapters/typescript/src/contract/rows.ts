// The step engine's rows: how a step-driven client's row ends (completed,
// failed with the reason, or unsupported), the per-run counts the server's
// bounded waits count to, and a notification that is only done once the
// server recorded it. A suite's rows throw RowFailure and RowUnsupported;
// `rowResult` turns them into the report's entries.

import type { JsonObject } from "../sdk/json.js";
import { ControlError, type ControlClient } from "./controlClient.js";
import type { ResultEntry } from "./report.js";
import type { Wire } from "./steps.js";

/** A row that cannot run to the end: reported `failed` with the reason. */
export class RowFailure extends Error {}
/** A row this client does not implement: reported `unsupported`. */
export class RowUnsupported extends Error {}

/**
 * Runs one row: what `run` resolves with is its `actual` (`completed`); a
 * RowUnsupported makes it `unsupported`; a RowFailure or a control call that
 * failed makes it `failed`, with a `note` naming the row. Anything else is
 * not the row's failure and escapes (the client exits 1).
 */
export async function rowResult(
  id: string,
  note: (text: string) => void,
  run: () => Promise<JsonObject>,
): Promise<ResultEntry> {
  try {
    return { id, status: "completed", actual: await run() };
  } catch (error) {
    if (error instanceof RowUnsupported)
      return { id, status: "unsupported", error: error.message };
    if (error instanceof RowFailure || error instanceof ControlError) {
      note(`${id}: ${error.message}`);
      return { id, status: "failed", error: error.message };
    }
    throw error;
  }
}

/**
 * Counts by key over one run (the sends of a request id, the notifications
 * of an event id): the server's waits count receipts over the whole run, so
 * a wait names the run's n-th, not the row's.
 */
export class Counts {
  private readonly counts = new Map<string, number>();

  /** Counts one more of `key`; returns how many there have been. */
  next(key: string): number {
    const count = (this.counts.get(key) ?? 0) + 1;
    this.counts.set(key, count);
    return count;
  }
}

/**
 * Sends a notification without waiting for its answer, then waits (`POST
 * /wait-observed {eventId, count}`) until the server recorded the `count`-th
 * of `eventId`, so that its receipt precedes whatever the next step causes.
 * An observer that never answers delays nothing; one that refuses the
 * notification fails the row (`where`, when given, heads the reason).
 */
export async function notifyRecorded(
  wire: Wire,
  control: ControlClient,
  line: string,
  eventId: string,
  count: number,
  where: string | null = null,
): Promise<void> {
  const notification = wire.notify(line);
  const refused = notification.refused.then((reason) => {
    const failure = `the notification of ${eventId} failed: ${reason}`;
    throw new RowFailure(where === null ? failure : `${where}: ${failure}`);
  });
  try {
    await Promise.race([
      control.ok("/wait-observed", { eventId, count }),
      refused,
    ]);
  } finally {
    notification.done();
  }
}
