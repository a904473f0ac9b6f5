// The server side of the adapter contract: AHP over HTTP(S) or stdio, the
// plain-HTTP control listener, the readiness file, receipts.

import type http from "node:http";
import { renameSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { createAuthenticator, type Authenticator } from "./auth.js";
import { Backend, Receipts } from "./backend.js";
import {
  CodecError,
  decodeUtf8,
  encodeJson,
  errorResponse,
  parseJson,
  PARSE_ERROR,
} from "./codec.js";
import type { ServerConfig } from "./config.js";
import { listen, readBody, sendEmpty, sendJson } from "./httpTransport.js";
import { isObject, type Json } from "./json.js";
import { discoveryResponse } from "./manifest.js";
import { loadSchemas } from "./schemas.js";
import { LineReader } from "./stdioTransport.js";
import { serverTls } from "./tls.js";

function diagnostic(text: string): void {
  process.stderr.write(`ahp-ts server: ${text}\n`);
}

/** Writes the readiness file atomically: a temporary file in the same directory, then rename. */
function writeReadiness(
  path: string,
  endpoint: string | null,
  controlEndpoint: string,
): void {
  const temporary = join(dirname(path), `.${process.pid}.ready.tmp`);
  writeFileSync(
    temporary,
    JSON.stringify({ endpoint, controlEndpoint, pid: process.pid }),
  );
  renameSync(temporary, path);
}

/** Decodes and parses one message; a parse failure gets a JSON-RPC error and no receipt. */
function answer(backend: Backend, bytes: Buffer): Json | undefined {
  let message: Json;
  try {
    message = parseJson(decodeUtf8(bytes));
  } catch (error) {
    if (error instanceof CodecError)
      return errorResponse(null, PARSE_ERROR, error.message);
    throw error;
  }
  return backend.handle(message);
}

class Server {
  private readonly released = new Set<string>();
  private readonly listeners: http.Server[] = [];
  private stopping = false;

  constructor(
    private readonly backend: Backend,
    private readonly authenticate: Authenticator,
  ) {}

  /** The AHP listener: POST of any JSON-RPC message on any path, GET /capabilities. */
  readonly ahp = (
    request: http.IncomingMessage,
    response: http.ServerResponse,
  ): void => {
    void this.serveAhp(request, response).catch((error: unknown) => {
      diagnostic(`request failed: ${(error as Error).message}`);
      if (!response.headersSent) sendEmpty(response, 500);
    });
  };

  private async serveAhp(
    request: http.IncomingMessage,
    response: http.ServerResponse,
  ): Promise<void> {
    const body = await readBody(request);
    if (!(await this.authenticate(request.rawHeaders))) {
      sendEmpty(response, 401);
      return;
    }
    const path = (request.url ?? "/").split("?")[0] ?? "/";
    if (request.method === "GET" && path.endsWith("/capabilities")) {
      sendJson(response, 200, encodeJson(discoveryResponse("discovery")));
      return;
    }
    if (request.method !== "POST") {
      sendEmpty(response, 405);
      return;
    }
    const reply = answer(this.backend, body);
    if (reply === undefined) sendEmpty(response, 202);
    else sendJson(response, 200, encodeJson(reply));
  }

  /** The control listener: health, receipts, barriers, reset, shutdown. */
  readonly control = (
    request: http.IncomingMessage,
    response: http.ServerResponse,
  ): void => {
    void this.serveControl(request, response).catch((error: unknown) => {
      if (!response.headersSent)
        sendJson(
          response,
          400,
          encodeJson({ error: (error as Error).message }),
        );
    });
  };

  private async serveControl(
    request: http.IncomingMessage,
    response: http.ServerResponse,
  ): Promise<void> {
    const body = await readBody(request, 1024 * 1024);
    const route = `${request.method ?? ""} ${(request.url ?? "/").split("?")[0] ?? "/"}`;
    const input = body.length === 0 ? {} : parseJson(decodeUtf8(body));
    const receipts = this.backend.receipts;
    switch (route) {
      case "GET /health":
        return sendJson(response, 200, encodeJson({ ready: true }));
      case "GET /receipts":
        return sendJson(
          response,
          200,
          encodeJson({
            requests: receipts.requests,
            discovery: receipts.discovery,
          }),
        );
      case "POST /release": {
        const barrier = isObject(input) ? input["barrier"] : undefined;
        if (typeof barrier !== "string")
          return sendJson(
            response,
            400,
            encodeJson({ error: "barrier name required" }),
          );
        this.released.add(barrier);
        return sendJson(response, 200, encodeJson({ released: barrier }));
      }
      case "POST /reset": {
        const scenarioFile = isObject(input)
          ? input["scenarioFile"]
          : undefined;
        if (scenarioFile !== undefined && typeof scenarioFile !== "string") {
          return sendJson(
            response,
            400,
            encodeJson({ error: "scenarioFile must be a path" }),
          );
        }
        if (typeof scenarioFile === "string") this.backend.load(scenarioFile);
        receipts.clear();
        return sendJson(response, 200, encodeJson({ reset: true }));
      }
      case "POST /shutdown":
        response.once("finish", () => this.stop(0));
        return sendJson(response, 200, encodeJson({ shutdown: true }));
      default:
        return sendEmpty(response, 404);
    }
  }

  track(listener: http.Server): void {
    this.listeners.push(listener);
  }

  /** Closes every listener and the receipt log, then exits. */
  stop(code: number): void {
    if (this.stopping) return;
    this.stopping = true;
    for (const listener of this.listeners) {
      listener.close();
      listener.closeAllConnections();
    }
    this.backend.receipts.close();
    process.exit(code);
  }
}

/** Answers stdin lines on stdout, one line each; EOF ends the server. */
async function serveStdio(server: Server, backend: Backend): Promise<void> {
  const reader = new LineReader(process.stdin);
  for (
    let line = await reader.next();
    line !== null;
    line = await reader.next()
  ) {
    if (line.length === 0 || (line.length === 1 && line[0] === 13)) continue;
    const reply = answer(backend, line);
    if (reply !== undefined) process.stdout.write(`${encodeJson(reply)}\n`);
  }
  server.stop(0);
}

export async function runServer(config: ServerConfig): Promise<void> {
  const schemas = loadSchemas();
  const receipts = new Receipts(config.receiptLog);
  const backend = new Backend(schemas.request, receipts, config.scenarioFile);
  const tls =
    config.transport === "http" ? serverTls(config.auth, config.tls) : null;
  if (config.transport === "stdio" && config.auth.mode !== "none") {
    diagnostic(
      `auth mode ${config.auth.mode} does not apply over stdio; process trust only`,
    );
  }
  const authenticate =
    config.transport === "http"
      ? await createAuthenticator(config.auth)
      : async () => true;
  const server = new Server(backend, authenticate);
  const control = await listen(server.control, null);
  server.track(control.server);
  let endpoint: string | null = null;
  if (config.transport === "http") {
    const ahp = await listen(server.ahp, tls);
    server.track(ahp.server);
    endpoint = `${tls === null ? "http" : "https"}://127.0.0.1:${ahp.port}/intercept`;
  }
  for (const signal of ["SIGTERM", "SIGINT"] as const)
    process.once(signal, () => server.stop(0));
  writeReadiness(
    config.readinessFile,
    endpoint,
    `http://127.0.0.1:${control.port}`,
  );
  if (config.transport === "stdio") await serveStdio(server, backend);
}
