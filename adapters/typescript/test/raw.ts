// Raw HTTP/1.1 over a real socket, so that tests can send exactly the bytes
// they mean (a stalled head, a bad chunk size, a body never sent) and read
// each response as it arrives.

import net from "node:net";

export interface RawResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/** One client connection: write bytes, read whole responses in order, see the close. */
export class RawConnection {
  private readonly socket: net.Socket;
  private buffer = Buffer.alloc(0);
  private waiters: (() => void)[] = [];
  private ended = false;
  /** Resolves when the server closed the connection (or reset it). */
  readonly closed: Promise<void>;
  readonly connected: Promise<void>;

  constructor(port: number) {
    this.socket = net.connect(port, "127.0.0.1");
    this.socket.setNoDelay(true);
    this.connected = new Promise((resolve) =>
      this.socket.once("connect", () => resolve()),
    );
    this.socket.on("data", (chunk: Buffer) => {
      this.buffer = Buffer.concat([this.buffer, chunk]);
      this.wake();
    });
    this.closed = new Promise((resolve) => {
      const done = () => {
        this.ended = true;
        this.wake();
        resolve();
      };
      this.socket.once("close", done);
      this.socket.on("error", () => undefined);
    });
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
  }

  /** Writes bytes; resolves once they are handed to the kernel (false: the connection is gone). */
  write(data: string | Buffer): Promise<boolean> {
    return new Promise((resolve) => {
      if (this.socket.destroyed) {
        resolve(false);
        return;
      }
      this.socket.write(data, (error) => resolve(error == null));
    });
  }

  /** The next whole response (Content-Length framed), or null when the connection closed first. */
  async response(): Promise<RawResponse | null> {
    for (;;) {
      const parsed = this.take();
      if (parsed !== null) return parsed;
      if (this.ended) return null;
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
  }

  private take(): RawResponse | null {
    const end = this.buffer.indexOf("\r\n\r\n");
    if (end === -1) return null;
    const [statusLine = "", ...lines] = this.buffer
      .subarray(0, end)
      .toString("latin1")
      .split("\r\n");
    const headers: Record<string, string> = {};
    for (const line of lines) {
      const colon = line.indexOf(":");
      headers[line.slice(0, colon).trim().toLowerCase()] = line
        .slice(colon + 1)
        .trim();
    }
    const status = Number(statusLine.split(" ")[1]);
    if (status === 100) {
      this.buffer = this.buffer.subarray(end + 4);
      return { status, headers, body: "" };
    }
    const length = Number(headers["content-length"] ?? "0");
    if (this.buffer.length < end + 4 + length) return null;
    const body = this.buffer
      .subarray(end + 4, end + 4 + length)
      .toString("utf8");
    this.buffer = this.buffer.subarray(end + 4 + length);
    return { status, headers, body };
  }

  /** Sends FIN: no more bytes from this side; the answer can still be read. */
  halfClose(): void {
    this.socket.end();
  }

  close(): void {
    this.socket.destroy();
  }
}

/** A request head: the request line, `Host`, the given headers, the blank line. */
export function head(
  method: string,
  path: string,
  headers: Readonly<Record<string, string | number>> = {},
): string {
  const lines = Object.entries(headers).map(
    ([name, value]) => `${name}: ${value}\r\n`,
  );
  return `${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n${lines.join("")}\r\n`;
}

/** A POST with a JSON body and its Content-Length. */
export function post(
  body: string | Buffer,
  headers: Readonly<Record<string, string | number>> = {},
): Buffer {
  const bytes = typeof body === "string" ? Buffer.from(body) : body;
  return Buffer.concat([
    Buffer.from(
      head("POST", "/intercept", {
        "Content-Type": "application/json",
        "Content-Length": bytes.length,
        ...headers,
      }),
    ),
    bytes,
  ]);
}
