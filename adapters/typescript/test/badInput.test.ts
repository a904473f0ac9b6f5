// Bad input over real sockets (docs/CONTRACT.md, "Bad input"): the headers
// are authenticated before any body is read; every read is bounded (413 over
// 8 MiB, a stall closes the connection, a bad chunk size gets 400, JSON
// deeper than 512 levels is malformed); every bad request gets a status or a
// JSON-RPC error, and the server keeps serving. The server runs in process
// with a short stall timer; the bytes are written by hand.

import assert from "node:assert/strict";
import { rmSync } from "node:fs";
import { after, before, describe, test } from "node:test";
import { encodeJson } from "../sdk/codec.js";
import { DEFAULT_LIMITS } from "../sdk/httpTransport.js";
import type { JsonObject } from "../sdk/json.js";
import { control, tempDir } from "./processes.js";
import { head, post, RawConnection } from "./raw.js";
import {
  barrierScenarios,
  rowWithId,
  startInProcess,
  type InProcessServer,
} from "./serverHarness.js";

const STALL_MS = 300;
const MiB = 1024 * 1024;
const work = tempDir("ahp-ts-bad-input-");
const scenarioFile = barrierScenarios(work);
const plain = encodeJson(rowWithId("plain-1")["request"] as JsonObject);
const held = encodeJson(rowWithId("held-1")["request"] as JsonObject);

let open: InProcessServer;
let bearer: InProcessServer;
before(async () => {
  open = await startInProcess(work, scenarioFile, {
    limits: { stallMs: STALL_MS },
  });
  bearer = await startInProcess(work, scenarioFile, {
    auth: { mode: "bearer", profile: "compat", token: "right-token" },
    limits: { stallMs: STALL_MS },
  });
});
after(async () => {
  open.server.stop();
  bearer.server.stop();
  await Promise.all([open.server.stopped, bearer.server.stopped]);
  rmSync(work, { recursive: true, force: true });
});

const connect = async (server: InProcessServer) => {
  const connection = new RawConnection(server.port);
  await connection.connected;
  return connection;
};

/** The server still answers a valid intercept on a fresh connection. */
async function assertServing(server: InProcessServer): Promise<void> {
  const connection = await connect(server);
  await connection.write(post(plain, { Authorization: "Bearer right-token" }));
  const response = await connection.response();
  assert.equal(response?.status, 200);
  connection.close();
}

const elapsed = (start: bigint) =>
  Number(process.hrtime.bigint() - start) / 1e6;

test("the server process reads with the contract's bounds: 8 MiB bodies, a 10 s stall timer", () => {
  assert.deepEqual(DEFAULT_LIMITS, { maxBodyBytes: 8 * MiB, stallMs: 10_000 });
});

describe("headers first", () => {
  test("a request that fails authentication gets 401 before any of its body is sent", async () => {
    const connection = await connect(bearer);
    // 60 MB announced, not one byte of it sent: the answer must not wait for it.
    await connection.write(
      head("POST", "/intercept", {
        "Content-Type": "application/json",
        "Content-Length": 60 * 1000 * 1000,
        Authorization: "Bearer wrong-token",
      }),
    );
    const response = await connection.response();
    assert.equal(response?.status, 401);
    assert.equal(response?.body, "");
    connection.close();
    assert.deepEqual(bearer.state.receipts.lists.requests, []);
    await assertServing(bearer);
  });

  test("Expect: 100-continue gets 401, never 100, without a good token", async () => {
    const connection = await connect(bearer);
    await connection.write(
      head("POST", "/intercept", {
        "Content-Length": plain.length,
        Expect: "100-continue",
      }),
    );
    assert.equal((await connection.response())?.status, 401);
    connection.close();
  });

  test("a refused request's body is read and dropped: the same connection serves the next request", async () => {
    const connection = await connect(bearer);
    await connection.write(post(plain, { Authorization: "Bearer wrong" }));
    await connection.write(
      post(plain, { Authorization: "Bearer right-token" }),
    );
    assert.equal((await connection.response())?.status, 401);
    assert.equal((await connection.response())?.status, 200);
    connection.close();
  });
});

describe("bounded bodies", () => {
  test(`a declared length over ${DEFAULT_LIMITS.maxBodyBytes / MiB} MiB gets 413 at once, and nothing is buffered`, async () => {
    const connection = await connect(open);
    await connection.write(
      head("POST", "/intercept", { "Content-Length": 100 * 1000 * 1000 }),
    );
    assert.equal((await connection.response())?.status, 413);
    connection.close();
    await assertServing(open);
  });

  test("a client that sends the whole 9 MiB body before reading still sees 413, then gets its next answer", async () => {
    const connection = await connect(open);
    const big = Buffer.alloc(9 * MiB, 0x20);
    await connection.write(post(big));
    await connection.write(post(plain));
    assert.equal((await connection.response())?.status, 413);
    assert.equal((await connection.response())?.status, 200);
    connection.close();
  });

  test("a chunked body that grows past the limit gets 413", async () => {
    const connection = await connect(open);
    await connection.write(
      head("POST", "/intercept", { "Transfer-Encoding": "chunked" }),
    );
    const chunk = Buffer.alloc(MiB, 0x20);
    const frame = Buffer.concat([
      Buffer.from(`${chunk.length.toString(16)}\r\n`),
      chunk,
      Buffer.from("\r\n"),
    ]);
    for (let sent = 0; sent < 9; sent += 1) await connection.write(frame);
    assert.equal((await connection.response())?.status, 413);
    connection.close();
    await assertServing(open);
  });

  for (const [name, size] of [
    ["negative", "-5"],
    ["not hex", "zz"],
    ["hex with junk", "1x"],
  ] as const) {
    test(`a chunk size that is ${name} gets 400, also on a connection that was already answered`, async () => {
      for (const warm of [false, true]) {
        const connection = await connect(open);
        if (warm) {
          await connection.write(post(plain));
          assert.equal((await connection.response())?.status, 200);
        }
        await connection.write(
          `${head("POST", "/intercept", { "Transfer-Encoding": "chunked" })}${size}\r\n{}\r\n0\r\n\r\n`,
        );
        assert.equal(
          (await connection.response())?.status,
          400,
          `warm: ${warm}`,
        );
        await connection.closed;
      }
    });
  }
});

describe("stalls", () => {
  test("a head that stalls closes the connection", async () => {
    const connection = await connect(open);
    const start = process.hrtime.bigint();
    await connection.write("POST /intercept HTTP/1.1\r\nHost: 127.0.0.1\r\n");
    await connection.closed;
    assert.ok(
      elapsed(start) >= STALL_MS * 0.9,
      `closed after ${elapsed(start)} ms`,
    );
    await assertServing(open);
  });

  test("a body that stalls closes the connection, also on a reused connection", async () => {
    for (const warm of [false, true]) {
      const connection = await connect(open);
      if (warm) {
        await connection.write(post(plain));
        assert.equal((await connection.response())?.status, 200);
      }
      const start = process.hrtime.bigint();
      await connection.write(
        `${head("POST", "/intercept", { "Content-Length": 100 })}{"jsonrpc":`,
      );
      await connection.closed;
      assert.ok(
        elapsed(start) >= STALL_MS * 0.9,
        `closed after ${elapsed(start)} ms`,
      );
    }
  });

  test("an idle keep-alive connection is closed", async () => {
    const connection = await connect(open);
    await connection.write(post(plain));
    assert.equal((await connection.response())?.status, 200);
    await connection.closed;
  });

  test("a reply held by a barrier outlives the stall timer", async () => {
    const connection = await connect(open);
    await connection.write(post(held));
    const answer = connection.response();
    // Three stall periods pass while the reply is held; the connection stays.
    await new Promise((resolve) => setTimeout(resolve, STALL_MS * 3));
    await control(open.server.controlEndpoint, "POST", "/release", {
      barrier: "b1",
    });
    assert.equal((await answer)?.status, 200);
    connection.close();
    await control(open.server.controlEndpoint, "POST", "/reset");
  });
});

describe("malformed JSON", () => {
  const nested = (depth: number) => "[".repeat(depth) + "]".repeat(depth);
  const bodies: [string, string | Buffer][] = [
    ["not JSON", "{"],
    ["a duplicate key", '{"jsonrpc":"2.0","id":"plain-1","id":"plain-1"}'],
    ["NaN", '{"jsonrpc":"2.0","id":NaN}'],
    ["invalid UTF-8", Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d])],
    ["513 levels deep", nested(513)],
    ["10,000 levels deep", nested(10_000)],
    ["empty", ""],
  ];
  for (const [name, body] of bodies) {
    test(`${name}: -32700 with id null and status 400, no receipt, and the server keeps serving`, async () => {
      const connection = await connect(open);
      await connection.write(post(body));
      const response = await connection.response();
      assert.equal(response?.status, 400);
      assert.equal(response?.headers["content-type"], "application/json");
      const reply = JSON.parse(response?.body ?? "") as JsonObject;
      assert.equal(reply["id"], null);
      assert.equal((reply["error"] as JsonObject)["code"], -32700);
      // The same connection still answers.
      await connection.write(post(plain));
      assert.equal((await connection.response())?.status, 200);
      connection.close();
      const receipts = await control(
        open.server.controlEndpoint,
        "GET",
        "/receipts",
      );
      assert.equal(receipts.status, 200);
      await control(open.server.controlEndpoint, "POST", "/reset");
    });
  }

  test("512 levels of nesting are still JSON (the request is just invalid)", async () => {
    const connection = await connect(open);
    await connection.write(
      post(
        `{"jsonrpc":"2.0","id":"x","method":"hooks/intercept","params":${nested(511)}}`,
      ),
    );
    const reply = JSON.parse(
      (await connection.response())?.body ?? "",
    ) as JsonObject;
    assert.equal((reply["error"] as JsonObject)["code"], -32602);
    connection.close();
    await control(open.server.controlEndpoint, "POST", "/reset");
  });
});

describe("load", () => {
  test("200 connections at once are all answered (listen backlog >= 128)", async () => {
    const connections = Array.from(
      { length: 200 },
      () => new RawConnection(open.port),
    );
    await Promise.all(connections.map((c) => c.write(post(plain))));
    const statuses = await Promise.all(
      connections.map(async (c) => (await c.response())?.status),
    );
    assert.deepEqual(
      statuses,
      connections.map(() => 200),
    );
    for (const c of connections) c.close();
    await control(open.server.controlEndpoint, "POST", "/reset");
  });
});
