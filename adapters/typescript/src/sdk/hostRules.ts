// The synthetic host's local input rules, checked on the staged effective
// value inside the response transaction (docs/scenarios.md, "Host rules").

import {
  isObject,
  isPositiveInteger,
  type Json,
  type JsonObject,
} from "./json.js";

/** Returns why the staged value breaks a host rule, or null when it passes. */
export function hostRuleViolation(
  event: JsonObject,
  staged: Json,
): string | null {
  const tool = event["tool"];
  if (
    event["type"] === "tool.before" &&
    isObject(tool) &&
    tool["name"] === "task"
  ) {
    if (!isObject(staged) || !isPositiveInteger(staged["task"])) {
      return "host rule: the task tool needs a positive integer `task`";
    }
  }
  return null;
}
