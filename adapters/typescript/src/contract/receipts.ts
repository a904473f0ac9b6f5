// Receipts: what the server received, by kind, in arrival order; and the
// optional receipt log [ext], one compact `{kind, message}` line per receipt,
// written synchronously before the reply goes out.

import { closeSync, openSync, writeSync } from "node:fs";
import type { JsonObject } from "../sdk/json.js";

/**
 * `request`: a message with an id (hooks/intercept, also when answered with
 * an error); `discovery`: hooks/capabilities; `notification`: a message
 * without an id.
 */
export type ReceiptKind = "request" | "discovery" | "notification";

export interface ReceiptLists {
  readonly requests: JsonObject[];
  readonly discovery: JsonObject[];
  readonly notifications: JsonObject[];
}

const LIST_OF: Readonly<Record<ReceiptKind, keyof ReceiptLists>> = {
  request: "requests",
  discovery: "discovery",
  notification: "notifications",
};

export class Receipts {
  readonly lists: ReceiptLists = {
    requests: [],
    discovery: [],
    notifications: [],
  };
  private logFd: number | null;

  /** Opens `logPath` for appending (never truncated); throws when it cannot be opened. */
  constructor(logPath: string | null) {
    this.logFd = logPath === null ? null : openSync(logPath, "a");
  }

  record(kind: ReceiptKind, message: JsonObject): void {
    this.lists[LIST_OF[kind]].push(message);
    if (this.logFd !== null)
      writeSync(this.logFd, `${JSON.stringify({ kind, message })}\n`);
  }

  /** Empties the lists. The log stays append-only: readers track their own offset. */
  clear(): void {
    for (const name of Object.values(LIST_OF)) this.lists[name].length = 0;
  }

  close(): void {
    if (this.logFd !== null) closeSync(this.logFd);
    this.logFd = null;
  }
}
