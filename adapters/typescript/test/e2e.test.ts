// End to end: the real server process and the real client process, over HTTP
// (plain, TLS, mTLS, bearer, OAuth/workload ES256, compat HS256) and stdio.

import assert from "node:assert/strict";
import { existsSync, readFileSync, rmSync } from "node:fs";
import https from "node:https";
import http from "node:http";
import net from "node:net";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import type { JsonObject } from "../sdk/json.js";
import { assertContract } from "./contractSchemas.js";
import { makeTrust, type TrustFiles } from "./pki.js";
import {
  ADAPTER_DIR,
  processGone,
  control,
  readBlindRows,
  readReceiptLog,
  runCli,
  runClientProcess,
  startServer,
  tempDir,
  UPSTREAM_FILE,
  writeJson,
  type BlindRow,
  type RunningServer,
} from "./processes.js";
import {
  AUDIENCE,
  claims,
  es256Token,
  HS_SECRET,
  hs256Token,
  jwtAuth,
  type Profile,
} from "./tokens.js";

const work = tempDir("ahp-ts-e2e-");
after(() => {
  rmSync(work, { recursive: true, force: true });
  rmSync(trust.directory, { recursive: true, force: true });
});

// A small blind scenario file: a slice of the upstream core set.
const rows: BlindRow[] = readBlindRows(UPSTREAM_FILE).filter(
  (_, index) => index % 9 === 0,
);
const scenarioFile = writeJson(join(work, "scenarios.json"), {
  version: 1,
  scenarios: rows,
});

let trust: TrustFiles;
/** The in-process replay of the scenario file: what every transport must derive too. */
let replayed: Report;
before(async () => {
  trust = makeTrust();
  const reportFile = join(work, "replay-report.json");
  const config = writeJson(join(work, "replay.json"), {
    scenarioFile,
    reportFile,
  });
  assert.equal((await runCli("replay", config)).code, 0);
  replayed = JSON.parse(readFileSync(reportFile, "utf8")) as Report;
  assertContract("client-report.schema.json", replayed);
  for (const row of replayed.results)
    assert.equal(row.status, "completed", `${row.id}: ${row.error ?? ""}`);
});
interface Report {
  language: string;
  results: {
    id: string;
    status: string;
    actual?: JsonObject;
    error?: string;
  }[];
}

type Receipts = ReturnType<typeof readReceiptLog>;

/** Writes the config of a server named `name`, its readiness and receipt files beside it. */
function serverFiles(
  name: string,
  transport: string,
  auth: JsonObject,
  extra: JsonObject = {},
): { config: string; readinessFile: string; receiptLog: string } {
  const readinessFile = join(work, `${name}-ready.json`);
  const receiptLog = join(work, `${name}-receipts.jsonl`);
  const config = writeJson(join(work, `${name}-server.json`), {
    transport,
    readinessFile,
    scenarioFile,
    receiptLog,
    auth,
    ...extra,
  });
  return { config, readinessFile, receiptLog };
}

/** Runs an HTTP server process for the duration of `use`. */
async function withServer<T>(
  name: string,
  auth: JsonObject,
  use: (server: RunningServer, receiptLog: string) => Promise<T>,
  extra: JsonObject = {},
): Promise<T> {
  const files = serverFiles(name, "http", auth, extra);
  const server = await startServer(files.config, files.readinessFile);
  try {
    return await use(server, files.receiptLog);
  } finally {
    await server.stop();
  }
}

/** Runs a client process over the blind file (`fields` completes its config); it must exit 0. */
async function runClient(name: string, fields: JsonObject): Promise<Report> {
  const reportFile = join(work, `${name}-report.json`);
  const config = writeJson(join(work, `${name}-client.json`), {
    scenarioFile,
    reportFile,
    auth: { mode: "none" },
    timeoutMs: 10000,
    ...fields,
  });
  assert.equal(await runClientProcess(config), 0, "the client exits 0");
  const report = JSON.parse(readFileSync(reportFile, "utf8")) as Report;
  assertContract("client-report.schema.json", report);
  return report;
}

let counter = 0;

interface Combination {
  readonly serverAuth: JsonObject;
  readonly clientAuth: JsonObject;
  readonly serverTls?: JsonObject;
  readonly clientTls?: JsonObject;
}

/** Runs one HTTP combination: server to readiness, client to completion, shutdown. */
function runHttp(combination: Combination): Promise<{
  report: Report;
  receipts: Receipts;
  endpoint: string;
}> {
  const name = `c${++counter}`;
  return withServer(
    name,
    combination.serverAuth,
    async (server, receiptLog) => {
      const endpoint = server.readiness.endpoint ?? "";
      const report = await runClient(name, {
        transport: "http",
        endpoint,
        auth: combination.clientAuth,
        ...(combination.clientTls ? { tls: combination.clientTls } : {}),
      });
      return { report, receipts: readReceiptLog(receiptLog), endpoint };
    },
    combination.serverTls ? { tls: combination.serverTls } : {},
  );
}

/** Every row completed, and derived what the in-process replay derived (the transport changed nothing). */
function assertAllPass(report: Report): void {
  assert.equal(report.language, "typescript");
  for (const row of report.results)
    assert.equal(row.status, "completed", `${row.id}: ${row.error ?? ""}`);
  assert.deepEqual(report.results, replayed.results);
}

function assertReceipted(receipts: Receipts): void {
  for (const receipt of receipts)
    assertContract("receipt-line.schema.json", receipt, "receipt log line");
  assert.deepEqual(
    receipts.map((receipt) => receipt.kind),
    rows.map(() => "request"),
  );
  assert.deepEqual(
    receipts.map((receipt) => receipt.message),
    rows.map((scenario) => scenario.request),
  );
}

/** Every row passed and the server receipted every request, in order. */
function assertServed(run: { report: Report; receipts: Receipts }): void {
  assertAllPass(run.report);
  assertReceipted(run.receipts);
}

function assertAllFailed(report: Report): void {
  assert.equal(report.results.length, rows.length);
  for (const row of report.results) {
    assert.equal(row.status, "failed", row.id);
    assert.equal(typeof row.error, "string");
    assert.equal("actual" in row, false);
  }
}

/** Server and client TLS of the strict profile: the test CA's server certificate. */
const strictTls = () => ({
  serverTls: { certFile: trust.serverCertFile, keyFile: trust.serverKeyFile },
  clientTls: { caFile: trust.caFile },
});

/** A JWT over `payload`: ES256 with the token key (strict) or HS256 with the shared secret (compat). */
function signFor(
  profile: Profile,
  payload: ReturnType<typeof claims>,
): Promise<string> {
  return profile === "strict"
    ? es256Token(payload, trust.tokenPrivateKey)
    : hs256Token(payload);
}

/** A loopback token endpoint: HTTPS with ES256 tokens (strict) or HTTP with HS256 (compat). */
async function withTokenEndpoint<T>(
  profile: Profile,
  use: (endpoint: string, issued: () => number) => Promise<T>,
): Promise<T> {
  let issued = 0;
  const handler = (
    request: http.IncomingMessage,
    response: http.ServerResponse,
  ) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => void answer());
    const answer = async () => {
      const form = new URLSearchParams(Buffer.concat(chunks).toString("utf8"));
      const ok =
        form.get("grant_type") === "client_credentials" &&
        form.get("client_id") === "client-1" &&
        form.get("client_secret") === "client-secret";
      if (!ok) {
        response.writeHead(401).end();
        return;
      }
      issued += 1;
      const body = JSON.stringify({
        access_token: await signFor(profile, claims()),
        token_type: "Bearer",
        expires_in: 3600,
      });
      response
        .writeHead(200, {
          "Content-Type": "application/json",
          "Content-Length": String(Buffer.byteLength(body)),
        })
        .end(body);
    };
  };
  const server =
    profile === "strict"
      ? https.createServer(
          {
            cert: readFileSync(trust.serverCertFile),
            key: readFileSync(trust.serverKeyFile),
          },
          handler,
        )
      : http.createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  try {
    return await use(
      `${profile === "strict" ? "https" : "http"}://127.0.0.1:${port}/token`,
      () => issued,
    );
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}

const workloadAssertion = (profile: Profile): Promise<string> =>
  signFor(profile, claims({ sub: "workload-1", purpose: "workload" }));

const jwtServerAuth = (mode: "oauth" | "workload", profile: Profile) =>
  jwtAuth(
    mode,
    profile,
    profile === "strict"
      ? { publicKeyFile: trust.tokenPublicKeyFile }
      : { signingKey: HS_SECRET },
  );

const bearer = (profile: Profile, token: string): JsonObject => ({
  mode: "bearer",
  profile,
  token,
});

const oauthClient = (profile: Profile, tokenEndpoint: string): JsonObject => ({
  mode: "oauth",
  profile,
  tokenEndpoint,
  clientId: "client-1",
  clientSecret: "client-secret",
  audience: AUDIENCE,
});

describe("HTTP end to end", () => {
  test("plain HTTP, no auth: every row derives its expectation; receipts in order", async () => {
    const run = await runHttp({
      serverAuth: { mode: "none" },
      clientAuth: { mode: "none" },
    });
    assert.match(run.endpoint, /^http:\/\/127\.0\.0\.1:\d+\/intercept$/);
    assertServed(run);
  });

  /** The server expects bearer-token-1 over strict TLS; the client sends `token`. */
  const strictBearer = (token: string) =>
    runHttp({
      serverAuth: bearer("strict", "bearer-token-1"),
      clientAuth: bearer("strict", token),
      ...strictTls(),
    });

  test("strict bearer over HTTPS", async () => {
    assertServed(await strictBearer("bearer-token-1"));
  });

  test("strict bearer with a wrong token: every row fails, nothing is receipted", async () => {
    const { report, receipts } = await strictBearer("bearer-token-2");
    assertAllFailed(report);
    assert.deepEqual(receipts, []);
  });

  test("strict oauth: token acquired once over HTTPS, ES256 verified", async () => {
    await withTokenEndpoint("strict", async (tokenEndpoint, issued) => {
      assertServed(
        await runHttp({
          serverAuth: jwtServerAuth("oauth", "strict"),
          clientAuth: oauthClient("strict", tokenEndpoint),
          ...strictTls(),
        }),
      );
      assert.equal(issued(), 1);
    });
  });

  /** A strict workload server; the client's assertion is signed as `signer` signs. */
  const strictWorkload = async (signer: Profile) =>
    runHttp({
      serverAuth: jwtServerAuth("workload", "strict"),
      clientAuth: {
        mode: "workload",
        profile: "strict",
        assertion: await workloadAssertion(signer),
      },
      ...strictTls(),
    });

  test("strict workload: the ES256 assertion is the bearer credential", async () => {
    assertAllPass((await strictWorkload("strict")).report);
  });

  test("strict workload refuses an HS256 (compat-signed) token", async () => {
    assertAllFailed((await strictWorkload("compat")).report);
  });

  test("strict mtls: a client certificate chaining to the CA is required", async () => {
    const mtls = { mode: "mtls", profile: "strict" };
    const withClientCertificate = (certFile: string, keyFile: string) =>
      runHttp({
        serverAuth: mtls,
        clientAuth: mtls,
        serverTls: { ...strictTls().serverTls, clientCaFile: trust.caFile },
        clientTls: { caFile: trust.caFile, certFile, keyFile },
      });
    const good = await withClientCertificate(
      trust.clientCertFile,
      trust.clientKeyFile,
    );
    assertAllPass(good.report);
    const stranger = await withClientCertificate(
      trust.otherClientCertFile,
      trust.otherClientKeyFile,
    );
    assertAllFailed(stranger.report);
    assert.deepEqual(stranger.receipts, []);
  });

  test("the client verifies the server certificate chain", async () => {
    const { report } = await runHttp({
      serverAuth: bearer("strict", "t"),
      clientAuth: bearer("strict", "t"),
      ...strictTls(),
      clientTls: { caFile: trust.otherCaFile },
    });
    assertAllFailed(report);
  });

  test("compat bearer over plain HTTP", async () => {
    const { report } = await runHttp({
      serverAuth: bearer("compat", "compat-token"),
      clientAuth: bearer("compat", "compat-token"),
    });
    assertAllPass(report);
  });

  test("compat oauth: plain-HTTP token endpoint, HS256 verified", async () => {
    await withTokenEndpoint("compat", async (tokenEndpoint, issued) => {
      const { report } = await runHttp({
        serverAuth: jwtServerAuth("oauth", "compat"),
        clientAuth: oauthClient("compat", tokenEndpoint),
      });
      assertAllPass(report);
      assert.equal(issued(), 1);
    });
  });

  test("compat mtls: trust files under auth", async () => {
    const mtls = { mode: "mtls", profile: "compat", caFile: trust.caFile };
    const { report, endpoint } = await runHttp({
      serverAuth: {
        ...mtls,
        certFile: trust.serverCertFile,
        keyFile: trust.serverKeyFile,
      },
      clientAuth: {
        ...mtls,
        certFile: trust.clientCertFile,
        keyFile: trust.clientKeyFile,
      },
    });
    assert.match(endpoint, /^https:/);
    assertAllPass(report);
  });

  test("an unreachable endpoint fails every row; the client still exits 0", async () => {
    const closed = net.createServer();
    await new Promise<void>((resolve) =>
      closed.listen(0, "127.0.0.1", resolve),
    );
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const report = await runClient("unreachable", {
      transport: "http",
      endpoint: `http://127.0.0.1:${port}/intercept`,
      timeoutMs: 2000,
    });
    assertAllFailed(report);
  });
});

/** A raw HTTP/1.1 exchange, so that headers can be duplicated exactly. */
function rawRequest(
  endpoint: string,
  head: string,
  body: string,
): Promise<string> {
  const url = new URL(endpoint);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(url.port), url.hostname, () => {
      socket.end(
        `${head}Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      );
    });
    const chunks: Buffer[] = [];
    socket.on("data", (chunk: Buffer) => chunks.push(chunk));
    socket.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    socket.on("error", reject);
  });
}

/** The JSON-RPC error code of a control() reply. */
const errorCode = (reply: { body: unknown }): unknown =>
  ((reply.body as JsonObject)["error"] as JsonObject)["code"];

describe("server behaviour over HTTP", () => {
  test("GET /capabilities: authenticated first, then the bare tool.before capabilities of the discovery manifest, never receipted", async () => {
    await withServer(
      "get-caps",
      bearer("compat", "caps-token"),
      async (server, receiptLog) => {
        const endpoint = server.readiness.endpoint ?? "";
        const get = "GET /capabilities HTTP/1.1\r\nHost: 127.0.0.1\r\n";
        const refused = await rawRequest(endpoint, get, "");
        assert.match(refused, /^HTTP\/1\.1 401 /);
        const wrong = await rawRequest(
          endpoint,
          `${get}Authorization: Bearer wrong\r\n`,
          "",
        );
        assert.match(wrong, /^HTTP\/1\.1 401 /);
        const answer = await rawRequest(
          endpoint,
          `${get}Authorization: Bearer caps-token\r\n`,
          "",
        );
        const [answerHead, answerBody] = answer.split("\r\n\r\n");
        assert.match(answerHead ?? "", /^HTTP\/1\.1 200 /);
        assert.match(answerHead ?? "", /\r\ncontent-type: application\/json/i);
        const discovery = JSON.parse(
          (
            await rawRequest(
              endpoint,
              "POST /intercept HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer caps-token\r\n",
              JSON.stringify({
                jsonrpc: "2.0",
                id: "d-2",
                method: "hooks/capabilities",
                params: { protocolVersion: "draft" },
              }),
            )
          ).split("\r\n\r\n")[1] ?? "",
        ) as JsonObject;
        const manifest = (discovery["result"] as JsonObject)[
          "manifest"
        ] as JsonObject;
        const toolBefore = (manifest["events"] as JsonObject[]).filter(
          (entry) =>
            entry["event"] === "tool.before" &&
            (entry["modes"] as string[]).includes("intercept"),
        );
        assert.equal(toolBefore.length, 1);
        assert.deepEqual(
          JSON.parse(answerBody ?? ""),
          toolBefore[0]?.["capabilities"],
        );
        // only the POSTed discovery is a receipt
        assert.deepEqual(
          readReceiptLog(receiptLog).map((receipt) => receipt.kind),
          ["discovery"],
        );
        const receipts = (
          await control(server.readiness.controlEndpoint, "GET", "/receipts")
        ).body as { requests: unknown[]; discovery: unknown[] };
        assert.deepEqual(
          [receipts.requests.length, receipts.discovery.length],
          [0, 1],
        );
      },
    );
  });

  test("duplicated Authorization headers get 401 with no body and no receipt", async () => {
    await withServer(
      "dup",
      bearer("compat", "dup-token"),
      async (server, receiptLog) => {
        const endpoint = server.readiness.endpoint ?? "";
        const body = JSON.stringify(rows[0]?.request);
        const head =
          "POST /intercept HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n";
        const authorization = "Authorization: Bearer dup-token\r\n";
        const single = await rawRequest(
          endpoint,
          `${head}${authorization}`,
          body,
        );
        assert.match(single, /^HTTP\/1\.1 200 /);
        const doubled = await rawRequest(
          endpoint,
          `${head}${authorization}${authorization}`,
          body,
        );
        assert.match(doubled, /^HTTP\/1\.1 401 /);
        assert.equal(doubled.split("\r\n\r\n")[1], "");
        const missing = await rawRequest(endpoint, head, body);
        assert.match(missing, /^HTTP\/1\.1 401 /);
        assert.equal(readReceiptLog(receiptLog).length, 1);
        const receipts = await control(
          server.readiness.controlEndpoint,
          "GET",
          "/receipts",
        );
        assert.equal(
          (receipts.body as { requests: unknown[] }).requests.length,
          1,
        );
      },
    );
  });

  test("control endpoints, discovery, unknown ids and reset", async () => {
    await withServer("ctl", { mode: "none" }, async (server, receiptLog) => {
      const base = server.readiness.controlEndpoint;
      const endpoint = server.readiness.endpoint ?? "";
      const health = (await control(base, "GET", "/health")).body;
      assertContract("control.schema.json#/$defs/health", health);
      assert.deepEqual(health, { ready: true });
      const discovery = await control(endpoint, "POST", "/anywhere", {
        jsonrpc: "2.0",
        id: "d-1",
        method: "hooks/capabilities",
        params: { protocolVersion: "draft" },
      });
      assert.equal((discovery.body as JsonObject)["id"], "d-1");
      // GET /capabilities: the bare capabilities of the tool.before entry of
      // the manifest hooks/capabilities is answered with, never receipted
      const get = await control(
        endpoint.replace(/\/intercept$/, "/capabilities"),
        "GET",
        "",
      );
      const manifest = ((discovery.body as JsonObject)["result"] as JsonObject)[
        "manifest"
      ] as JsonObject;
      const toolBefore = (manifest["events"] as JsonObject[]).find(
        (entry) => entry["event"] === "tool.before",
      );
      assert.deepEqual(
        [get.status, get.body],
        [200, toolBefore?.["capabilities"]],
      );
      const unknown = structuredClone(rows[0]?.request) as {
        id: string;
        params: { event: { id: string } };
      };
      unknown.id = "no-such-scenario";
      unknown.params.event.id = "no-such-scenario";
      assert.equal(
        errorCode(await control(endpoint, "POST", "", unknown)),
        -32602,
      );
      const invalid = await control(endpoint, "POST", "", {
        jsonrpc: "2.0",
        id: 1,
        method: "hooks/intercept",
        params: {},
      });
      assert.equal(errorCode(invalid), -32602);
      const notification = {
        jsonrpc: "2.0",
        method: "hooks/observe",
        params: { event: { type: "tool.after" } },
      };
      const noReply = await control(endpoint, "POST", "", notification);
      assert.deepEqual([noReply.status, noReply.body], [204, null]);
      const receipts = (await control(base, "GET", "/receipts")).body as {
        requests: unknown[];
        discovery: unknown[];
        notifications: unknown[];
      };
      assertContract("control.schema.json#/$defs/receipts", receipts);
      assert.equal(receipts.requests.length, 2);
      assert.equal(receipts.discovery.length, 1);
      assert.deepEqual(receipts.notifications, [notification]);
      const log = readReceiptLog(receiptLog);
      for (const line of log) assertContract("receipt-line.schema.json", line);
      assert.deepEqual(
        log.map((receipt) => receipt.kind),
        ["discovery", "request", "request", "notification"],
      );
      const released = (
        await control(base, "POST", "/release", { barrier: "b1" })
      ).body;
      assertContract("control.schema.json#/$defs/released", released);
      assert.deepEqual(released, { released: "b1" });
      const resetFile = writeJson(join(work, "reset.json"), {
        version: 1,
        scenarios: [{ id: "reset-row", request: null, response: null }],
      });
      const reset = (
        await control(base, "POST", "/reset", { scenarioFile: resetFile })
      ).body;
      assertContract("control.schema.json#/$defs/reset", reset);
      assert.deepEqual(reset, { reset: true });
      assert.deepEqual((await control(base, "GET", "/receipts")).body, {
        requests: [],
        discovery: [],
        notifications: [],
      });
      assert.equal(
        readReceiptLog(receiptLog).length,
        4,
        "the receipt log is append-only",
      );
      assert.equal(
        errorCode(await control(endpoint, "POST", "", rows[0]?.request)),
        -32602,
        "ids of the old file are gone",
      );
    });
  });
});

describe("stdio end to end", () => {
  test("the client spawns the server, exchanges one line per row and leaves nothing running", async () => {
    const server = serverFiles("stdio", "stdio", { mode: "none" });
    const report = await runClient("stdio", {
      transport: "stdio",
      serverCommand: [process.execPath, "dist/cli.js", "server"],
      serverCwd: ADAPTER_DIR,
      serverConfig: server.config,
    });
    assertServed({ report, receipts: readReceiptLog(server.receiptLog) });
    assert.equal(existsSync(server.readinessFile), true);
    const { pid } = JSON.parse(readFileSync(server.readinessFile, "utf8")) as {
      pid: number;
    };
    assert.throws(() => process.kill(pid, 0), "the stdio server is gone");
  });
});

/** A client run over stdio against an inline fake server script (`node -e`). */
function runAgainstFake(name: string, script: string): Promise<Report> {
  return runClient(name, {
    transport: "stdio",
    serverCommand: [process.execPath, "-e", script],
    serverCwd: work,
  });
}

describe("stdio client against misbehaving servers", () => {
  test("a line with another id is a correlation rejection, never a wait", async () => {
    const script = `
      let pending = "";
      process.stdin.on("data", (chunk) => {
        pending += chunk;
        for (let i = pending.indexOf("\\n"); i !== -1; i = pending.indexOf("\\n")) {
          pending = pending.slice(i + 1);
          process.stdout.write(JSON.stringify({ jsonrpc: "2.0", id: "someone-else", result: { protocolVersion: "draft", effects: [] } }) + "\\n");
        }
      });`;
    const report = await runAgainstFake("wrong-id", script);
    assert.equal(report.results.length, rows.length);
    for (const row of report.results) {
      assert.equal(row.status, "completed", row.id);
      assert.deepEqual(row.actual, { rejected: true });
    }
  });

  test("a server that dies fails the rows, and its process group is killed at the end", async () => {
    const pidFile = join(work, "grandchild.pid");
    const script = `
      const { spawn } = require("node:child_process");
      const sleeper = spawn("sleep", ["60"], { stdio: "ignore" });
      require("node:fs").writeFileSync(${JSON.stringify(pidFile)}, String(sleeper.pid));
      process.stdin.once("data", () => process.exit(3));`;
    const report = await runAgainstFake("dies", script);
    assertAllFailed(report);
    const grandchild = Number(readFileSync(pidFile, "utf8"));
    assert.equal(
      processGone(grandchild),
      true,
      "the server's own child is gone too",
    );
  });

  test("a malformed line rejects the whole response: not JSON, a duplicate key, invalid UTF-8, too deep", async () => {
    for (const [name, line] of [
      ["garbage", JSON.stringify("not json")],
      ["duplicate", JSON.stringify('{"jsonrpc":"2.0","jsonrpc":"2.0"}')],
      ["utf8", `Buffer.from([0x22, 0xff, 0x22])`],
      ["deep", `"[".repeat(600) + "]".repeat(600)`],
    ] as const) {
      const script = `process.stdin.on("data", () => { process.stdout.write(${line}); process.stdout.write("\\n"); });`;
      const report = await runAgainstFake(name, script);
      assert.equal(report.results.length, rows.length);
      for (const row of report.results)
        assert.deepEqual(
          [row.status, row.actual],
          ["completed", { rejected: true }],
          `${name}: ${row.id}`,
        );
    }
  });
});
