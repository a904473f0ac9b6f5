// HTTP(S) transport. Client: one keep-alive connection with TCP_NODELAY,
// redirects never followed. Server: every response's head and body go out in
// one write (a split write meets Nagle and delayed ACK: ~44 ms per round trip).

import http from "node:http";
import https from "node:https";
import type { AddressInfo } from "node:net";
import type { ClientTls, ServerTls } from "./tls.js";

export interface HttpAnswer {
  readonly status: number;
  readonly body: Buffer;
}

/** A keep-alive client for one origin: at most one socket, reused across requests. */
export class HttpConnection {
  private readonly agent: http.Agent;
  private readonly secure: boolean;

  constructor(
    origin: URL,
    tls: ClientTls,
    private readonly timeoutMs: number,
  ) {
    this.secure = origin.protocol === "https:";
    const options = { keepAlive: true, maxSockets: 1, maxFreeSockets: 1 };
    this.agent = this.secure
      ? new https.Agent({
          ...options,
          ...(tls.ca === null ? {} : { ca: tls.ca }),
          ...(tls.cert === null ? {} : { cert: tls.cert }),
          ...(tls.key === null ? {} : { key: tls.key }),
          rejectUnauthorized: true,
          minVersion: "TLSv1.2",
        })
      : new http.Agent(options);
  }

  /** POSTs `body` to `url`; resolves with any status (the caller decides), rejects on transport errors. */
  post(
    url: URL,
    body: string,
    headers: Readonly<Record<string, string>>,
  ): Promise<HttpAnswer> {
    return new Promise((resolve, reject) => {
      const request = (this.secure ? https : http).request(url, {
        agent: this.agent,
        method: "POST",
        headers: {
          ...headers,
          "Content-Length": String(Buffer.byteLength(body)),
        },
      });
      const timer = setTimeout(
        () =>
          request.destroy(new Error(`timed out after ${this.timeoutMs} ms`)),
        this.timeoutMs,
      );
      request.setNoDelay(true);
      request.on("error", (error) => {
        clearTimeout(timer);
        reject(error);
      });
      request.on("response", (response) => {
        const chunks: Buffer[] = [];
        response.on("data", (chunk: Buffer) => chunks.push(chunk));
        response.on("error", (error) => {
          clearTimeout(timer);
          reject(error);
        });
        response.on("end", () => {
          clearTimeout(timer);
          resolve({
            status: response.statusCode ?? 0,
            body: Buffer.concat(chunks),
          });
        });
      });
      request.end(body);
    });
  }

  close(): void {
    this.agent.destroy();
  }
}

/** The URL a client posts intercepts to: the endpoint, or endpoint + "/intercept". */
export function interceptUrl(endpoint: string): URL {
  const url = new URL(endpoint);
  if (!url.pathname.endsWith("/intercept"))
    url.pathname = `${url.pathname.replace(/\/+$/, "")}/intercept`;
  return url;
}

export type Handler = (
  request: http.IncomingMessage,
  response: http.ServerResponse,
) => void;

/** Starts an HTTP or HTTPS listener on 127.0.0.1, port 0; resolves with its port. */
export function listen(
  handler: Handler,
  tls: ServerTls | null,
): Promise<{ server: http.Server; port: number }> {
  const options = { noDelay: true, keepAlive: true };
  const server = tls
    ? https.createServer(
        {
          ...options,
          cert: tls.cert,
          key: tls.key,
          minVersion: "TLSv1.2",
          ...(tls.clientCa === null
            ? {}
            : {
                ca: tls.clientCa,
                requestCert: true,
                rejectUnauthorized: true,
              }),
        },
        handler,
      )
    : http.createServer(options, handler);
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      server.off("error", reject);
      resolve({ server, port: (server.address() as AddressInfo).port });
    });
  });
}

/** Reads a whole request body (bounded). */
export function readBody(
  request: http.IncomingMessage,
  limit = 64 * 1024 * 1024,
): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        request.destroy(new Error("request body too large"));
        return;
      }
      chunks.push(chunk);
    });
    request.on("end", () => resolve(Buffer.concat(chunks)));
    request.on("error", reject);
  });
}

/** Sends a JSON body: head and body in one write. */
export function sendJson(
  response: http.ServerResponse,
  status: number,
  text: string,
): void {
  response.writeHead(status, {
    "Content-Type": "application/json",
    "Content-Length": String(Buffer.byteLength(text)),
  });
  response.end(text);
}

/** Sends a status with no body (e.g. 401, 202). */
export function sendEmpty(response: http.ServerResponse, status: number): void {
  response.writeHead(status, { "Content-Length": "0" });
  response.end();
}
