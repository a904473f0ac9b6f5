// The lifecycle server's rules (docs/LIFECYCLE.md, "Server") over real
// sockets: readiness with the upload endpoint, intercepts held until their
// id is released (sticky), reply sequences, unknown ids, observations
// (schema, stored refs, the hostile answer, 204, a held observer's
// `observer-blocked` just before `observed`), every upload status rule,
// the control API and its bounded waits, stdio (replies held while later
// lines are answered, /emit, the hostile line after the receipt), the
// config's suite. Everything the server writes is checked against the
// contract's schemas.

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { rmSync } from "node:fs";
import http from "node:http";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import type { JsonObject } from "../sdk/json.js";
import { LineReader } from "../sdk/stdioTransport.js";
import { assertContract } from "./contractSchemas.js";
import {
  attachmentItem,
  label,
  note,
  ok,
  req,
  scenarioFile,
  serverConfig,
  setInput,
  sha,
  startLifecycleInProcess,
  startLifecycleServer,
  STRANGER_TOKEN,
  UPLOAD_TOKEN,
  type LifecycleReadiness,
} from "./lifecycleHarness.js";
import {
  ADAPTER_DIR,
  CLI,
  control,
  exited,
  runCli,
  tempDir,
  waitForFile,
  writeJson,
  type RunningServer,
} from "./processes.js";
import { head, RawConnection } from "./raw.js";

const work = tempDir("ahp-ts-lifecycle-server-");
after(() => rmSync(work, { recursive: true, force: true }));

/** The scenarios every server test runs against. */
const ROWS: JsonObject[] = [
  {
    id: "held",
    requests: { a: req("held:a") },
    responses: { a: ok("held:a", [setInput("settled"), note("published")]) },
  },
  {
    id: "foreign",
    requests: { a: req("foreign:a") },
    // Sent unchanged, even though it carries another id.
    responses: { a: ok("someone-else", []) },
  },
  {
    id: "sequence",
    requests: { a: req("sequence:a") },
    responses: { a: ok("sequence:a", [note("fallback")]) },
    responseSequences: {
      a: [
        ok("sequence:a", [note("first")]),
        ok("sequence:a", [note("second")]),
      ],
    },
  },
  {
    id: "content",
    requests: {
      a: req(
        "content:a",
        { value: "original" },
        { items: [attachmentItem("item", "PLACEHOLDER")] },
      ),
    },
    responses: { a: ok("content:a", []) },
  },
  {
    id: "stdio",
    requests: { a: req("stdio:a"), b: req("stdio:b") },
    responses: { a: ok("stdio:a", [note("a")]), b: ok("stdio:b", [note("b")]) },
  },
];
const file = scenarioFile(join(work, "scenarios.json"), ROWS);

interface Answer {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  readonly text: string;
}

/** POSTs JSON (or raw text) to `url`; resolves with status, headers and body. */
function post(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<Answer> {
  const text = typeof body === "string" ? body : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const request = http.request(url, {
      method: "POST",
      agent: false,
      headers: {
        "Content-Type": "application/json",
        "Content-Length": String(Buffer.byteLength(text)),
        ...headers,
      },
    });
    request.on("error", reject);
    request.on("response", (response) => {
      const chunks: Buffer[] = [];
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.on("end", () =>
        resolve({
          status: response.statusCode ?? 0,
          headers: response.headers,
          text: Buffer.concat(chunks).toString("utf8"),
        }),
      );
    });
    request.end(text);
  });
}

const observation = (
  eventId: string,
  items?: JsonObject[],
  base = req(eventId),
): JsonObject => {
  const event = structuredClone(
    (base["params"] as JsonObject)["event"],
  ) as JsonObject;
  event["id"] = eventId;
  if (items !== undefined) event["items"] = items;
  return {
    jsonrpc: "2.0",
    method: "hooks/observe",
    params: { protocolVersion: "draft", event },
  };
};

async function receipts(readiness: LifecycleReadiness): Promise<JsonObject[]> {
  const answer = await control(readiness.controlEndpoint, "GET", "/receipts");
  assert.equal(answer.status, 200);
  assertContract(
    "lifecycle-control.schema.json#/$defs/receipts",
    answer.body,
    "GET /receipts",
  );
  return (answer.body as { entries: JsonObject[] }).entries;
}

/** Uploads with raw headers; `body` is what is written, `length` the Content-Length. */
async function rawUpload(
  readiness: LifecycleReadiness,
  options: {
    body?: Buffer;
    headers?: Record<string, string | number>;
    length?: number | null;
    token?: string | null;
    halfClose?: boolean;
    rawHeaderLines?: string;
  } = {},
): Promise<{ status: number | null; body: string; ms: number }> {
  const body = options.body ?? Buffer.from("some bytes");
  const url = new URL(readiness.uploadEndpoint);
  const connection = new RawConnection(Number(url.port));
  await connection.connected;
  const headers: Record<string, string | number> = {
    "Content-Type": "application/octet-stream",
    "AHP-Content-SHA256": sha(body),
    ...(options.length === null
      ? {}
      : { "Content-Length": options.length ?? body.length }),
    ...(options.token === null
      ? {}
      : { Authorization: `Bearer ${options.token ?? UPLOAD_TOKEN}` }),
    ...options.headers,
  };
  let text = head("POST", url.pathname, headers);
  if (options.rawHeaderLines !== undefined)
    text = text.replace(/\r\n\r\n$/, `\r\n${options.rawHeaderLines}\r\n\r\n`);
  const started = Date.now();
  await connection.write(Buffer.concat([Buffer.from(text), body]));
  if (options.halfClose === true) connection.halfClose();
  const response = await connection.response();
  connection.close();
  return {
    status: response?.status ?? null,
    body: response?.body ?? "",
    ms: Date.now() - started,
  };
}

describe("lifecycle server over HTTP (a real process)", () => {
  let server: RunningServer;
  let ready: LifecycleReadiness;
  before(async () => {
    const directory = tempDir("ahp-ts-lc-http-");
    ({ server, readiness: ready } = await startLifecycleServer(
      directory,
      file,
    ));
  });
  after(() => server.stop());

  test("readiness names the AHP, control and upload endpoints", () => {
    assertContract("readiness.schema.json", ready, "readiness");
    assert.match(
      ready.endpoint ?? "",
      /^http:\/\/127\.0\.0\.1:\d+\/intercept$/,
    );
    assert.match(ready.uploadEndpoint, /^http:\/\/127\.0\.0\.1:\d+\/upload$/);
    assert.notEqual(
      new URL(ready.uploadEndpoint).port,
      new URL(ready.endpoint ?? "").port,
    );
    assert.notEqual(
      new URL(ready.uploadEndpoint).port,
      new URL(ready.controlEndpoint).port,
    );
  });

  test("GET /capabilities: the bare tool.before capabilities of the manifest hooks/capabilities answers, unrecorded", async () => {
    const port = Number(new URL(ready.endpoint ?? "").port);
    const before = (await receipts(ready)).length;
    const connection = new RawConnection(port);
    await connection.write(head("GET", "/capabilities"));
    const got = await connection.response();
    const body = JSON.stringify({
      jsonrpc: "2.0",
      id: "d-1",
      method: "hooks/capabilities",
      params: { protocolVersion: "draft" },
    });
    await connection.write(
      head("POST", "/intercept", {
        "Content-Type": "application/json",
        "Content-Length": Buffer.byteLength(body),
      }) + body,
    );
    const discovery = await connection.response();
    connection.close();
    assert.equal(got?.status, 200);
    assert.match(got?.headers["content-type"] ?? "", /^application\/json/);
    const manifest = (
      (JSON.parse(discovery?.body ?? "") as JsonObject)["result"] as JsonObject
    )["manifest"] as JsonObject;
    const toolBefore = (manifest["events"] as JsonObject[]).filter(
      (entry) =>
        entry["event"] === "tool.before" &&
        (entry["modes"] as string[]).includes("intercept"),
    );
    assert.equal(toolBefore.length, 1);
    assert.deepEqual(
      JSON.parse(got?.body ?? ""),
      toolBefore[0]?.["capabilities"],
    );
    assert.equal((await receipts(ready)).length, before);
  });

  test("an intercept is received, held until /release, then replied; the release is sticky", async () => {
    const before = (await receipts(ready)).length;
    const pending = post(ready.endpoint ?? "", req("held:a"));
    const waited = await control(ready.controlEndpoint, "POST", "/wait", {
      id: "held:a",
      count: 1,
    });
    assert.deepEqual(waited, { status: 200, body: { ok: true } });
    let entries = (await receipts(ready)).slice(before);
    assert.deepEqual(
      entries.map((e) => e["kind"]),
      ["received"],
    );
    assert.deepEqual(entries[0]?.["message"], req("held:a"));
    assert.deepEqual(
      await control(ready.controlEndpoint, "POST", "/release", {
        id: "held:a",
      }),
      { status: 200, body: { ok: true } },
    );
    const answer = await pending;
    assert.equal(answer.status, 200);
    assert.deepEqual(
      JSON.parse(answer.text),
      ok("held:a", [setInput("settled"), note("published")]),
    );
    // Sticky: the next request with that id is answered at once.
    assert.equal((await post(ready.endpoint ?? "", req("held:a"))).status, 200);
    entries = (await receipts(ready)).slice(before);
    assert.deepEqual(
      entries.map((e) => label(e)),
      [
        "received:held:a",
        "replied:held:a",
        "received:held:a",
        "replied:held:a",
      ],
    );
  });

  test("the scripted reply goes out unchanged, even with another id", async () => {
    await control(ready.controlEndpoint, "POST", "/release", {
      id: "foreign:a",
    });
    const answer = await post(ready.endpoint ?? "", req("foreign:a"));
    assert.deepEqual(JSON.parse(answer.text), ok("someone-else", []));
  });

  test("the n-th receipt of an id gets the n-th reply of its sequence, the last one past its end", async () => {
    await control(ready.controlEndpoint, "POST", "/release", {
      id: "sequence:a",
    });
    const texts: string[] = [];
    for (let n = 0; n < 3; n += 1) {
      const answer = JSON.parse(
        (await post(ready.endpoint ?? "", req("sequence:a"))).text,
      ) as JsonObject;
      texts.push(
        ((answer["result"] as JsonObject)["effects"] as JsonObject[])[0]?.[
          "text"
        ] as string,
      );
    }
    assert.deepEqual(texts, ["first", "second", "second"]);
  });

  test("an unknown id gets -32602 at once, recorded as received and replied, never held", async () => {
    const before = (await receipts(ready)).length;
    const answer = await post(ready.endpoint ?? "", req("nobody:a"));
    assert.equal(answer.status, 200);
    assert.equal(
      (JSON.parse(answer.text) as { error: { code: number } }).error.code,
      -32602,
    );
    const entries = (await receipts(ready)).slice(before);
    assert.deepEqual(
      entries.map((e) => label(e)),
      ["received:nobody:a", "replied:nobody:a"],
    );
  });

  test("observations: schema (400), stored refs (409), the hostile answer for a scenario's event, 204 otherwise", async () => {
    const before = (await receipts(ready)).length;
    const invalid = observation("held:a");
    (invalid["params"] as JsonObject)["event"] = { id: "held:a" };
    assert.equal(
      (await post(new URL("/observe", ready.endpoint ?? "").href, invalid))
        .status,
      400,
    );
    assert.equal(
      (await post(ready.endpoint ?? "", { ...observation("held:a"), id: 7 }))
        .status,
      400,
    );
    const unknownRef = observation("held:a", [
      attachmentItem("x", "urn:uuid:never-uploaded"),
    ]);
    assert.equal((await post(ready.endpoint ?? "", unknownRef)).status, 409);
    // A tool.after's items are messages: the body refs of their parts count
    // too (every body ref of the items must name stored bytes).
    const afterEvent = structuredClone(
      (observation("held:after")["params"] as JsonObject)["event"],
    ) as JsonObject;
    Object.assign(afterEvent, {
      type: "tool.after",
      outcome: "ok",
      execution: { status: "executed" },
      items: [
        {
          id: "m",
          role: "tool",
          parts: [attachmentItem("x", "urn:uuid:never-uploaded")],
        },
      ],
    });
    const inMessage: JsonObject = {
      jsonrpc: "2.0",
      method: "hooks/observe",
      params: { protocolVersion: "draft", event: afterEvent },
    };
    assert.equal((await post(ready.endpoint ?? "", inMessage)).status, 409);
    const sized = observation("held:a", [
      {
        ...attachmentItem("x", "urn:uuid:never-uploaded"),
        body: { ref: "r", size: 3 },
      },
    ]);
    assert.equal((await post(ready.endpoint ?? "", sized)).status, 400);
    assert.deepEqual(
      (await receipts(ready)).slice(before),
      [],
      "nothing refused is recorded",
    );
    // A scenario's event: status 200 with an unsolicited deny, on any path.
    const hostile = await post(
      new URL("/anywhere", ready.endpoint ?? "").href,
      observation("held:a"),
    );
    assert.equal(hostile.status, 200);
    assert.deepEqual(JSON.parse(hostile.text), {
      jsonrpc: "2.0",
      id: "unsolicited-observer",
      result: {
        protocolVersion: "draft",
        effects: [{ type: "deny", reason: "observer must not decide" }],
      },
    });
    const plain = await post(ready.endpoint ?? "", observation("elsewhere"));
    assert.equal(plain.status, 204);
    assert.equal(plain.text, "");
    const entries = (await receipts(ready)).slice(before);
    assert.deepEqual(entries, [
      {
        kind: "observed",
        eventId: "held:a",
        event: (observation("held:a")["params"] as JsonObject)["event"] ?? null,
        message: observation("held:a"),
      },
      {
        kind: "observed",
        eventId: "elsewhere",
        event:
          (observation("elsewhere")["params"] as JsonObject)["event"] ?? null,
        message: observation("elsewhere"),
      },
    ]);
  });

  test("uploads: 201 {ref, size, sha256} with a receiver ref; identical bytes may share it, changed bytes never do", async () => {
    const first = await rawUpload(ready, { body: Buffer.from("hello bytes") });
    assert.equal(first.status, 201);
    const receipt = JSON.parse(first.body) as {
      ref: string;
      size: number;
      sha256: string;
    };
    assert.deepEqual(Object.keys(receipt).sort(), ["ref", "sha256", "size"]);
    assert.match(receipt.ref, /^urn:uuid:[0-9a-f-]{36}$/);
    assert.equal(receipt.size, 11);
    assert.equal(receipt.sha256, sha("hello bytes"));
    const again = JSON.parse(
      (await rawUpload(ready, { body: Buffer.from("hello bytes") })).body,
    ) as { ref: string };
    assert.equal(again.ref, receipt.ref, "identical bytes share the ref here");
    const changed = JSON.parse(
      (await rawUpload(ready, { body: Buffer.from("hello bytez") })).body,
    ) as { ref: string };
    assert.notEqual(changed.ref, receipt.ref);
    const empty = await rawUpload(ready, { body: Buffer.alloc(0) });
    assert.equal(empty.status, 201);
    // A stored ref may now be observed and carried by an intercept.
    assert.equal(
      (
        await post(
          ready.endpoint ?? "",
          observation("elsewhere", [attachmentItem("i", receipt.ref)]),
        )
      ).status,
      204,
    );
  });

  test("uploads: every refusal, recorded with the declared size and hash", async () => {
    const before = (await receipts(ready)).length;
    const body = Buffer.from("secret");
    const cases: [string, Parameters<typeof rawUpload>[1], number][] = [
      ["no credential", { body, token: null }, 401],
      ["another credential", { body, token: STRANGER_TOKEN }, 401],
      [
        "two Authorization headers",
        { body, rawHeaderLines: `Authorization: Bearer ${UPLOAD_TOKEN}` },
        400,
      ],
      [
        "chunked",
        {
          body: Buffer.from("6\r\nsecret\r\n0\r\n\r\n"),
          length: null,
          headers: {
            "Transfer-Encoding": "chunked",
            "AHP-Content-SHA256": sha(body),
          },
        },
        400,
      ],
      [
        "content-encoded",
        { body, headers: { "Content-Encoding": "gzip" } },
        400,
      ],
      [
        "another content type",
        { body, headers: { "Content-Type": "application/json" } },
        400,
      ],
      [
        "a malformed hash header",
        { body, headers: { "AHP-Content-SHA256": "ABC" } },
        400,
      ],
      [
        "a hash of other bytes",
        { body, headers: { "AHP-Content-SHA256": sha("other") } },
        400,
      ],
    ];
    for (const [what, options, status] of cases)
      assert.equal((await rawUpload(ready, options)).status, status, what);
    const entries = (await receipts(ready)).slice(before);
    assert.deepEqual(
      entries.map((e) => e["status"]),
      cases.map(([, , status]) => status),
    );
    for (const entry of entries) {
      assert.equal(entry["kind"], "upload");
      assert.equal(hasRef(entry), false, "a refusal has no ref");
    }
    assert.deepEqual(entries[0], {
      kind: "upload",
      status: 401,
      size: 6,
      sha256: sha(body),
    });
    assert.deepEqual(entries[7], {
      kind: "upload",
      status: 400,
      size: 6,
      sha256: sha("other"),
    });
  });

  test("uploads: over 1 MiB is 413 without the body being sent", async () => {
    const before = (await receipts(ready)).length;
    const answer = await rawUpload(ready, {
      body: Buffer.alloc(0),
      length: 1024 * 1024 + 1,
    });
    assert.equal(answer.status, 413);
    assert.deepEqual(
      (await receipts(ready))
        .slice(before)
        .map((e) => [e["status"], e["size"]]),
      [[413, 1048577]],
    );
  });

  test("uploads: a body shorter than its length, then a half-close, is 400 at once", async () => {
    const before = (await receipts(ready)).length;
    const body = Buffer.from("body");
    const answer = await rawUpload(ready, {
      body,
      length: 99,
      halfClose: true,
    });
    assert.equal(answer.status, 400);
    assert.ok(answer.ms < 5000, `answered after ${answer.ms} ms`);
    assert.deepEqual((await receipts(ready)).slice(before), [
      { kind: "upload", status: 400, size: 99, sha256: sha(body) },
    ]);
  });

  test("uploads: the path and the method", async () => {
    const url = new URL(ready.uploadEndpoint);
    url.pathname = "/elsewhere";
    assert.equal((await post(url.href, "x")).status, 404);
    const answer = await new Promise<number>((resolve) =>
      http.get(ready.uploadEndpoint, (response) => {
        response.resume();
        resolve(response.statusCode ?? 0);
      }),
    );
    assert.equal(answer, 405);
  });

  test("an intercept naming bytes never stored is 409 and not received; one naming stored bytes is received", async () => {
    const stored = JSON.parse(
      (await rawUpload(ready, { body: Buffer.from("content") })).body,
    ) as { ref: string };
    const before = (await receipts(ready)).length;
    const missing = req(
      "content:a",
      { value: "original" },
      { items: [attachmentItem("item", "urn:uuid:nothing")] },
    );
    assert.equal((await post(ready.endpoint ?? "", missing)).status, 409);
    await control(ready.controlEndpoint, "POST", "/release", {
      id: "content:a",
    });
    const present = req(
      "content:a",
      { value: "original" },
      { items: [attachmentItem("item", stored.ref)] },
    );
    assert.equal((await post(ready.endpoint ?? "", present)).status, 200);
    assert.deepEqual(
      (await receipts(ready)).slice(before).map((e) => e["kind"]),
      ["received", "replied"],
    );
  });

  test("control: health, marks, bad requests, /emit is stdio only", async () => {
    assert.deepEqual(await control(ready.controlEndpoint, "GET", "/health"), {
      status: 200,
      body: { ready: true },
    });
    const before = (await receipts(ready)).length;
    for (const kind of [
      "acquired",
      "accepted",
      "cancelled",
      "discarded",
      "chain-settled",
      "observer-blocked",
    ])
      assert.deepEqual(
        await control(ready.controlEndpoint, "POST", "/mark", {
          scenario: "s",
          kind,
          id: "held:a",
        }),
        { status: 200, body: { ok: true } },
      );
    const entries = (await receipts(ready)).slice(before);
    assert.deepEqual(entries[0], {
      kind: "acquired",
      id: "held:a",
      scenario: "s",
    });
    assert.equal(entries.length, 6);
    assert.equal(
      (
        await control(ready.controlEndpoint, "POST", "/mark", {
          scenario: "s",
          kind: "received",
          id: "x",
        })
      ).status,
      400,
    );
    assert.equal(
      (await control(ready.controlEndpoint, "POST", "/release", {})).status,
      400,
    );
    assert.equal(
      (
        await control(ready.controlEndpoint, "POST", "/emit", {
          response: ok("x", []),
        })
      ).status,
      400,
    );
    assert.equal(
      (await control(ready.controlEndpoint, "POST", "/nothing", {})).status,
      404,
    );
  });
});

describe("lifecycle server: bounded waits and slow uploads (in process, short limits)", () => {
  let running: Awaited<ReturnType<typeof startLifecycleInProcess>>;
  before(async () => {
    running = await startLifecycleInProcess(
      tempDir("ahp-ts-lc-inproc-"),
      ROWS,
      {
        limits: { stallMs: 300 },
        waitLimitMs: 200,
      },
    );
  });
  after(async () => {
    running.server.stop();
    await running.server.stopped;
  });

  test("a wait that is not satisfied in time is 408", async () => {
    const { controlEndpoint } = running.readiness;
    assert.equal(
      (
        await control(controlEndpoint, "POST", "/wait", {
          id: "held:a",
          count: 1,
        })
      ).status,
      408,
    );
    assert.equal(
      (
        await control(controlEndpoint, "POST", "/wait-observed", {
          eventId: "held:a",
          count: 1,
        })
      ).status,
      408,
    );
    assert.deepEqual(
      await control(controlEndpoint, "POST", "/wait", {
        id: "held:a",
        count: 0,
      }),
      { status: 200, body: { ok: true } },
    );
  });

  test("an upload body that stalls short of its length is refused and recorded", async () => {
    const answer = await rawUpload(running.readiness, {
      body: Buffer.from("ab"),
      length: 10,
    });
    assert.equal(answer.status, 400);
    assert.deepEqual(running.log.snapshot().at(-1), {
      kind: "upload",
      status: 400,
      size: 10,
      sha256: sha("ab"),
    });
  });

  test("/shutdown lets every held reply go", async () => {
    const pending = post(running.readiness.endpoint ?? "", req("stdio:b"));
    await control(running.readiness.controlEndpoint, "POST", "/wait", {
      id: "stdio:b",
      count: 1,
    });
    assert.deepEqual(
      await control(running.readiness.controlEndpoint, "POST", "/shutdown"),
      { status: 200, body: { ok: true } },
    );
    assert.equal((await pending).status, 200);
    await running.server.stopped;
  });
});

function hasRef(entry: JsonObject): boolean {
  return Object.prototype.hasOwnProperty.call(entry, "ref");
}

describe("lifecycle server over stdio (a real process)", () => {
  test("keeps answering while a reply is held; /emit writes the frame; the hostile line follows an observation", async () => {
    const directory = tempDir("ahp-ts-lc-stdio-");
    const readinessFile = join(directory, "ready.json");
    const config = writeJson(
      join(directory, "server.json"),
      serverConfig(directory, file, { transport: "stdio", readinessFile }),
    );
    const child = spawn(
      process.execPath,
      [CLI, "lifecycle-server", "--config", config],
      {
        cwd: ADAPTER_DIR,
        stdio: ["pipe", "pipe", "inherit"],
      },
    );
    const lines = new LineReader(child.stdout);
    const next = async () =>
      JSON.parse((await lines.next())?.toString() ?? "null") as JsonObject;
    try {
      await waitForFile(readinessFile);
      const ready = (await import("node:fs")).readFileSync(
        readinessFile,
        "utf8",
      );
      const readiness = JSON.parse(ready) as LifecycleReadiness;
      assertContract("readiness.schema.json", readiness, "stdio readiness");
      assert.equal(readiness.endpoint, null);
      assert.match(
        readiness.uploadEndpoint,
        /^http:\/\/127\.0\.0\.1:\d+\/upload$/,
      );
      child.stdin.write(`${JSON.stringify(req("stdio:a"))}\n`);
      await control(readiness.controlEndpoint, "POST", "/wait", {
        id: "stdio:a",
        count: 1,
      });
      await control(readiness.controlEndpoint, "POST", "/release", {
        id: "stdio:b",
      });
      child.stdin.write(`${JSON.stringify(req("stdio:b"))}\n`);
      assert.equal(
        (await next())["id"],
        "stdio:b",
        "b is answered while a is held",
      );
      const stray = ok("stdio:a", [note("stray")]);
      assert.deepEqual(
        await control(readiness.controlEndpoint, "POST", "/emit", {
          response: stray,
        }),
        {
          status: 200,
          body: { ok: true },
        },
      );
      assert.deepEqual(await next(), stray);
      child.stdin.write(`${JSON.stringify(observation("stdio:a"))}\n`);
      assert.equal((await next())["id"], "unsolicited-observer");
      // An invalid observation: a stderr line, nothing recorded, no answer.
      child.stdin.write(
        `${JSON.stringify({ jsonrpc: "2.0", method: "hooks/observe", params: {} })}\n`,
      );
      child.stdin.write(`${JSON.stringify(observation("not-a-scenario"))}\n`);
      await control(readiness.controlEndpoint, "POST", "/wait-observed", {
        eventId: "not-a-scenario",
        count: 1,
      });
      await control(readiness.controlEndpoint, "POST", "/release", {
        id: "stdio:a",
      });
      assert.equal((await next())["id"], "stdio:a");
      const answer = await control(
        readiness.controlEndpoint,
        "GET",
        "/receipts",
      );
      const entries = (answer.body as { entries: JsonObject[] }).entries;
      assert.deepEqual(
        entries.map((e) => label(e)),
        [
          "received:stdio:a",
          "received:stdio:b",
          "replied:stdio:b",
          "emitted:stdio:a",
          "observed:stdio:a",
          "observed:not-a-scenario",
          "replied:stdio:a",
        ],
      );
      child.stdin.end();
      assert.equal(await exited(child), 0);
    } finally {
      child.kill("SIGKILL");
    }
  });
});

/** A chain with held observers and one without, each boundary event id its own (not the request id). */
const CHAIN_ROWS: JsonObject[] = (["held-chain", "plain-chain"] as const).map(
  (id) => {
    const request = req(`${id}:a`);
    ((request["params"] as JsonObject)["event"] as JsonObject)["id"] =
      `${id}:event`;
    return {
      id,
      chain: {
        subscriptions: [],
        interrupt: false,
        holdObservers: id === "held-chain",
      },
      requests: { a: request },
      responses: { a: ok(`${id}:a`, [{ type: "deny", reason: "d" }]) },
    };
  },
);
const chainFile = scenarioFile(join(work, "chains.json"), CHAIN_ROWS);

describe("lifecycle server: a held observer's notification is recorded observer-blocked just before observed", () => {
  // As upstream servers record it: {kind, id: the event id}, no scenario; held
  // observers only; the answer unchanged (the hostile frame, nothing held).
  const held = observation("held-chain:event");
  const notes = [held, observation("plain-chain:event"), held];
  const observed = (message: JsonObject): JsonObject => {
    const event = (message["params"] as JsonObject)["event"] as JsonObject;
    return { kind: "observed", eventId: event["id"] ?? null, event, message };
  };
  const blocked = { kind: "observer-blocked", id: "held-chain:event" };
  const expected = [
    blocked,
    observed(held),
    observed(notes[1] as JsonObject),
    blocked,
    observed(held),
  ];

  test("over HTTP", async () => {
    const { server, readiness } = await startLifecycleServer(
      tempDir("ahp-ts-lc-held-http-"),
      chainFile,
    );
    try {
      for (const message of notes) {
        const answer = await post(
          new URL("/observe", readiness.endpoint ?? "").href,
          message,
        );
        assert.equal(answer.status, 200);
        assert.equal(
          (JSON.parse(answer.text) as JsonObject)["id"],
          "unsolicited-observer",
        );
      }
      assert.deepEqual(await receipts(readiness), expected);
    } finally {
      await server.stop();
    }
  });

  test("over stdio", async () => {
    const directory = tempDir("ahp-ts-lc-held-stdio-");
    const readinessFile = join(directory, "ready.json");
    const config = writeJson(
      join(directory, "server.json"),
      serverConfig(directory, chainFile, { transport: "stdio", readinessFile }),
    );
    const child = spawn(
      process.execPath,
      [CLI, "lifecycle-server", "--config", config],
      { cwd: ADAPTER_DIR, stdio: ["pipe", "pipe", "inherit"] },
    );
    const lines = new LineReader(child.stdout);
    try {
      await waitForFile(readinessFile);
      const readiness = JSON.parse(
        (await import("node:fs")).readFileSync(readinessFile, "utf8"),
      ) as LifecycleReadiness;
      for (const message of notes) {
        child.stdin.write(`${JSON.stringify(message)}\n`);
        const line = JSON.parse(
          (await lines.next())?.toString() ?? "null",
        ) as JsonObject;
        assert.equal(line["id"], "unsolicited-observer");
      }
      assert.deepEqual(await receipts(readiness), expected);
      child.stdin.end();
      assert.equal(await exited(child), 0);
    } finally {
      child.kill("SIGKILL");
    }
  });
});

describe("lifecycle server config", () => {
  test("an unknown suite, or no upload credential, is exit 2 naming the field", async () => {
    const directory = tempDir("ahp-ts-lc-config-");
    for (const [extra, field] of [
      [{ suite: "nonesuch" }, "suite"],
      [{ uploadAuth: null }, "uploadAuth"],
      [{ uploadAuth: {} }, "uploadAuth.token"],
    ] as const) {
      const config = writeJson(
        join(directory, `${field}.json`),
        serverConfig(directory, file, extra),
      );
      const result = await runCli("lifecycle-server", config);
      assert.equal(result.code, 2, result.stderr);
      assert.match(
        result.stderr,
        new RegExp(`field ${field.replace(".", "\\.")}:`),
      );
      assert.equal(result.stderr.trim().split("\n").length, 1);
    }
  });
});
