// The launcher (ahp-ts.sh) and the default TLS trust: NODE_EXTRA_CA_CERTS is
// handed over, put back before anything reads the environment (children see
// it as it was), and a TLS client without a CA of its own gets Node's
// bundled roots plus the file's certificates, as Node would have built.

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { rootCertificates } from "node:tls";
import { after, describe, test } from "node:test";
import { trustOf } from "../sdk/httpTransport.js";
import {
  defaultCa,
  DEFERRED_EXTRA_CA,
  restoreEnvironment,
} from "../sdk/defaultTrust.js";
import { ADAPTER_DIR, SCHEMA_DIR, tempDir } from "./processes.js";

const work = tempDir("ahp-ts-trust-");
after(() => rmSync(work, { recursive: true, force: true }));

describe("the launcher and the default trust", () => {
  test("ahp-ts.sh hands NODE_EXTRA_CA_CERTS over; children see it as it was", () => {
    // A stdio client's server is a child: it records its environment.
    const scenarios = join(work, "none.json");
    writeFileSync(scenarios, JSON.stringify({ version: 1, scenarios: [] }));
    const seen = join(work, "env.txt");
    const config = join(work, "client.json");
    writeFileSync(
      config,
      JSON.stringify({
        transport: "stdio",
        serverCommand: ["sh", "-c", `env > ${seen}`],
        scenarioFile: scenarios,
        reportFile: join(work, "report.json"),
        schemaDir: SCHEMA_DIR,
      }),
    );
    const client = spawnSync(
      "sh",
      ["ahp-ts.sh", "client", "--config", config],
      {
        cwd: ADAPTER_DIR,
        env: { ...process.env, NODE_EXTRA_CA_CERTS: "/some/extra.pem" },
        encoding: "utf8",
      },
    );
    assert.equal(client.status, 0, client.stderr);
    const environment = readFileSync(seen, "utf8").split("\n");
    assert.ok(environment.includes("NODE_EXTRA_CA_CERTS=/some/extra.pem"));
    assert.ok(!environment.some((line) => line.startsWith(DEFERRED_EXTRA_CA)));
  });

  test("without a deferred file Node's default store is used", () => {
    assert.equal(defaultCa(), undefined);
    assert.deepEqual(trustOf(null), {});
  });

  test("a deferred file is put back and added to the bundled roots", () => {
    const extra = join(work, "extra.pem");
    writeFileSync(extra, rootCertificates[0] ?? "");
    process.env[DEFERRED_EXTRA_CA] = extra;
    delete process.env["NODE_EXTRA_CA_CERTS"];
    restoreEnvironment();
    assert.equal(process.env["NODE_EXTRA_CA_CERTS"], extra);
    assert.equal(process.env[DEFERRED_EXTRA_CA], undefined);
    const store = defaultCa();
    assert.deepEqual(store, [...rootCertificates, rootCertificates[0]]);
    assert.deepEqual(trustOf(null), { ca: store });
    const own = Buffer.from("own CA");
    assert.deepEqual(trustOf(own), { ca: own });
  });
});
