// Test-only reading of scenario answers (`expected`, `expectError`), which the
// adapter itself never reads, and the comparison rule the harness applies.

import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { jsonEqual, type Json, type JsonObject } from "../json.js";
import { ADAPTER_DIR } from "./processes.js";

export const SCENARIO_DIR = join(ADAPTER_DIR, "..", "..", "scenarios");
export const UPSTREAM_FILE = join(SCENARIO_DIR, "upstream", "scenarios.json");
export const CORE_FILE = join(SCENARIO_DIR, "core.json");

export interface AnsweredScenario {
  readonly id: string;
  readonly request: JsonObject;
  readonly response: Json;
  readonly expected?: JsonObject;
  readonly expectError?: boolean;
}

/** The scenario files present: upstream always, core.json once it exists. */
export function scenarioFiles(): string[] {
  return [UPSTREAM_FILE, CORE_FILE].filter((path) => existsSync(path));
}

export function readAnswered(path: string): AnsweredScenario[] {
  return (
    JSON.parse(readFileSync(path, "utf8")) as { scenarios: AnsweredScenario[] }
  ).scenarios;
}

const SEMANTIC_KEYS = [
  "result",
  "flow",
  "injections",
  "continuationInstructions",
  "continuationRemaining",
  "rejected",
];

/** The harness's verdict on one row: null when `actual` matches, else why not. */
export function mismatch(
  scenario: AnsweredScenario,
  actual: Json | undefined,
): string | null {
  const expected: JsonObject =
    scenario.expectError === true
      ? { rejected: true }
      : (scenario.expected ?? {});
  if (typeof actual !== "object" || actual === null || Array.isArray(actual))
    return "actual is not an object";
  for (const [key, value] of Object.entries(expected)) {
    if (!jsonEqual(value, actual[key])) {
      return `${key}: expected ${JSON.stringify(value)}, got ${JSON.stringify(actual[key])}`;
    }
  }
  for (const key of SEMANTIC_KEYS) {
    if (!(key in expected) && key in actual)
      return `${key} must be absent, got ${JSON.stringify(actual[key])}`;
  }
  return null;
}
