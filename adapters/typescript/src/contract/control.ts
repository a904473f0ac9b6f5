// The control listener (plain HTTP on loopback, no auth): /health,
// /receipts, /release, /reset [ext], /shutdown.

import type http from "node:http";
import { decodeJson, encodeJson } from "../sdk/codec.js";
import {
  readBody,
  sendEmpty,
  sendJson,
  type ListenerLimits,
} from "../sdk/httpTransport.js";
import { isObject, type Json } from "../sdk/json.js";
import type { Backend } from "./backend.js";
import type { Barriers } from "./barriers.js";
import { ConfigError } from "./config.js";
import type { Receipts } from "./receipts.js";

/** What the control endpoints act on. */
export interface ServerState {
  readonly receipts: Receipts;
  readonly barriers: Barriers;
  readonly backend: Backend;
}

/** A control request that cannot be carried out: 400 with `{"error"}`. */
class BadControlRequest extends Error {}

function bodyObject(body: Buffer): Record<string, Json> {
  if (body.length === 0) return {};
  let input: Json;
  try {
    input = decodeJson(body);
  } catch (error) {
    throw new BadControlRequest((error as Error).message);
  }
  if (!isObject(input)) throw new BadControlRequest("body must be an object");
  return input;
}

export function controlHandler(
  state: ServerState,
  shutdown: () => void,
  limits: ListenerLimits,
): (request: http.IncomingMessage, response: http.ServerResponse) => void {
  const route = async (
    request: http.IncomingMessage,
    response: http.ServerResponse,
  ): Promise<void> => {
    const path = (request.url ?? "/").split("?")[0] ?? "/";
    const name = `${request.method ?? ""} ${path}`;
    const body = await readBody(request, response, limits);
    if (body === null) return;
    const input = bodyObject(body);
    const answer = (value: Json) => sendJson(response, 200, encodeJson(value));
    switch (name) {
      case "GET /health":
        return answer({ ready: true });
      case "GET /receipts":
        return answer({ ...state.receipts.lists });
      case "POST /release": {
        const barrier = input["barrier"];
        if (typeof barrier !== "string")
          throw new BadControlRequest("barrier must be a string");
        state.barriers.release(barrier);
        return answer({ released: barrier });
      }
      case "POST /reset": {
        const scenarioFile = input["scenarioFile"] ?? null;
        if (scenarioFile !== null && typeof scenarioFile !== "string")
          throw new BadControlRequest("scenarioFile must be a path");
        if (scenarioFile !== null) {
          try {
            state.backend.load(scenarioFile);
          } catch (error) {
            if (error instanceof ConfigError)
              throw new BadControlRequest(error.message);
            throw error;
          }
        }
        state.receipts.clear();
        state.barriers.reset();
        return answer({ reset: true });
      }
      case "POST /shutdown":
        response.once("finish", shutdown);
        return answer({ shutdown: true });
      default:
        return sendEmpty(response, 404);
    }
  };
  return (request, response) => {
    route(request, response).catch((error: unknown) => {
      const status = error instanceof BadControlRequest ? 400 : 500;
      sendJson(
        response,
        status,
        encodeJson({ error: (error as Error).message }),
      );
    });
  };
}
