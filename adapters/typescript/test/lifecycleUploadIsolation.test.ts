// A step's own upload block replaces the config's wholesale: the lifecycle
// client sends nothing of the event's credentials to an independent upload
// origin (docs/ISOLATION.md). The event channel is mTLS (the client holds a
// client certificate) and the config's upload block names a bearer token
// set in the environment; each row's upload step names another origin and
// no credential. The origins run here and record every request raw; the
// HTTPS one requests a client certificate (and would accept this one).

import assert from "node:assert/strict";
import { readFileSync, rmSync } from "node:fs";
import http from "node:http";
import https from "node:https";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import type { TLSSocket } from "node:tls";
import { after, test } from "node:test";
import type { JsonObject } from "../sdk/json.js";
import {
  httpClientConfig,
  ok,
  note,
  req,
  runLifecycleClient,
  scenarioFile,
  setInput,
  sha,
  startLifecycleServer,
} from "./lifecycleHarness.js";
import { makeTrust } from "./pki.js";
import { tempDir } from "./processes.js";

const work = tempDir("ahp-ts-upload-isolation-");
const trust = makeTrust();
after(() => {
  rmSync(work, { recursive: true, force: true });
  rmSync(trust.directory, { recursive: true, force: true });
});

const BODY = Buffer.from("\u0000isolated upload bytes\u00ff", "latin1");

interface Seen {
  readonly headers: string[];
  readonly certificate: boolean;
  readonly body: Buffer;
}

/** An origin that records each request; 201 with a receipt, or 307 to `redirect`. */
async function origin(
  secure: boolean,
  redirect: string | null = null,
): Promise<{ url: string; seen: Seen[]; close: () => Promise<void> }> {
  const seen: Seen[] = [];
  const handler = (
    request: http.IncomingMessage,
    response: http.ServerResponse,
  ) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const socket = request.socket as Partial<TLSSocket>;
      const peer = secure ? socket.getPeerCertificate?.() : undefined;
      const body = Buffer.concat(chunks);
      seen.push({
        headers: request.rawHeaders.filter((_, i) => i % 2 === 0),
        certificate: peer !== undefined && Object.keys(peer).length > 0,
        body,
      });
      if (redirect !== null) {
        response.writeHead(307, { Location: redirect, "Content-Length": 0 });
        response.end();
        return;
      }
      const receipt = JSON.stringify({
        ref: "urn:uuid:00000000-0000-4000-8000-000000000002",
        size: body.length,
        sha256: sha(body),
      });
      response.writeHead(201, { "Content-Type": "application/json" });
      response.end(receipt);
    });
  };
  const server = secure
    ? https.createServer(
        {
          cert: readFileSync(trust.serverCertFile),
          key: readFileSync(trust.serverKeyFile),
          ca: readFileSync(trust.caFile), // the event certificate would verify
          requestCert: true, // asks for a client certificate
          rejectUnauthorized: false,
        },
        handler,
      )
    : http.createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `${secure ? "https" : "http"}://127.0.0.1:${port}/capture?row=1`,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function isolatedRow(id: string, upload: JsonObject): JsonObject {
  return {
    id,
    requests: { a: req(`${id}:a`) },
    responses: {
      a: ok(`${id}:a`, [
        setInput("settled"),
        note("published"),
        { type: "allow" },
      ]),
    },
    steps: [
      {
        op: "upload",
        subscription: "body",
        ref: "alias",
        bodyBase64: BODY.toString("base64"),
        size: BODY.length,
        sha256: sha(BODY),
        upload: { timeoutMs: 5000, maxBytes: 1048576, ...upload },
      },
      { op: "send", key: "a", slot: "a" },
      { op: "wait", key: "a", count: 1 },
      { op: "release", key: "a" },
      { op: "receive", slot: "a" },
      { op: "accept", key: "a" },
    ],
  };
}

test("a step upload block without auth sends no event credential", async () => {
  const plain = await origin(false);
  const secure = await origin(true);
  const target = await origin(false);
  const redirect = await origin(false, target.url);
  try {
    const rows = [
      isolatedRow("plain", { endpoint: plain.url }),
      isolatedRow("secure", {
        endpoint: secure.url,
        tls: { caFile: trust.caFile },
      }),
      isolatedRow("redirect", { endpoint: redirect.url }),
    ];
    const file = scenarioFile(join(work, "scenarios.json"), rows);
    const mtls = { mode: "mtls", profile: "strict" };
    const { server, readiness } = await startLifecycleServer(work, file, {
      auth: mtls,
      tls: {
        certFile: trust.serverCertFile,
        keyFile: trust.serverKeyFile,
        clientCaFile: trust.caFile,
      },
    });
    try {
      const config = httpClientConfig(work, file, readiness, {
        auth: mtls,
        tls: {
          caFile: trust.caFile,
          certFile: trust.clientCertFile,
          keyFile: trust.clientKeyFile,
        },
      });
      const { code, report } = await runLifecycleClient(work, config);
      assert.equal(code, 0);
      const statuses = Object.fromEntries(
        report.results.map((r) => [r.id, r.actual?.["uploadStatuses"]]),
      );
      assert.deepEqual(statuses, {
        plain: [201],
        secure: [201],
        redirect: [307],
      });
      for (const result of report.results) {
        assert.equal(result.status, "completed", result.error);
        assert.deepEqual(result.actual?.["published"], [`${result.id}:a`]);
      }
      const uploads = (report.receipts?.entries ?? []).filter(
        (entry) => entry["kind"] === "upload",
      );
      assert.deepEqual(uploads, []); // the config's own upload endpoint got nothing
    } finally {
      await server.stop();
    }
    assert.deepEqual(target.seen, []); // the redirect was not followed
    for (const seen of [plain.seen, secure.seen, redirect.seen]) {
      assert.equal(seen.length, 1);
      const [only] = seen;
      assert.ok(only !== undefined);
      const names = only.headers.map((name) => name.toLowerCase());
      for (const sensitive of [
        "authorization",
        "proxy-authorization",
        "cookie",
      ])
        assert.ok(!names.includes(sensitive), names.join(", "));
      assert.equal(names.filter((n) => n === "content-length").length, 1);
      assert.equal(only.certificate, false); // no client certificate on an upload
      assert.deepEqual(only.body, BODY);
    }
  } finally {
    for (const o of [plain, secure, target, redirect]) await o.close();
  }
});
