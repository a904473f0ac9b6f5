// The registration evaluator (docs/CATALOGUE.md, "Registration"): whether a
// host-side SDK can enforce a hook registration document, judged against
// the discovered manifest, the operator's requirements and the context
// (interactivity, environment). The rules run in order; the first that
// fails rejects the document and is named. No I/O, no knowledge of the
// test contract.

import { hasKey, isObject, type Json, type JsonObject } from "./json.js";
import type { Check } from "./schemas.js";

/** The rules, in the order they run. */
export const REGISTRATION_RULES = [
  "schema",
  "duplicate-backend",
  "transport",
  "authentication",
  "credential",
  "event",
  "scope",
  "timeout",
  "requirement",
  "interactive",
] as const;

export type RegistrationRule = (typeof REGISTRATION_RULES)[number];

export type RegistrationVerdict =
  | { readonly accepted: true }
  | {
      readonly accepted: false;
      readonly rule: RegistrationRule;
      readonly reason: string;
    };

export interface RegistrationInput {
  /** The registration document, as written. */
  readonly registration: Json;
  /** The discovered manifest (`result.manifest` of `hooks/capabilities`). */
  readonly manifest: Json;
  /** `[{event, mode, effects, modify?}]`: what the operator needs enforced. */
  readonly requirements: readonly Json[];
  /** `{interactive, environment}`. */
  readonly context: Json;
}

/** One manifest entry: an event, the modes it is offered in, its capabilities. */
interface Offered {
  readonly event: string;
  readonly modes: readonly string[];
  readonly capabilities: JsonObject;
}

interface Subscription {
  readonly where: string;
  readonly mode: Json | undefined;
  readonly events: readonly string[];
  readonly block: JsonObject;
}

const WILDCARD = /^[a-z][a-z0-9]*\.\*$/;

/** Whether a subscription's event pattern (a type, `*` or `family.*`) matches `type`. */
export function eventMatches(pattern: string, type: string): boolean {
  if (pattern === "*") return true;
  if (WILDCARD.test(pattern)) return type.startsWith(pattern.slice(0, -1));
  return pattern === type;
}

function list(value: Json | undefined): Json[] {
  return Array.isArray(value) ? value : [];
}

function strings(value: Json | undefined): string[] {
  return list(value).filter((item): item is string => typeof item === "string");
}

function object(value: Json | undefined): JsonObject {
  return isObject(value) ? value : {};
}

function offered(manifest: JsonObject): Offered[] {
  const entries: Offered[] = [];
  for (const entry of list(manifest["events"])) {
    if (!isObject(entry) || typeof entry["event"] !== "string") continue;
    entries.push({
      event: entry["event"],
      modes: strings(entry["modes"]),
      capabilities: object(entry["capabilities"]),
    });
  }
  return entries;
}

/** The document's backends (objects only: the schema has already spoken). */
function backends(registration: JsonObject): JsonObject[] {
  return list(registration["hooks"]).filter(isObject);
}

function subscriptions(registration: JsonObject): Subscription[] {
  const found: Subscription[] = [];
  for (const [b, backend] of backends(registration).entries()) {
    for (const [s, block] of list(backend["subscriptions"]).entries()) {
      if (!isObject(block)) continue;
      found.push({
        where: `hooks[${b}].subscriptions[${s}]`,
        mode: block["mode"],
        events: strings(block["events"]),
        block,
      });
    }
  }
  return found;
}

type RuleCheck = (
  registration: JsonObject,
  manifest: JsonObject,
  input: RegistrationInput,
) => string | null;

const show = (value: Json | undefined): string => JSON.stringify(value ?? null);

const RULES: Readonly<Record<Exclude<RegistrationRule, "schema">, RuleCheck>> =
  {
    "duplicate-backend": (registration) => {
      const seen = new Set<string>();
      for (const backend of backends(registration)) {
        const id = show(backend["id"]);
        if (seen.has(id)) return `two backends have the id ${id}`;
        seen.add(id);
      }
      return null;
    },

    transport: (registration, manifest) => {
      const supported = strings(manifest["transports"]);
      for (const [index, backend] of backends(registration).entries()) {
        const type = object(backend["transport"])["type"];
        if (typeof type !== "string" || !supported.includes(type))
          return `hooks[${index}] uses transport ${show(type)}; the host offers ${show(supported)}`;
      }
      return null;
    },

    authentication: (registration, manifest) => {
      const supported = strings(manifest["authentication"]);
      for (const [index, backend] of backends(registration).entries()) {
        if (!hasKey(backend, "authentication")) continue;
        const type = object(backend["authentication"])["type"];
        if (typeof type !== "string" || !supported.includes(type))
          return `hooks[${index}] authenticates with ${show(type)}; the host offers ${show(supported)}`;
      }
      return null;
    },

    credential: (registration, _manifest, input) => {
      const environment = object(object(input.context)["environment"]);
      for (const [index, backend] of backends(registration).entries()) {
        const auth = object(backend["authentication"]);
        if (auth["type"] !== "bearer") continue;
        if (hasKey(auth, "tokenRef"))
          return `hooks[${index}] names a token reference; there is no reference store`;
        const name = auth["tokenEnv"];
        const value =
          typeof name === "string" && hasKey(environment, name)
            ? environment[name]
            : undefined;
        if (typeof value !== "string" || value.length === 0)
          return `hooks[${index}]: the environment has no token in ${show(name)}`;
      }
      return null;
    },

    event: (registration, manifest) => {
      const entries = offered(manifest);
      for (const subscription of subscriptions(registration)) {
        for (const pattern of subscription.events) {
          const mode = subscription.mode;
          const matched = entries.some(
            (entry) =>
              typeof mode === "string" &&
              entry.modes.includes(mode) &&
              eventMatches(pattern, entry.event),
          );
          if (!matched)
            return `${subscription.where}: the host offers no event ${show(pattern)} in mode ${show(mode)}`;
        }
      }
      return null;
    },

    scope: (registration, manifest) => {
      const policy = object(manifest["managedPolicy"]);
      const scopes = strings(policy["scopes"]);
      // disableable true: the harness lets its user disable hooks, so it cannot
      // enforce a subscription that must not be disabled.
      const disableable = policy["disableable"] === true;
      for (const subscription of subscriptions(registration)) {
        if (hasKey(subscription.block, "scope")) {
          const scope = subscription.block["scope"];
          if (typeof scope !== "string" || !scopes.includes(scope))
            return `${subscription.where}: scope ${show(scope)} is not one of ${show(scopes)}`;
        }
        if (subscription.block["disableable"] === false && disableable)
          return `${subscription.where}: disableable false cannot be enforced: managedPolicy.disableable is true`;
      }
      return null;
    },

    timeout: (registration, manifest) => {
      const limits = object(manifest["limits"]);
      const min = limits["minTimeoutMs"];
      const max = limits["maxTimeoutMs"];
      for (const subscription of subscriptions(registration)) {
        if (subscription.mode !== "intercept") continue;
        const timeout = subscription.block["timeoutMs"];
        if (typeof timeout !== "number") continue;
        if (typeof min === "number" && timeout < min)
          return `${subscription.where}: timeoutMs ${timeout} is below ${min}`;
        if (typeof max === "number" && timeout > max)
          return `${subscription.where}: timeoutMs ${timeout} is above ${max}`;
      }
      return null;
    },

    requirement: (registration, manifest, input) => {
      const entries = offered(manifest);
      const subs = subscriptions(registration);
      for (const [index, raw] of input.requirements.entries()) {
        const where = `requirements[${index}]`;
        if (!isObject(raw)) return `${where} is not an object`;
        const { event, mode } = raw;
        if (typeof event !== "string" || typeof mode !== "string")
          return `${where} needs an event and a mode`;
        const covered = subs.some(
          (subscription) =>
            subscription.mode === mode &&
            subscription.events.some((pattern) => eventMatches(pattern, event)),
        );
        if (!covered)
          return `${where}: no subscription covers ${event} in mode ${mode}`;
        const entry = entries.find(
          (candidate) =>
            candidate.event === event && candidate.modes.includes(mode),
        );
        if (entry === undefined)
          return `${where}: the host offers no ${event} in mode ${mode}`;
        if (hasKey(raw, "effects") && !Array.isArray(raw["effects"]))
          return `${where}: effects must be a list`;
        const effects = list(raw["effects"]);
        if (mode !== "intercept") {
          if (effects.length > 0)
            return `${where}: an observer enforces no effect (${show(effects)})`;
          continue;
        }
        const capabilities = entry.capabilities;
        const offeredEffects = strings(capabilities["effects"]);
        for (const effect of effects) {
          if (typeof effect !== "string" || !offeredEffects.includes(effect))
            return `${where}: ${event} does not offer the effect ${show(effect)}`;
        }
        if (!hasKey(raw, "modify")) continue;
        const modify = raw["modify"];
        if (!isObject(modify)) return `${where}: modify must be an object`;
        const targets = object(capabilities["modify"]);
        // Every target's operations block is an object, and every operation
        // it sets true (whatever its name) is true in the host's capabilities.
        for (const [target, operations] of Object.entries(modify)) {
          const offeredTarget = targets[target];
          if (!hasKey(targets, target) || !isObject(offeredTarget))
            return `${where}: ${event} offers no modify target ${show(target)}`;
          if (!isObject(operations))
            return `${where}: modify.${target} must be an object`;
          for (const [operation, wanted] of Object.entries(operations)) {
            if (wanted === true && offeredTarget[operation] !== true)
              return `${where}: ${event} offers no ${show(operation)} of ${target}`;
          }
        }
      }
      return null;
    },

    interactive: (_registration, _manifest, input) => {
      if (object(input.context)["interactive"] === true) return null;
      for (const [index, raw] of input.requirements.entries()) {
        if (isObject(raw) && list(raw["effects"]).includes("ask"))
          return `requirements[${index}] needs ask, and nobody is there to answer`;
      }
      return null;
    },
  };

/**
 * Evaluates a registration document: the first rule of REGISTRATION_RULES
 * that fails rejects it (named, with a reason); none failing accepts it.
 * `schema` checks the document against the canonical `registration` schema.
 */
export function evaluateRegistration(
  input: RegistrationInput,
  schema: Check,
): RegistrationVerdict {
  const invalid = schema(input.registration);
  if (invalid !== null || !isObject(input.registration))
    return { accepted: false, rule: "schema", reason: invalid ?? "invalid" };
  const manifest = object(input.manifest);
  for (const rule of REGISTRATION_RULES) {
    if (rule === "schema") continue;
    const reason = RULES[rule](input.registration, manifest, input);
    if (reason !== null) return { accepted: false, rule, reason };
  }
  return { accepted: true };
}
