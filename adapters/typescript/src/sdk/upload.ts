// The content upload binding: attachment bytes go to the receiver's upload
// endpoint as raw octets before the event that refers to them; the receiver
// allocates an immutable reference and answers 201 `{ref, size, sha256}`.
//
// Sender: one POST per upload, `Content-Type: application/octet-stream`,
// `Content-Length` and `AHP-Content-SHA256` as declared, at most one
// `Authorization: Bearer`; redirects are never followed. A declared length
// that differs from the bytes is sent as declared and the connection is
// half-closed after the bytes (the receiver must answer 400 at once rather
// than wait for bytes that never come).
//
// Receiver: the headers decide before any body is read (credential, framing,
// length, declared hash); the body is read bounded and hashed; success stores
// the bytes immutably (identical bytes share a reference, changed bytes never
// do). Every attempt is reported to the caller with its status.

import { createHash, randomUUID, timingSafeEqual } from "node:crypto";
import http from "node:http";
import type { Socket } from "node:net";
import { headerValues } from "./auth.js";
import { decodeJson } from "./codec.js";
import {
  clientContext,
  discardBody,
  httpsLib,
  type ListenerLimits,
} from "./httpTransport.js";
import { isObject, type Json } from "./json.js";
import type { ClientTls } from "./tls.js";

/** The header carrying the lowercase hex SHA-256 of an upload's bytes. */
export const SHA256_HEADER = "AHP-Content-SHA256";
const SHA256 = /^[0-9a-f]{64}$/;
const LENGTH = /^(0|[1-9][0-9]*)$/;
/** The largest 201 answer a sender reads. */
const RECEIPT_LIMIT = 64 * 1024;

/** What a 201 upload confirms: the receiver's reference, the size and the hash of the bytes. */
export interface ContentDescriptor {
  readonly ref: string;
  readonly size: number;
  readonly sha256: string;
}

export function sha256Hex(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

// ---------------------------------------------------------------- sender

export interface UploadTarget {
  /** An https URL, or plain http on a loopback host. */
  readonly endpoint: string;
  /** The bearer token, or null to send no Authorization header. */
  readonly token: string | null;
  readonly timeoutMs: number;
  /** TLS trust for an https endpoint (the CA); null for the default. */
  readonly tls: ClientTls | null;
}

/** What the sender declares in the headers (normally the bytes' own size and hash). */
export interface UploadDeclaration {
  readonly size: number;
  readonly sha256: string;
}

export type UploadOutcome =
  | {
      readonly status: number;
      /** The receiver's descriptor of a 201 that confirms exactly these bytes, else null. */
      readonly receipt: ContentDescriptor | null;
      /** Why a 201 answer does not confirm the bytes, else null. */
      readonly problem: string | null;
    }
  | { readonly error: string };

const LOOPBACK = new Set(["127.0.0.1", "localhost", "[::1]", "::1"]);

/** Why `endpoint` cannot receive uploads (https, or http on loopback), or null. */
export function uploadEndpointProblem(endpoint: string): string | null {
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    return "not a URL";
  }
  if (url.username !== "" || url.password !== "") return "carries credentials";
  if (url.protocol === "https:") return null;
  if (url.protocol === "http:" && LOOPBACK.has(url.hostname)) return null;
  return "must be https, or http on a loopback host";
}

/**
 * Uploads `bytes` with the declared size and hash. Resolves with the status
 * (and, on 201, the checked receipt) or a transport error; never rejects.
 */
export function uploadContent(
  target: UploadTarget,
  bytes: Uint8Array,
  declared: UploadDeclaration,
  validateReceipt: (value: unknown) => string | null,
): Promise<UploadOutcome> {
  const problem = uploadEndpointProblem(target.endpoint);
  if (problem !== null)
    return Promise.resolve({ error: `upload endpoint ${problem}` });
  const url = new URL(target.endpoint);
  const secure = url.protocol === "https:";
  const headers: Record<string, string> = {
    "Content-Type": "application/octet-stream",
    "Content-Length": String(declared.size),
    [SHA256_HEADER]: declared.sha256,
  };
  if (target.token !== null)
    headers["Authorization"] = `Bearer ${target.token}`;
  // Exactly the declared length goes out, never more; fewer when the bytes are short.
  const sent = Buffer.from(bytes).subarray(0, declared.size);
  const halfClose = sent.length !== declared.size;
  return new Promise((resolve) => {
    let settled = false;
    const finish = (outcome: UploadOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(outcome);
    };
    const request = (secure ? httpsLib() : http).request(url, {
      method: "POST",
      agent: false,
      headers,
      ...(secure
        ? {
            secureContext: clientContext(
              { ca: target.tls?.ca ?? null, cert: null, key: null },
              false,
            ),
            rejectUnauthorized: true,
          }
        : {}),
    });
    const timer = setTimeout(() => {
      request.destroy();
      finish({ error: `upload timed out after ${target.timeoutMs} ms` });
    }, target.timeoutMs);
    request.setNoDelay(true);
    request.on("error", (error) =>
      finish({ error: `upload: ${error.message}` }),
    );
    if (halfClose) request.once("finish", () => request.socket?.end());
    request.on("response", (response) => {
      const chunks: Buffer[] = [];
      let size = 0;
      response.on("data", (chunk: Buffer) => {
        size += chunk.length;
        if (size <= RECEIPT_LIMIT) chunks.push(chunk);
      });
      response.on("error", (error) =>
        finish({ error: `upload: ${error.message}` }),
      );
      response.on("end", () => {
        const status = response.statusCode ?? 0;
        request.destroy();
        if (status !== 201) {
          finish({ status, receipt: null, problem: null });
          return;
        }
        const checked = checkReceipt(
          size > RECEIPT_LIMIT ? null : Buffer.concat(chunks),
          bytes,
          validateReceipt,
        );
        finish({ status, ...checked });
      });
    });
    request.end(sent);
  });
}

/** A 201 body confirms the upload when it is a valid receipt of these very bytes. */
function checkReceipt(
  body: Buffer | null,
  bytes: Uint8Array,
  validateReceipt: (value: unknown) => string | null,
): { receipt: ContentDescriptor | null; problem: string | null } {
  if (body === null) return { receipt: null, problem: "receipt too large" };
  let value: Json;
  try {
    value = decodeJson(body);
  } catch (error) {
    return { receipt: null, problem: (error as Error).message };
  }
  const invalid = validateReceipt(value);
  if (invalid !== null || !isObject(value))
    return { receipt: null, problem: `not an upload receipt: ${invalid}` };
  const receipt = value as unknown as ContentDescriptor;
  if (receipt.size !== bytes.length || receipt.sha256 !== sha256Hex(bytes))
    return {
      receipt: null,
      problem: "the receipt's size or hash is not the bytes'",
    };
  return {
    receipt: { ref: receipt.ref, size: receipt.size, sha256: receipt.sha256 },
    problem: null,
  };
}

// ---------------------------------------------------------------- receiver

/** Immutable stored bytes by reference; identical bytes share one reference. */
export class ContentStore {
  private readonly bytesByRef = new Map<string, Buffer>();
  private readonly refByHash = new Map<string, string>();

  /** Stores `bytes` (whose hash is `sha256`) and returns its reference. */
  put(bytes: Buffer, sha256: string): string {
    const known = this.refByHash.get(sha256);
    if (known !== undefined) return known;
    const ref = `urn:uuid:${randomUUID()}`;
    this.bytesByRef.set(ref, Buffer.from(bytes));
    this.refByHash.set(sha256, ref);
    return ref;
  }

  has(ref: string): boolean {
    return this.bytesByRef.has(ref);
  }

  get(ref: string): Buffer | undefined {
    return this.bytesByRef.get(ref);
  }
}

/**
 * One upload attempt as the receiver saw it: the status it answered, the
 * size and hash the sender declared (the bytes' own on a 201; when a
 * declaration is missing or malformed, what was received: nothing), and the
 * reference of a 201.
 */
export interface UploadAttempt {
  readonly status: number;
  readonly size: number;
  readonly sha256: string;
  readonly ref?: string;
}

export interface UploadReceiverOptions {
  /** The one accepted bearer token. */
  readonly token: string;
  /** The largest body accepted; a larger declared length gets 413 without being read. */
  readonly maxBytes: number;
  /** The path uploads are posted to. */
  readonly path: string;
  readonly store: ContentStore;
  /** Called once per attempt, before its answer is written. */
  readonly record: (attempt: UploadAttempt) => void;
  readonly limits: ListenerLimits;
}

export interface UploadReceiver {
  readonly handler: (
    request: http.IncomingMessage,
    response: http.ServerResponse,
  ) => void;
  /**
   * The listener's `clientError` handler: a body cut short by the sender's
   * half-close is a parse error, answered 400 at once (and recorded).
   */
  readonly onClientError: (error: Error, socket: Socket) => void;
}

const EMPTY_SHA256 = sha256Hex(new Uint8Array(0));

function sameToken(a: string, b: string): boolean {
  const digest = (value: string) =>
    createHash("sha256").update(value, "utf8").digest();
  return timingSafeEqual(digest(a), digest(b));
}

/** An attempt in flight: settles once, recording before anything is answered. */
class Attempt {
  private done = false;
  constructor(
    private readonly record: (attempt: UploadAttempt) => void,
    readonly size: number,
    readonly sha256: string,
  ) {}

  get settled(): boolean {
    return this.done;
  }

  settle(status: number, ref?: string): boolean {
    if (this.done) return false;
    this.done = true;
    this.record({
      status,
      size: this.size,
      sha256: this.sha256,
      ...(ref === undefined ? {} : { ref }),
    });
    return true;
  }
}

function rawStatus(socket: Socket, status: string): void {
  socket.end(
    `HTTP/1.1 ${status}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`,
  );
}

/** The upload receiver's handlers for one listener. */
export function uploadReceiver(options: UploadReceiverOptions): UploadReceiver {
  const inFlight = new WeakMap<Socket, Attempt>();

  const answer = (
    request: http.IncomingMessage,
    response: http.ServerResponse,
    status: number,
    body: string | null = null,
  ) => {
    if (response.headersSent || request.socket.destroyed) return;
    if (body === null) {
      response.writeHead(status, { "Content-Length": "0" });
      response.end();
    } else {
      response.writeHead(status, {
        "Content-Type": "application/json",
        "Content-Length": String(Buffer.byteLength(body)),
      });
      response.end(body);
    }
  };

  const handler = (
    request: http.IncomingMessage,
    response: http.ServerResponse,
  ): void => {
    const path = (request.url ?? "/").split("?")[0] ?? "/";
    if (path !== options.path) {
      answer(request, response, 404);
      discardBody(request, options.limits);
      return;
    }
    if (request.method !== "POST") {
      answer(request, response, 405);
      discardBody(request, options.limits);
      return;
    }
    const raw = request.rawHeaders;
    const one = (name: string): string | null => {
      const values = headerValues(raw, name);
      return values.length === 1 ? (values[0] ?? "").trim() : null;
    };
    const declaredLength = one("content-length");
    const declaredSha = one(SHA256_HEADER);
    const size =
      declaredLength !== null && LENGTH.test(declaredLength)
        ? Number(declaredLength)
        : 0;
    const sha256 =
      declaredSha !== null && SHA256.test(declaredSha)
        ? declaredSha
        : EMPTY_SHA256;
    const attempt = new Attempt(options.record, size, sha256);
    const refuse = (status: number) => {
      attempt.settle(status);
      answer(request, response, status);
      discardBody(request, options.limits);
    };
    // The headers decide first; no body is read for a refused upload.
    const authorization = headerValues(raw, "authorization");
    if (authorization.length > 1) return refuse(400);
    const token = /^Bearer ([\x21-\x7e]+)$/.exec(authorization[0] ?? "")?.[1];
    if (token === undefined || !sameToken(token, options.token))
      return refuse(401);
    if (
      headerValues(raw, "transfer-encoding").length > 0 ||
      headerValues(raw, "content-encoding").length > 0
    )
      return refuse(400);
    if (declaredLength === null || !LENGTH.test(declaredLength))
      return refuse(400);
    if (size > options.maxBytes) return refuse(413);
    if (one("content-type")?.toLowerCase() !== "application/octet-stream")
      return refuse(400);
    if (declaredSha === null || !SHA256.test(declaredSha)) return refuse(400);
    inFlight.set(request.socket, attempt);
    const chunks: Buffer[] = [];
    const stall = setTimeout(() => {
      // A sender that stops sending short of its length: answered like a half-close.
      if (attempt.settle(400)) rawStatus(request.socket, "400 Bad Request");
      request.socket.destroy();
    }, options.limits.stallMs);
    request.on("data", (chunk: Buffer) => {
      chunks.push(chunk);
      stall.refresh();
    });
    request.once("close", () => {
      clearTimeout(stall);
      inFlight.delete(request.socket);
      // A connection that died mid-body: nobody to answer, still an attempt.
      if (!request.complete) attempt.settle(400);
    });
    request.once("end", () => {
      clearTimeout(stall);
      inFlight.delete(request.socket);
      const body = Buffer.concat(chunks);
      if (body.length !== size || sha256Hex(body) !== sha256) {
        attempt.settle(400);
        answer(request, response, 400);
        return;
      }
      const ref = options.store.put(body, sha256);
      attempt.settle(201, ref);
      answer(request, response, 201, JSON.stringify({ ref, size, sha256 }));
    });
  };

  const onClientError = (error: Error, socket: Socket): void => {
    const attempt = inFlight.get(socket);
    const code = (error as NodeJS.ErrnoException).code;
    if (attempt !== undefined && !attempt.settled) {
      // The body ended before its Content-Length: the sender half-closed.
      inFlight.delete(socket);
      attempt.settle(400);
      if (socket.writable) rawStatus(socket, "400 Bad Request");
      else socket.destroy();
      return;
    }
    if (code === "ECONNRESET" || !socket.writable) {
      socket.destroy();
      return;
    }
    rawStatus(
      socket,
      code === "HPE_HEADER_OVERFLOW"
        ? "431 Request Header Fields Too Large"
        : code === "ERR_HTTP_REQUEST_TIMEOUT"
          ? "408 Request Timeout"
          : "400 Bad Request",
    );
  };

  return { handler, onClientError };
}
