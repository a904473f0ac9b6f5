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
import { SignJWT } from "jose";
import type { JsonObject } from "../json.js";
import {
  mismatch,
  readAnswered,
  UPSTREAM_FILE,
  type AnsweredScenario,
} from "./expectations.js";
import { makeTrust, type TrustFiles } from "./pki.js";
import {
  ADAPTER_DIR,
  processGone,
  control,
  readReceiptLog,
  runClientProcess,
  startServer,
  tempDir,
  writeJson,
} from "./processes.js";

const CLOCK = 1_893_456_000;
const ISSUER = "urn:test:issuer";
const AUDIENCE = "urn:test:backend";
const HS_SECRET = "compat-secret-for-tests-only-0123456789";

const work = tempDir("ahp-ts-e2e-");
let trust: TrustFiles;
before(() => {
  trust = makeTrust();
});
after(() => {
  rmSync(work, { recursive: true, force: true });
  rmSync(trust.directory, { recursive: true, force: true });
});

// A small scenario file (a slice of the upstream core set) and its blind copy.
const answered: AnsweredScenario[] = readAnswered(UPSTREAM_FILE).filter(
  (_, index) => index % 9 === 0,
);
const scenarioFile = writeJson(join(work, "scenarios.json"), {
  version: 1,
  scenarios: answered,
});
const blindFile = writeJson(join(work, "blind.json"), {
  version: 1,
  scenarios: answered.map(({ id, request, response }) => ({
    id,
    request,
    response,
  })),
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

let counter = 0;

interface Combination {
  readonly serverAuth: JsonObject;
  readonly clientAuth: JsonObject;
  readonly serverTls?: JsonObject;
  readonly clientTls?: JsonObject;
}

/** Runs one HTTP combination: server to readiness, client to completion, shutdown. */
async function runHttp(combination: Combination): Promise<{
  report: Report;
  receipts: ReturnType<typeof readReceiptLog>;
  endpoint: string;
}> {
  const name = `c${++counter}`;
  const readinessFile = join(work, `${name}-ready.json`);
  const receiptLog = join(work, `${name}-receipts.jsonl`);
  const serverConfig = writeJson(join(work, `${name}-server.json`), {
    transport: "http",
    readinessFile,
    scenarioFile,
    receiptLog,
    auth: combination.serverAuth,
    ...(combination.serverTls ? { tls: combination.serverTls } : {}),
  });
  const server = await startServer(serverConfig, readinessFile);
  try {
    const endpoint = server.readiness.endpoint ?? "";
    const reportFile = join(work, `${name}-report.json`);
    const clientConfig = writeJson(join(work, `${name}-client.json`), {
      transport: "http",
      endpoint,
      scenarioFile: blindFile,
      reportFile,
      auth: combination.clientAuth,
      ...(combination.clientTls ? { tls: combination.clientTls } : {}),
      timeoutMs: 10000,
    });
    assert.equal(await runClientProcess(clientConfig), 0, "the client exits 0");
    const report = JSON.parse(readFileSync(reportFile, "utf8")) as Report;
    return { report, receipts: readReceiptLog(receiptLog), endpoint };
  } finally {
    await server.stop();
  }
}

function assertAllPass(report: Report): void {
  assert.equal(report.language, "typescript");
  assert.deepEqual(
    report.results.map((row) => row.id),
    answered.map((scenario) => scenario.id),
  );
  for (const [index, row] of report.results.entries()) {
    const scenario = answered[index] as AnsweredScenario;
    assert.equal(row.status, "completed", `${row.id}: ${row.error ?? ""}`);
    assert.equal(mismatch(scenario, row.actual), null, row.id);
  }
}

function assertReceipted(receipts: ReturnType<typeof readReceiptLog>): void {
  assert.deepEqual(
    receipts.map((receipt) => receipt.kind),
    answered.map(() => "request"),
  );
  assert.deepEqual(
    receipts.map((receipt) => receipt.message),
    answered.map((scenario) => scenario.request),
  );
}

function assertAllFailed(report: Report): void {
  assert.equal(report.results.length, answered.length);
  for (const row of report.results) {
    assert.equal(row.status, "failed", row.id);
    assert.equal(typeof row.error, "string");
    assert.equal("actual" in row, false);
  }
}

const strictServerTls = () => ({
  certFile: trust.serverCertFile,
  keyFile: trust.serverKeyFile,
});
const strictClientTls = () => ({ caFile: trust.caFile });

/** A loopback token endpoint: HTTPS with ES256 tokens (strict) or HTTP with HS256 (compat). */
async function withTokenEndpoint<T>(
  profile: "strict" | "compat",
  use: (endpoint: string, issued: () => number) => Promise<T>,
): Promise<T> {
  let issued = 0;
  const handler = (
    request: http.IncomingMessage,
    response: http.ServerResponse,
  ) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", async () => {
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
      const jwt = new SignJWT({
        iss: ISSUER,
        sub: "client-1",
        aud: AUDIENCE,
        purpose: "oauth",
        iat: CLOCK,
        exp: CLOCK + 3600,
      });
      const token =
        profile === "strict"
          ? await jwt
              .setProtectedHeader({ alg: "ES256", typ: "JWT" })
              .sign(trust.tokenPrivateKey)
          : await jwt
              .setProtectedHeader({ alg: "HS256", typ: "JWT" })
              .sign(new TextEncoder().encode(HS_SECRET));
      const body = JSON.stringify({
        access_token: token,
        token_type: "Bearer",
        expires_in: 3600,
      });
      response
        .writeHead(200, {
          "Content-Type": "application/json",
          "Content-Length": String(Buffer.byteLength(body)),
        })
        .end(body);
    });
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

async function workloadAssertion(
  profile: "strict" | "compat",
): Promise<string> {
  const jwt = new SignJWT({
    iss: ISSUER,
    sub: "workload-1",
    aud: AUDIENCE,
    purpose: "workload",
    iat: CLOCK,
    exp: CLOCK + 3600,
  });
  return profile === "strict"
    ? jwt
        .setProtectedHeader({ alg: "ES256", typ: "JWT" })
        .sign(trust.tokenPrivateKey)
    : jwt
        .setProtectedHeader({ alg: "HS256", typ: "JWT" })
        .sign(new TextEncoder().encode(HS_SECRET));
}

const jwtServerAuth = (
  mode: string,
  profile: "strict" | "compat",
): JsonObject => ({
  mode,
  profile,
  issuer: ISSUER,
  audience: AUDIENCE,
  purpose: mode,
  clock: CLOCK,
  ...(profile === "strict"
    ? { publicKeyFile: trust.tokenPublicKeyFile }
    : { signingKey: HS_SECRET }),
});

describe("HTTP end to end", () => {
  test("plain HTTP, no auth: every row derives its expectation; receipts in order", async () => {
    const { report, receipts, endpoint } = await runHttp({
      serverAuth: { mode: "none" },
      clientAuth: { mode: "none" },
    });
    assert.match(endpoint, /^http:\/\/127\.0\.0\.1:\d+\/intercept$/);
    assertAllPass(report);
    assertReceipted(receipts);
  });

  test("strict bearer over HTTPS", async () => {
    const { report, receipts } = await runHttp({
      serverAuth: {
        mode: "bearer",
        profile: "strict",
        token: "bearer-token-1",
      },
      clientAuth: {
        mode: "bearer",
        profile: "strict",
        token: "bearer-token-1",
      },
      serverTls: strictServerTls(),
      clientTls: strictClientTls(),
    });
    assertAllPass(report);
    assertReceipted(receipts);
  });

  test("strict bearer with a wrong token: every row fails, nothing is receipted", async () => {
    const { report, receipts } = await runHttp({
      serverAuth: {
        mode: "bearer",
        profile: "strict",
        token: "bearer-token-1",
      },
      clientAuth: {
        mode: "bearer",
        profile: "strict",
        token: "bearer-token-2",
      },
      serverTls: strictServerTls(),
      clientTls: strictClientTls(),
    });
    assertAllFailed(report);
    assert.deepEqual(receipts, []);
  });

  test("strict oauth: token acquired once over HTTPS, ES256 verified", async () => {
    await withTokenEndpoint("strict", async (tokenEndpoint, issued) => {
      const { report, receipts } = await runHttp({
        serverAuth: jwtServerAuth("oauth", "strict"),
        clientAuth: {
          mode: "oauth",
          profile: "strict",
          tokenEndpoint,
          clientId: "client-1",
          clientSecret: "client-secret",
          audience: AUDIENCE,
        },
        serverTls: strictServerTls(),
        clientTls: strictClientTls(),
      });
      assertAllPass(report);
      assertReceipted(receipts);
      assert.equal(issued(), 1);
    });
  });

  test("strict workload: the ES256 assertion is the bearer credential", async () => {
    const { report } = await runHttp({
      serverAuth: jwtServerAuth("workload", "strict"),
      clientAuth: {
        mode: "workload",
        profile: "strict",
        assertion: await workloadAssertion("strict"),
      },
      serverTls: strictServerTls(),
      clientTls: strictClientTls(),
    });
    assertAllPass(report);
  });

  test("strict workload refuses an oauth-purpose token", async () => {
    const { report } = await runHttp({
      serverAuth: jwtServerAuth("workload", "strict"),
      clientAuth: {
        mode: "workload",
        profile: "strict",
        assertion: await workloadAssertion("compat"),
      },
      serverTls: strictServerTls(),
      clientTls: strictClientTls(),
    });
    assertAllFailed(report);
  });

  test("strict mtls: a client certificate chaining to the CA is required", async () => {
    const serverTls = { ...strictServerTls(), clientCaFile: trust.caFile };
    const good = await runHttp({
      serverAuth: { mode: "mtls", profile: "strict" },
      clientAuth: { mode: "mtls", profile: "strict" },
      serverTls,
      clientTls: {
        caFile: trust.caFile,
        certFile: trust.clientCertFile,
        keyFile: trust.clientKeyFile,
      },
    });
    assertAllPass(good.report);
    const stranger = await runHttp({
      serverAuth: { mode: "mtls", profile: "strict" },
      clientAuth: { mode: "mtls", profile: "strict" },
      serverTls,
      clientTls: {
        caFile: trust.caFile,
        certFile: trust.otherClientCertFile,
        keyFile: trust.otherClientKeyFile,
      },
    });
    assertAllFailed(stranger.report);
    assert.deepEqual(stranger.receipts, []);
  });

  test("the client verifies the server certificate chain", async () => {
    const { report } = await runHttp({
      serverAuth: { mode: "bearer", profile: "strict", token: "t" },
      clientAuth: { mode: "bearer", profile: "strict", token: "t" },
      serverTls: strictServerTls(),
      clientTls: { caFile: trust.otherCaFile },
    });
    assertAllFailed(report);
  });

  test("compat bearer over plain HTTP", async () => {
    const { report } = await runHttp({
      serverAuth: { mode: "bearer", profile: "compat", token: "compat-token" },
      clientAuth: { mode: "bearer", profile: "compat", token: "compat-token" },
    });
    assertAllPass(report);
  });

  test("compat oauth: plain-HTTP token endpoint, HS256 verified", async () => {
    await withTokenEndpoint("compat", async (tokenEndpoint, issued) => {
      const { report } = await runHttp({
        serverAuth: jwtServerAuth("oauth", "compat"),
        clientAuth: {
          mode: "oauth",
          profile: "compat",
          tokenEndpoint,
          clientId: "client-1",
          clientSecret: "client-secret",
          audience: AUDIENCE,
        },
      });
      assertAllPass(report);
      assert.equal(issued(), 1);
    });
  });

  test("compat mtls: trust files under auth", async () => {
    const files = {
      caFile: trust.caFile,
      certFile: trust.serverCertFile,
      keyFile: trust.serverKeyFile,
    };
    const { report, endpoint } = await runHttp({
      serverAuth: { mode: "mtls", profile: "compat", ...files },
      clientAuth: {
        mode: "mtls",
        profile: "compat",
        caFile: trust.caFile,
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
    const reportFile = join(work, "unreachable-report.json");
    const config = writeJson(join(work, "unreachable-client.json"), {
      transport: "http",
      endpoint: `http://127.0.0.1:${port}/intercept`,
      scenarioFile: blindFile,
      reportFile,
      auth: { mode: "none" },
      timeoutMs: 2000,
    });
    assert.equal(await runClientProcess(config), 0);
    assertAllFailed(JSON.parse(readFileSync(reportFile, "utf8")) as Report);
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

describe("server behaviour over HTTP", () => {
  test("duplicated Authorization headers get 401 with no body and no receipt", async () => {
    const readinessFile = join(work, "dup-ready.json");
    const receiptLog = join(work, "dup-receipts.jsonl");
    const config = writeJson(join(work, "dup-server.json"), {
      transport: "http",
      readinessFile,
      scenarioFile,
      receiptLog,
      auth: { mode: "bearer", profile: "compat", token: "dup-token" },
    });
    const server = await startServer(config, readinessFile);
    try {
      const endpoint = server.readiness.endpoint ?? "";
      const body = JSON.stringify(answered[0]?.request);
      const head =
        "POST /intercept HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n";
      const single = await rawRequest(
        endpoint,
        `${head}Authorization: Bearer dup-token\r\n`,
        body,
      );
      assert.match(single, /^HTTP\/1\.1 200 /);
      const doubled = await rawRequest(
        endpoint,
        `${head}Authorization: Bearer dup-token\r\nAuthorization: Bearer dup-token\r\n`,
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
    } finally {
      await server.stop();
    }
  });

  test("control endpoints, discovery, unknown ids and reset", async () => {
    const readinessFile = join(work, "ctl-ready.json");
    const receiptLog = join(work, "ctl-receipts.jsonl");
    const config = writeJson(join(work, "ctl-server.json"), {
      transport: "http",
      readinessFile,
      scenarioFile,
      receiptLog,
      auth: { mode: "none" },
    });
    const server = await startServer(config, readinessFile);
    const base = server.readiness.controlEndpoint;
    const endpoint = server.readiness.endpoint ?? "";
    try {
      assert.deepEqual((await control(base, "GET", "/health")).body, {
        ready: true,
      });
      const discovery = await control(endpoint, "POST", "/anywhere", {
        jsonrpc: "2.0",
        id: "d-1",
        method: "hooks/capabilities",
        params: { protocolVersion: "draft" },
      });
      assert.equal((discovery.body as JsonObject)["id"], "d-1");
      const get = await control(
        endpoint.replace(/\/intercept$/, "/capabilities"),
        "GET",
        "",
      );
      assert.equal((get.body as JsonObject)["id"], "discovery");
      const unknown = structuredClone(answered[0]?.request) as {
        id: string;
        params: { event: { id: string } };
      };
      unknown.id = "no-such-scenario";
      unknown.params.event.id = "no-such-scenario";
      const reply = await control(endpoint, "POST", "", unknown);
      assert.equal(
        ((reply.body as JsonObject)["error"] as JsonObject)["code"],
        -32602,
      );
      const invalid = await control(endpoint, "POST", "", {
        jsonrpc: "2.0",
        id: 1,
        method: "hooks/intercept",
        params: {},
      });
      assert.equal(
        ((invalid.body as JsonObject)["error"] as JsonObject)["code"],
        -32602,
      );
      const receipts = (await control(base, "GET", "/receipts")).body as {
        requests: unknown[];
        discovery: unknown[];
      };
      assert.equal(receipts.requests.length, 2);
      assert.equal(receipts.discovery.length, 1);
      assert.deepEqual(
        readReceiptLog(receiptLog).map((receipt) => receipt.kind),
        ["discovery", "request", "request"],
      );
      assert.deepEqual(
        (await control(base, "POST", "/release", { barrier: "b1" })).body,
        { released: "b1" },
      );
      const resetFile = writeJson(join(work, "reset.json"), {
        version: 1,
        scenarios: [{ id: "reset-row", request: null, response: null }],
      });
      assert.deepEqual(
        (await control(base, "POST", "/reset", { scenarioFile: resetFile }))
          .body,
        { reset: true },
      );
      assert.deepEqual((await control(base, "GET", "/receipts")).body, {
        requests: [],
        discovery: [],
      });
      assert.equal(
        readReceiptLog(receiptLog).length,
        3,
        "the receipt log is append-only",
      );
      const reloaded = await control(
        endpoint,
        "POST",
        "",
        answered[0]?.request,
      );
      assert.equal(
        ((reloaded.body as JsonObject)["error"] as JsonObject)["code"],
        -32602,
        "ids of the old file are gone",
      );
    } finally {
      await server.stop();
    }
  });
});

describe("stdio end to end", () => {
  test("the client spawns the server, exchanges one line per row and leaves nothing running", async () => {
    const readinessFile = join(work, "stdio-ready.json");
    const receiptLog = join(work, "stdio-receipts.jsonl");
    const serverConfig = writeJson(join(work, "stdio-server.json"), {
      transport: "stdio",
      readinessFile,
      scenarioFile,
      receiptLog,
      auth: { mode: "none" },
    });
    const reportFile = join(work, "stdio-report.json");
    const clientConfig = writeJson(join(work, "stdio-client.json"), {
      transport: "stdio",
      serverCommand: [process.execPath, "dist/cli.js", "server"],
      serverCwd: ADAPTER_DIR,
      serverConfig,
      scenarioFile: blindFile,
      reportFile,
      auth: { mode: "none" },
      timeoutMs: 10000,
    });
    assert.equal(await runClientProcess(clientConfig), 0);
    const report = JSON.parse(readFileSync(reportFile, "utf8")) as Report;
    assertAllPass(report);
    assertReceipted(readReceiptLog(receiptLog));
    assert.equal(existsSync(readinessFile), true);
    const { pid } = JSON.parse(readFileSync(readinessFile, "utf8")) as {
      pid: number;
    };
    assert.throws(() => process.kill(pid, 0), "the stdio server is gone");
  });
});

/** A client run over stdio against an inline fake server script (`node -e`). */
async function runAgainstFake(name: string, script: string): Promise<Report> {
  const reportFile = join(work, `${name}-report.json`);
  const config = writeJson(join(work, `${name}-client.json`), {
    transport: "stdio",
    serverCommand: [process.execPath, "-e", script],
    serverCwd: work,
    scenarioFile: blindFile,
    reportFile,
    auth: { mode: "none" },
    timeoutMs: 10000,
  });
  assert.equal(await runClientProcess(config), 0);
  return JSON.parse(readFileSync(reportFile, "utf8")) as Report;
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
    assert.equal(report.results.length, answered.length);
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

  test("unparsable output is a transport failure", async () => {
    const script = `process.stdin.on("data", () => process.stdout.write("not json\\n"));`;
    assertAllFailed(await runAgainstFake("garbage", script));
  });
});
