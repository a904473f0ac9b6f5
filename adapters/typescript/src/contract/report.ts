// The client report: `{language, results: [{id, status, actual?, error?}]}`,
// written atomically (temporary file, then rename).

import { renameSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { Json, JsonObject } from "../sdk/json.js";

/**
 * Blind statuses: `completed` (with `actual`), `unsupported` or `failed`
 * (each with an `error`).
 */
export type ResultEntry =
  | {
      readonly id: string;
      readonly status: "completed";
      readonly actual: JsonObject;
    }
  | {
      readonly id: string;
      readonly status: "unsupported" | "failed";
      readonly error: string;
    };

/** Writes `{language, results, ...extra}` (a suite's further keys, e.g. `receipts`). */
export function writeReport(
  path: string,
  language: string,
  results: readonly ResultEntry[],
  extra: Readonly<Record<string, Json>> = {},
): void {
  const temporary = join(dirname(path), `.${process.pid}.report.tmp`);
  try {
    writeFileSync(
      temporary,
      `${JSON.stringify({ language, results, ...extra }, null, 1)}\n`,
    );
    renameSync(temporary, path);
  } finally {
    rmSync(temporary, { force: true });
  }
}
