// The scripted backend behind both transports: receipts every message before
// replying, answers each intercept with its scenario's response unchanged.

import { closeSync, openSync, writeSync } from "node:fs";
import {
  errorResponse,
  INVALID_PARAMS,
  INVALID_REQUEST,
  METHOD_NOT_FOUND,
  replyId,
} from "./codec.js";
import { readScenarios } from "./config.js";
import { isObject, hasKey, type Json, type JsonObject } from "./json.js";
import { discoveryResponse } from "./manifest.js";
import type { Check } from "./schemas.js";

export type ReceiptKind = "request" | "discovery";

/** The receipt lists, and the optional receipt log flushed before each reply. */
export class Receipts {
  readonly requests: Json[] = [];
  readonly discovery: Json[] = [];
  private readonly logFd: number | null;

  constructor(logPath: string | null) {
    this.logFd = logPath === null ? null : openSync(logPath, "a");
  }

  record(kind: ReceiptKind, message: Json): void {
    (kind === "request" ? this.requests : this.discovery).push(message);
    if (this.logFd !== null)
      writeSync(this.logFd, `${JSON.stringify({ kind, message })}\n`);
  }

  /** Empties both lists. The log stays append-only: readers track their own offset. */
  clear(): void {
    this.requests.length = 0;
    this.discovery.length = 0;
  }

  close(): void {
    if (this.logFd !== null) closeSync(this.logFd);
  }
}

export class Backend {
  private responses = new Map<string, Json>();

  constructor(
    private readonly validateRequest: Check,
    readonly receipts: Receipts,
    scenarioFile: string | null,
  ) {
    if (scenarioFile !== null) this.load(scenarioFile);
  }

  /** Replaces the scripted responses with those of `scenarioFile`. */
  load(scenarioFile: string): void {
    const responses = new Map<string, Json>();
    for (const scenario of readScenarios(scenarioFile))
      responses.set(scenario.id, scenario.response as Json);
    this.responses = responses;
  }

  /**
   * Receipts `message`, then returns the reply to send, or undefined for a
   * notification (no reply). Every parsed message other than discovery is
   * receipted as a request, so that nothing a client sent goes unseen.
   */
  handle(message: Json): Json | undefined {
    const method = isObject(message) ? message["method"] : undefined;
    const isNotification = isObject(message) && !hasKey(message, "id");
    if (method === "hooks/capabilities") {
      this.receipts.record("discovery", message);
      return isNotification ? undefined : discoveryResponse(replyId(message));
    }
    this.receipts.record("request", message);
    if (!isObject(message) || typeof method !== "string") {
      return errorResponse(
        replyId(message),
        INVALID_REQUEST,
        "not a JSON-RPC request",
      );
    }
    if (method !== "hooks/intercept") {
      return isNotification
        ? undefined
        : errorResponse(
            replyId(message),
            METHOD_NOT_FOUND,
            `unknown method ${method}`,
          );
    }
    return this.intercept(message);
  }

  private intercept(message: JsonObject): Json {
    const schemaError = this.validateRequest(message);
    if (schemaError !== null) {
      return errorResponse(
        replyId(message),
        INVALID_PARAMS,
        `invalid intercept request: ${schemaError}`,
      );
    }
    const id = message["id"];
    if (typeof id !== "string" || !this.responses.has(id)) {
      return errorResponse(
        replyId(message),
        INVALID_PARAMS,
        "unknown scenario id",
      );
    }
    return this.responses.get(id) ?? null;
  }
}
