// The suite registry (src/registry.ts): each module registers the suite it
// is listed under, with the commands that suite serves; a command finds
// its handler through the suite its config names, and a suite no module
// registers for the command gets the command's fallback (a lifecycle
// config naming the core suite is not run by the core client).

import assert from "node:assert/strict";
import { join } from "node:path";
import { describe, test } from "node:test";
import { handlerFor, suitesServing } from "../registry.js";
import { suite as catalogue } from "../suites/catalogue.js";
import { suite as core } from "../suites/core.js";
import { runCli, tempDir, writeJson } from "./processes.js";

describe("the suite registry", () => {
  test("each command is served by the suites that register it, in the registry's order", async () => {
    for (const command of ["client", "server", "replay"] as const)
      assert.deepEqual(await suitesServing(command), ["core"]);
    for (const command of ["lifecycle-client", "lifecycle-server"] as const)
      assert.deepEqual(await suitesServing(command), [
        "lifecycle",
        "catalogue",
        "compaction",
        "elicitation",
      ]);
  });

  test("a command runs the handler of the suite its config names", async () => {
    const directory = tempDir("ahp-ts-registry-");
    const config = (suite: string) =>
      writeJson(join(directory, `${suite}.json`), { suite });
    assert.equal(
      await handlerFor("client", "/nonexistent"),
      core.handlers.client,
    );
    assert.equal(
      await handlerFor("lifecycle-client", config("catalogue")),
      catalogue.handlers["lifecycle-client"],
    );
    // The core suite registers no lifecycle command: the fallback runs.
    const fallback = await handlerFor("lifecycle-client", config("core"));
    assert.notEqual(fallback, core.handlers.client);
    assert.equal(
      await handlerFor("lifecycle-client", config("nonesuch")),
      fallback,
    );
  });

  test("lifecycle-server for a suite no module serves it for: exit 2 naming the suites it runs", async () => {
    const directory = tempDir("ahp-ts-registry-");
    for (const suite of ["core", "nonesuch", "toString"]) {
      const path = writeJson(join(directory, `${suite}.json`), { suite });
      const result = await runCli("lifecycle-server", path);
      assert.equal(result.code, 2, result.stderr);
      assert.ok(
        result.stderr.includes(
          `field suite: unknown suite "${suite}": this server runs lifecycle, catalogue, compaction, elicitation`,
        ),
        result.stderr,
      );
    }
  });
});
