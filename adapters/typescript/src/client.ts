// The blind client of the adapter contract: sends each scenario's request
// exactly once, applies the response with the engine, writes the report.
// Transport failures are `failed` rows, never rejections.

import http from "node:http";
import https from "node:https";
import { writeFileSync } from "node:fs";
import { clientCredential, type FormPoster } from "./auth.js";
import { CodecError, decodeUtf8, encodeJson, parseJson } from "./codec.js";
import { readScenarios, type ClientConfig, type Scenario } from "./config.js";
import { applyResponse, unsupportedReason, type EngineDeps } from "./engine.js";
import { HttpConnection, interceptUrl } from "./httpTransport.js";
import { isObject, type Json, type JsonObject } from "./json.js";
import { loadSchemas } from "./schemas.js";
import { StdioServerProcess } from "./stdioTransport.js";
import { clientTls, requiresHttps, type ClientTls } from "./tls.js";

export const LANGUAGE = "typescript";

/** One exchange: the response body bytes, or a transport failure. */
type Exchange = { readonly body: Buffer } | { readonly error: string };

interface ClientTransport {
  send(line: string): Promise<Exchange>;
  close(): Promise<void>;
}

class HttpClientTransport implements ClientTransport {
  private readonly connection: HttpConnection;
  private readonly url: URL;
  private readonly headers: Record<string, string>;

  constructor(
    endpoint: string,
    tls: ClientTls,
    timeoutMs: number,
    token: string | null,
  ) {
    this.url = interceptUrl(endpoint);
    this.connection = new HttpConnection(this.url, tls, timeoutMs);
    this.headers = { "Content-Type": "application/json" };
    if (token !== null) this.headers["Authorization"] = `Bearer ${token}`;
  }

  async send(line: string): Promise<Exchange> {
    try {
      const answer = await this.connection.post(this.url, line, this.headers);
      if (answer.status !== 200)
        return { error: `HTTP status ${answer.status}` };
      return { body: answer.body };
    } catch (error) {
      return { error: `transport: ${(error as Error).message}` };
    }
  }

  async close(): Promise<void> {
    this.connection.close();
  }
}

class StdioClientTransport implements ClientTransport {
  private readonly server: StdioServerProcess;
  private broken: string | null = null;

  constructor(
    command: readonly string[],
    cwd: string | null,
    private readonly timeoutMs: number,
  ) {
    this.server = new StdioServerProcess(command, cwd);
  }

  async send(line: string): Promise<Exchange> {
    // After a timeout a late line could answer the next request: fail the rest instead.
    if (this.broken !== null) return { error: this.broken };
    const result = await this.server.exchange(line, this.timeoutMs);
    if ("error" in result) {
      this.broken = `stdio stream unusable after: ${result.error}`;
      return { error: result.error };
    }
    return { body: result.line };
  }

  close(): Promise<void> {
    return this.server.close();
  }
}

/** A form POST for the token endpoint; redirects are not followed (a 3xx is returned as is). */
function formPoster(tls: ClientTls, timeoutMs: number): FormPoster {
  return (target, form) =>
    new Promise((resolve, reject) => {
      const url = new URL(target);
      const secure = url.protocol === "https:";
      const request = (secure ? https : http).request(url, {
        method: "POST",
        headers: {
          "Content-Type": "application/x-www-form-urlencoded",
          "Content-Length": String(Buffer.byteLength(form)),
        },
        ...(secure
          ? {
              ...(tls.ca === null ? {} : { ca: tls.ca }),
              rejectUnauthorized: true,
            }
          : {}),
        timeout: timeoutMs,
      });
      request.on("timeout", () =>
        request.destroy(new Error("token endpoint timed out")),
      );
      request.on("error", reject);
      request.on("response", (response) => {
        const chunks: Buffer[] = [];
        response.on("data", (chunk: Buffer) => chunks.push(chunk));
        response.on("end", () =>
          resolve({
            status: response.statusCode ?? 0,
            body: Buffer.concat(chunks).toString("utf8"),
          }),
        );
        response.on("error", reject);
      });
      request.end(form);
    });
}

async function openTransport(config: ClientConfig): Promise<ClientTransport> {
  if (config.transport === "stdio") {
    const command =
      config.serverConfig === null
        ? config.serverCommand
        : [...config.serverCommand, "--config", config.serverConfig];
    return new StdioClientTransport(
      command,
      config.serverCwd,
      config.timeoutMs,
    );
  }
  const endpoint = config.endpoint ?? "";
  if (requiresHttps(config.auth) && !endpoint.startsWith("https://")) {
    throw new Error(
      `${config.auth.profile} profile: auth mode ${config.auth.mode} needs an https endpoint`,
    );
  }
  const tls = clientTls(config.auth, config.tls);
  const token = await clientCredential(
    config.auth,
    formPoster(tls, config.timeoutMs),
  );
  return new HttpClientTransport(endpoint, tls, config.timeoutMs, token);
}

interface ResultEntry extends JsonObject {
  id: string;
  status: string;
}

async function runScenario(
  scenario: Scenario,
  transport: ClientTransport,
  deps: EngineDeps,
  validateRequest: (value: unknown) => string | null,
): Promise<ResultEntry> {
  const { id } = scenario;
  const request = scenario.request as Json;
  if (!isObject(request))
    return { id, status: "failed", error: "scenario request is not an object" };
  const invalid = validateRequest(request);
  if (invalid !== null)
    return {
      id,
      status: "failed",
      error: `request fails intercept-request schema: ${invalid}`,
    };
  // A row the engine cannot apply does not run at all: it is not sent.
  const unsupported = unsupportedReason(request);
  if (unsupported !== null)
    return { id, status: "unsupported", error: unsupported };
  const exchange = await transport.send(encodeJson(request));
  if ("error" in exchange)
    return { id, status: "failed", error: exchange.error };
  let response: Json;
  try {
    response = parseJson(decodeUtf8(exchange.body));
  } catch (error) {
    if (error instanceof CodecError)
      return {
        id,
        status: "failed",
        error: `unparsable response: ${error.message}`,
      };
    throw error;
  }
  const outcome = applyResponse(request, response, deps);
  switch (outcome.status) {
    case "applied":
      return { id, status: "completed", actual: outcome.actual };
    case "rejected":
      if (process.env["AHP_DEBUG"])
        process.stderr.write(
          `ahp-ts client: ${id}: rejected: ${outcome.reason}\n`,
        );
      return { id, status: "completed", actual: { rejected: true } };
    case "unsupported":
      return { id, status: "unsupported", error: outcome.reason };
  }
}

export async function runClient(config: ClientConfig): Promise<void> {
  const scenarios = readScenarios(config.scenarioFile);
  const schemas = loadSchemas();
  const deps: EngineDeps = {
    validateResponse: schemas.response,
    content: schemas.content,
  };
  const results: ResultEntry[] = [];
  let transport: ClientTransport | null = null;
  try {
    transport = await openTransport(config);
  } catch (error) {
    const reason = `cannot open transport: ${(error as Error).message}`;
    process.stderr.write(`ahp-ts client: ${reason}\n`);
    for (const { id } of scenarios)
      results.push({ id, status: "failed", error: reason });
  }
  if (transport !== null) {
    try {
      for (const scenario of scenarios)
        results.push(
          await runScenario(scenario, transport, deps, schemas.request),
        );
    } finally {
      await transport.close();
    }
  }
  writeFileSync(
    config.reportFile,
    `${JSON.stringify({ language: LANGUAGE, results }, null, 1)}\n`,
  );
}
