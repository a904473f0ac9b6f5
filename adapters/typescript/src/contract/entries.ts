// The receipt entries of the step-driven suites (docs/LIFECYCLE.md): one log
// of `{kind, ...}` entries in the order recorded, read whole by
// `GET /receipts`, and bounded waits on it (`/wait`, `/wait-observed`).
// Node runs one handler at a time, so appending and reading are atomic.

import { cloneJson, type JsonObject } from "../sdk/json.js";

/** A wait on the log gives up after this long (the control answer is then 408). */
export const WAIT_LIMIT_MS = 30_000;

/** The marks a client may append with `POST /mark`. */
export const MARK_KINDS: readonly string[] = [
  "acquired",
  "accepted",
  "cancelled",
  "discarded",
  "chain-settled",
  "observer-blocked",
];

export class EntryLog {
  private readonly entries: JsonObject[] = [];
  private readonly waiters = new Set<() => void>();
  private stopped = false;

  /** Appends an entry (a copy, so later changes to `entry` do not show). */
  append(entry: JsonObject): void {
    this.entries.push(cloneJson(entry));
    for (const wake of [...this.waiters]) wake();
  }

  /** Every entry so far, in the order recorded (a copy). */
  snapshot(): JsonObject[] {
    return cloneJson(this.entries);
  }

  count(predicate: (entry: JsonObject) => boolean): number {
    let count = 0;
    for (const entry of this.entries) if (predicate(entry)) count += 1;
    return count;
  }

  /**
   * Resolves true once at least `count` entries satisfy `predicate`; false
   * after `limitMs`, or at once when the log has stopped. The entries are
   * never changed or removed, so a wait counts each one once, as it comes,
   * rather than the whole log at every append.
   */
  waitFor(
    predicate: (entry: JsonObject) => boolean,
    count: number,
    limitMs = WAIT_LIMIT_MS,
  ): Promise<boolean> {
    let seen = 0;
    let matched = 0;
    const counted = () => {
      for (; seen < this.entries.length; seen += 1)
        if (predicate(this.entries[seen] as JsonObject)) matched += 1;
      return matched;
    };
    if (counted() >= count) return Promise.resolve(true);
    if (this.stopped) return Promise.resolve(false);
    return new Promise((resolve) => {
      const done = (outcome: boolean) => {
        clearTimeout(timer);
        this.waiters.delete(check);
        resolve(outcome);
      };
      const check = () => {
        if (this.stopped) done(false);
        else if (counted() >= count) done(true);
      };
      const timer = setTimeout(() => done(false), limitMs);
      this.waiters.add(check);
    });
  }

  /** Ends every wait (unsatisfied ones resolve false). */
  stop(): void {
    this.stopped = true;
    for (const wake of [...this.waiters]) wake();
  }
}
