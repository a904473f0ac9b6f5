// Every scenario file of schemas/scenario-files.json against its format's
// schema. The index (written by the harness from the suites' declarations)
// names each scenario file, relative to the repository root, and the file of
// schemas/scenarios/ its format is. Every adapter validates the same files
// against the same schemas, each with its own validator: here Ajv (Draft
// 2020-12) as src/sdk/schemas.ts sets it up (ECMA-262 patterns with the `u`
// flag, formats `uri` and `date-time`), with every schema of
// schemas/scenarios/ added under its `$id`, so `common.schema.json#/$defs/...`
// resolves against
// https://interop.ahp.test/schemas/scenarios/common.schema.json; allErrors,
// so that a file's every problem is listed.

import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { describe, test } from "node:test";
import type { ErrorObject, ValidateFunction } from "ajv";
import { isObject, parseStrictJson, type Json } from "../sdk/json.js";
import { ADAPTER_DIR, REPO_DIR } from "./processes.js";

const INDEX = join(REPO_DIR, "schemas", "scenario-files.json");
const SCENARIO_SCHEMA_DIR = join(REPO_DIR, "schemas", "scenarios");
const BASE = "https://interop.ahp.test/schemas/scenarios/";
/** Problems listed per file. */
const SHOWN = 20;

const require = createRequire(join(ADAPTER_DIR, "package.json"));
const Ajv2020 = (require("ajv/dist/2020") as typeof import("ajv/dist/2020.js"))
  .default;
const addFormats = (require("ajv-formats") as typeof import("ajv-formats"))
  .default;

const ajv = new Ajv2020({
  strict: false,
  allErrors: true,
  unicodeRegExp: true,
});
addFormats(ajv, ["uri", "date-time"]);
const ids = new Map<string, string>();
for (const name of readdirSync(SCENARIO_SCHEMA_DIR)
  .filter((file) => file.endsWith(".schema.json"))
  .sort()) {
  const schema = parseStrictJson(
    readFileSync(join(SCENARIO_SCHEMA_DIR, name), "utf8"),
  );
  if (!isObject(schema)) throw new Error(`schema ${name} is not an object`);
  const id = typeof schema["$id"] === "string" ? schema["$id"] : BASE + name;
  ajv.addSchema(schema, id);
  ids.set(name, id);
}

function validator(schema: string): ValidateFunction {
  const id = ids.get(schema);
  const validate = id === undefined ? undefined : ajv.getSchema(id);
  if (validate === undefined)
    throw new Error(`no schema ${schema} in schemas/scenarios/`);
  return validate;
}

/** `expected.states["a:b"].flow`, `steps[3]`: pointer steps below the row. */
function dotted(steps: readonly string[]): string {
  let out = "";
  for (const step of steps) {
    if (/^\d+$/.test(step)) out += `[${step}]`;
    else if (!/^[A-Za-z_$][\w$-]*$/.test(step))
      out += `[${JSON.stringify(step)}]`;
    else out += out === "" ? step : `.${step}`;
  }
  return out;
}

/** `<file>: scenarios[3] (id "x"): expected: <what>`: the file, the row, the field. */
function describeError(
  file: string,
  document: Json,
  error: ErrorObject,
): string {
  let steps = error.instancePath
    .split("/")
    .slice(1)
    .map((step) => step.replaceAll("~1", "/").replaceAll("~0", "~"));
  const parts = [file];
  let field = "(root)";
  const rows = isObject(document) ? document["scenarios"] : undefined;
  if (steps[0] === "scenarios" && /^\d+$/.test(steps[1] ?? "")) {
    const row = Array.isArray(rows) ? rows[Number(steps[1])] : undefined;
    const id = isObject(row) ? row["id"] : undefined;
    parts.push(
      `scenarios[${steps[1]}]` +
        (typeof id === "string" && id !== ""
          ? ` (id ${JSON.stringify(id)})`
          : ""),
    );
    steps = steps.slice(2);
    field = "(the row)";
  }
  parts.push(dotted(steps) || field);
  // Ajv words an unknown key without naming it
  const extra = (error.params as Record<string, unknown>)["additionalProperty"];
  parts.push(
    `${error.message ?? error.keyword}` +
      (typeof extra === "string" ? ` (${JSON.stringify(extra)})` : ""),
  );
  return parts.join(": ");
}

/** Every problem of `document` against `schema` (a file of schemas/scenarios/). */
function problems(schema: string, file: string, document: Json): string[] {
  const validate = validator(schema);
  if (validate(document)) return [];
  return (validate.errors ?? []).map((error) =>
    describeError(file, document, error),
  );
}

interface IndexEntry {
  readonly file: string;
  readonly schema: string;
}

describe("the scenario files against schemas/scenarios/", () => {
  test("every file schemas/scenario-files.json lists fits its schema", () => {
    assert.ok(
      existsSync(INDEX),
      `${INDEX} is gone: the scenario files' index moved?`,
    );
    const { files } = JSON.parse(readFileSync(INDEX, "utf8")) as {
      files: IndexEntry[];
    };
    assert.ok(
      Array.isArray(files) && files.length > 0,
      `${INDEX} lists no scenario files`,
    );
    assert.ok(ids.has("common.schema.json"));
    const failed: string[] = [];
    for (const { file, schema } of files) {
      const document = parseStrictJson(
        readFileSync(join(REPO_DIR, file), "utf8"),
      );
      const found = problems(schema, file, document);
      if (found.length > 0)
        failed.push(
          `${file} breaks ${schema} (${found.length} problems):`,
          ...found.slice(0, SHOWN).map((line) => `  ${line}`),
        );
    }
    assert.ok(failed.length === 0, failed.join("\n"));
  });

  test("a misspelt key in a row is refused", () => {
    const row = { id: "typo-1", request: {}, response: null, tags: [] };
    const good = {
      version: 1,
      scenarios: [{ ...row, expected: { decision: "deny" } }],
    };
    const bad = {
      version: 1,
      scenarios: [{ ...row, expected: { decison: "deny" } }],
    };
    assert.deepEqual(problems("core.schema.json", "good.json", good), []);
    const found = problems("core.schema.json", "typo.json", bad);
    assert.ok(found.length > 0, "a misspelt key was accepted");
    assert.ok(
      found[0]?.startsWith('typo.json: scenarios[0] (id "typo-1"): expected: '),
      found.join("\n"),
    );
    assert.ok(found[0]?.includes('"decison"'), found.join("\n"));
  });
});
