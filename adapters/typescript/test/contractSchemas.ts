// The contract's own schemas (schemas/contract/*.schema.json), compiled with
// Ajv (Draft 2020-12), to check what the adapter writes: readiness file,
// report, receipt log lines, control answers.

import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import type { ValidateFunction } from "ajv";
import { ADAPTER_DIR, CONTRACT_SCHEMA_DIR } from "./processes.js";

const require = createRequire(join(ADAPTER_DIR, "package.json"));
const Ajv2020 = (require("ajv/dist/2020") as typeof import("ajv/dist/2020.js"))
  .default;

const BASE = "https://interop.ahp.test/schemas/contract/";
const ajv = new Ajv2020({ strict: false, allErrors: true });
for (const name of readdirSync(CONTRACT_SCHEMA_DIR).filter((file) =>
  file.endsWith(".schema.json"),
))
  ajv.addSchema(
    JSON.parse(readFileSync(join(CONTRACT_SCHEMA_DIR, name), "utf8")) as object,
  );

const compiled = new Map<string, ValidateFunction>();

/**
 * Asserts `value` is valid against `ref`, a schema file name with an optional
 * fragment: `readiness.schema.json`, `control.schema.json#/$defs/health`.
 */
export function assertContract(ref: string, value: unknown, what = ref): void {
  let validate = compiled.get(ref);
  if (validate === undefined) {
    validate = ajv.getSchema(BASE + ref);
    if (validate === undefined) throw new Error(`no contract schema ${ref}`);
    compiled.set(ref, validate);
  }
  assert.ok(
    validate(value),
    `${what} breaks ${ref}: ${ajv.errorsText(validate.errors)}`,
  );
}
