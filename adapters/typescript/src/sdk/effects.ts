// Typed reading of the effects in an intercept result. The canonical schema
// decides structural validity; this module only turns each effect into a
// typed value and refuses any it cannot read (unknown type, target,
// operation or a field of the wrong type), so the engine never guesses.

import { isObject, hasKey, type Json, type JsonObject } from "./json.js";

export type Permission = "deny" | "ask" | "allow";

export type Effect =
  | { readonly type: Permission }
  | { readonly type: "message"; readonly text: string }
  | {
      readonly type: "modify";
      readonly target: string;
      readonly operation: "replace" | "merge";
      readonly value: Json;
    }
  | { readonly type: "return"; readonly value: Json }
  | {
      readonly type: "flow";
      readonly operation: "stop";
      readonly reason: string;
    }
  | {
      readonly type: "flow";
      readonly operation: "continue";
      readonly instruction: string | null;
    }
  | {
      readonly type: "inject";
      readonly deliverAt: string;
      readonly value: Json;
      readonly whole: JsonObject;
    };

export const MODIFY_TARGETS: ReadonlySet<string> = new Set([
  "input",
  "output",
  "prompt",
  "request",
  "response",
  "content",
  "instructions",
  "summary",
  "workspace",
]);

const DELIVERY_TIMES: ReadonlySet<string> = new Set(["now", "next_turn"]);

export class EffectError extends Error {}

function nonEmptyString(value: Json | undefined): value is string {
  return typeof value === "string" && value.length > 0;
}

/** Reads one effect, or throws EffectError naming what could not be read. */
export function readEffect(raw: Json, index: number): Effect {
  const fail = (why: string): never => {
    throw new EffectError(`effect ${index}: ${why}`);
  };
  if (!isObject(raw)) return fail("not an object");
  const type = raw["type"];
  switch (type) {
    case "deny":
      if (!nonEmptyString(raw["reason"])) fail("deny without a reason");
      return { type };
    case "ask":
    case "allow":
      return { type };
    case "message": {
      const text = raw["text"];
      if (typeof text !== "string") return fail("message text is not a string");
      return { type, text };
    }
    case "modify": {
      const { target, operation } = raw;
      if (typeof target !== "string" || !MODIFY_TARGETS.has(target))
        return fail("unknown modify target");
      if (operation !== "replace" && operation !== "merge")
        return fail("unknown modify operation");
      if (!hasKey(raw, "value")) return fail("modify without a value");
      return { type, target, operation, value: raw["value"] ?? null };
    }
    case "return":
      if (!hasKey(raw, "value")) return fail("return without a value");
      return { type, value: raw["value"] ?? null };
    case "flow": {
      const operation = raw["operation"];
      if (operation === "stop") {
        const reason = raw["reason"];
        if (!nonEmptyString(reason)) return fail("flow stop without a reason");
        return { type, operation, reason };
      }
      if (operation === "continue") {
        const instruction = raw["instruction"];
        if (instruction !== undefined && !nonEmptyString(instruction))
          return fail("bad continue instruction");
        return { type, operation, instruction: instruction ?? null };
      }
      return fail("unknown flow operation");
    }
    case "inject": {
      const deliverAt = raw["deliverAt"];
      if (raw["target"] !== "context") return fail("unknown inject target");
      if (raw["operation"] !== "append")
        return fail("unknown inject operation");
      if (typeof deliverAt !== "string" || !DELIVERY_TIMES.has(deliverAt))
        return fail("unknown inject delivery");
      if (!hasKey(raw, "value")) return fail("inject without a value");
      return { type, deliverAt, value: raw["value"] ?? null, whole: raw };
    }
    default:
      return fail(`unknown effect type ${JSON.stringify(type)}`);
  }
}
