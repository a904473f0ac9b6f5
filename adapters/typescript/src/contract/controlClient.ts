// A client of a server's control listener (plain HTTP on loopback): JSON in,
// JSON out, parsed strictly. Used by the step-driven suites' clients for
// waits, releases, marks, stray frames and the final receipts.

import http from "node:http";
import { decodeJson, encodeJson } from "../sdk/codec.js";
import { isObject, type Json, type JsonObject } from "../sdk/json.js";
import { WAIT_LIMIT_MS } from "./entries.js";

/** A control call that failed: a transport failure, or an answer other than the one expected. */
export class ControlError extends Error {}

export interface ControlAnswer {
  readonly status: number;
  readonly body: Json | null;
}

export class ControlClient {
  private readonly agent = new http.Agent({
    keepAlive: true,
    maxSockets: 4,
  });

  /** `timeoutMs` bounds each call beyond the server's own wait limit. */
  constructor(
    private readonly base: string,
    private readonly timeoutMs: number,
  ) {}

  /** One call; rejects with ControlError on a transport failure or a body that is not JSON. */
  call(
    method: string,
    path: string,
    body?: JsonObject,
  ): Promise<ControlAnswer> {
    const text = body === undefined ? "" : encodeJson(body);
    return new Promise((resolve, reject) => {
      const fail = (reason: string) =>
        reject(new ControlError(`control ${path}: ${reason}`));
      let url: URL;
      try {
        url = new URL(path, this.base);
      } catch {
        fail(`bad control endpoint ${this.base}`);
        return;
      }
      const request = http.request(url, {
        method,
        agent: this.agent,
        headers: {
          "Content-Type": "application/json",
          "Content-Length": String(Buffer.byteLength(text)),
        },
      });
      const timer = setTimeout(
        () => request.destroy(new Error("timed out")),
        WAIT_LIMIT_MS + this.timeoutMs,
      );
      request.setNoDelay(true);
      request.on("error", (error) => {
        clearTimeout(timer);
        fail(error.message);
      });
      request.on("response", (response) => {
        const chunks: Buffer[] = [];
        response.on("data", (chunk: Buffer) => chunks.push(chunk));
        response.on("error", (error) => {
          clearTimeout(timer);
          fail(error.message);
        });
        response.on("end", () => {
          clearTimeout(timer);
          const raw = Buffer.concat(chunks);
          let parsed: Json | null = null;
          if (raw.length > 0) {
            try {
              parsed = decodeJson(raw);
            } catch (error) {
              fail(`answer is not JSON: ${(error as Error).message}`);
              return;
            }
          }
          resolve({ status: response.statusCode ?? 0, body: parsed });
        });
      });
      request.end(text);
    });
  }

  /** POSTs `body` and requires `200 {"ok": true}`. */
  async ok(path: string, body: JsonObject): Promise<void> {
    const answer = await this.call("POST", path, body);
    if (
      answer.status !== 200 ||
      !isObject(answer.body) ||
      answer.body["ok"] !== true
    ) {
      const error =
        isObject(answer.body) && typeof answer.body["error"] === "string"
          ? `: ${answer.body["error"]}`
          : "";
      throw new ControlError(
        `control ${path} answered HTTP ${answer.status}${error}`,
      );
    }
  }

  /** `GET path`, requiring 200 and a JSON object. */
  async get(path: string): Promise<JsonObject> {
    const answer = await this.call("GET", path);
    if (answer.status !== 200 || !isObject(answer.body))
      throw new ControlError(`control ${path} answered HTTP ${answer.status}`);
    return answer.body;
  }

  close(): void {
    this.agent.destroy();
  }
}
