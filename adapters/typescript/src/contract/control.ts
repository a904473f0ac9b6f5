// The control listener (plain HTTP on loopback, no auth): JSON in, JSON out,
// from a suite's route table. The core suite's routes: /health, /receipts,
// /release, /reset [ext], /shutdown.

import type http from "node:http";
import { decodeJson, encodeJson } from "../sdk/codec.js";
import {
  readBody,
  sendEmpty,
  sendJson,
  type ListenerLimits,
} from "../sdk/httpTransport.js";
import { isObject, type Json, type JsonObject } from "../sdk/json.js";
import type { Backend } from "./backend.js";
import type { Barriers } from "./barriers.js";
import { ConfigError } from "./config.js";
import type { Receipts } from "./receipts.js";

/** What the core control endpoints act on. */
export interface ServerState {
  readonly receipts: Receipts;
  readonly barriers: Barriers;
  readonly backend: Backend;
}

/** A control request that cannot be carried out: 400 (or `status`) with `{"error"}`. */
export class BadControlRequest extends Error {
  constructor(
    message: string,
    readonly status = 400,
  ) {
    super(message);
  }
}

/** A route's answer with a status of its own, or work to do once it is written. */
export class ControlAnswer {
  constructor(
    readonly body: Json,
    readonly status = 200,
    /** Runs once the answer has been written (e.g. shutdown). */
    readonly after: (() => void) | null = null,
  ) {}
}

/** One control endpoint: the request body (an object, `{}` when empty) in, the answer out. */
export type ControlRoute = (
  input: JsonObject,
) => Json | ControlAnswer | Promise<Json | ControlAnswer>;

/** Routes by `"METHOD /path"`, e.g. `"POST /release"`. */
export type ControlRoutes = Readonly<Record<string, ControlRoute>>;

function bodyObject(body: Buffer): JsonObject {
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

/** The control listener's request handler for `routes` (unknown routes: 404). */
export function controlHandler(
  routes: ControlRoutes,
  limits: ListenerLimits,
): (request: http.IncomingMessage, response: http.ServerResponse) => void {
  const serve = async (
    request: http.IncomingMessage,
    response: http.ServerResponse,
  ): Promise<void> => {
    const path = (request.url ?? "/").split("?")[0] ?? "/";
    const route = routes[`${request.method ?? ""} ${path}`];
    const body = await readBody(request, response, limits);
    if (body === null) return;
    if (route === undefined) return sendEmpty(response, 404);
    const answer = await route(bodyObject(body));
    if (answer instanceof ControlAnswer) {
      if (answer.after !== null) response.once("finish", answer.after);
      sendJson(response, answer.status, encodeJson(answer.body));
    } else {
      sendJson(response, 200, encodeJson(answer));
    }
  };
  return (request, response) => {
    serve(request, response).catch((error: unknown) => {
      const status = error instanceof BadControlRequest ? error.status : 500;
      sendJson(
        response,
        status,
        encodeJson({ error: (error as Error).message }),
      );
    });
  };
}

/** A string field of a control body, or a 400. */
export function stringField(input: JsonObject, key: string): string {
  const value = input[key];
  if (typeof value !== "string" || value.length === 0)
    throw new BadControlRequest(`${key} must be a non-empty string`);
  return value;
}

/** The core suite's control routes. */
export function coreControlRoutes(
  state: ServerState,
  shutdown: () => void,
): ControlRoutes {
  return {
    "GET /health": () => ({ ready: true }),
    "GET /receipts": () => ({ ...state.receipts.lists }),
    "POST /release": (input) => {
      const barrier = input["barrier"];
      if (typeof barrier !== "string")
        throw new BadControlRequest("barrier must be a string");
      state.barriers.release(barrier);
      return { released: barrier };
    },
    "POST /reset": (input) => {
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
      return { reset: true };
    },
    "POST /shutdown": () =>
      new ControlAnswer({ shutdown: true }, 200, shutdown),
  };
}
