// The registration evaluator (docs/CATALOGUE.md, "Registration") against
// the catalogue manifest: each rule accepted and rejected, and the order in
// which they run; the catalogue manifest itself.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import type { Json, JsonObject } from "../sdk/json.js";
import {
  CATALOGUE_EVENTS,
  catalogueManifest,
  discoveryResponse,
} from "../sdk/manifest.js";
import {
  evaluateRegistration,
  eventMatches,
  REGISTRATION_RULES,
  type RegistrationVerdict,
} from "../sdk/registration.js";
import { loadSchemas } from "../sdk/schemas.js";
import { SCHEMA_DIR } from "./processes.js";

const schemas = loadSchemas(SCHEMA_DIR);
const M = catalogueManifest();

const http = { type: "http", url: "https://policy.example.invalid/hooks" };
const observe = (events: string[], extra: JsonObject = {}): JsonObject => ({
  events,
  mode: "observe",
  content: { default: "metadata" },
  ...extra,
});
const intercept = (events: string[], extra: JsonObject = {}): JsonObject => ({
  events,
  mode: "intercept",
  timeoutMs: 500,
  failurePolicy: "fail-closed",
  content: { default: "metadata" },
  ...extra,
});
const backend = (
  subscriptions: JsonObject[],
  extra: JsonObject = {},
): JsonObject => ({
  id: "com.example.catalogue",
  transport: http,
  subscriptions,
  ...extra,
});
const doc = (...hooks: JsonObject[]): JsonObject => ({
  protocolVersion: "draft",
  hooks,
});

const interactive = { interactive: true, environment: {} };

function evaluate(
  registration: Json,
  requirements: Json[] = [],
  context: Json = interactive,
  manifest: Json = M,
): RegistrationVerdict {
  return evaluateRegistration(
    { registration, manifest, requirements, context },
    schemas.registration,
  );
}

function accepts(verdict: RegistrationVerdict): void {
  assert.deepEqual(verdict, { accepted: true });
}

function rejects(verdict: RegistrationVerdict, rule: string): void {
  assert.equal(verdict.accepted, false, "accepted");
  if (!verdict.accepted) assert.equal(verdict.rule, rule, verdict.reason);
}

describe("registration: schema", () => {
  test("valid observer and interceptor documents pass", () => {
    accepts(evaluate(doc(backend([observe(["tool.after"])]))));
    accepts(evaluate(doc(backend([intercept(["tool.before"])]))));
  });

  test("what the canonical schema refuses", () => {
    const cases: [string, Json][] = [
      ["not an object", []],
      ["no hooks", { protocolVersion: "draft" }],
      [
        "intercept without failurePolicy",
        doc(backend([without(intercept(["tool.before"]), "failurePolicy")])),
      ],
      [
        "intercept without timeoutMs",
        doc(backend([without(intercept(["tool.before"]), "timeoutMs")])),
      ],
      [
        "timeoutMs on an observer",
        doc(backend([observe(["tool.after"], { timeoutMs: 100 })])),
      ],
      [
        "failurePolicy on an observer",
        doc(backend([observe(["tool.after"], { failurePolicy: "fail-open" })])),
      ],
      [
        "no content.default",
        doc(backend([observe(["tool.after"], { content: {} })])),
      ],
      [
        "an observe-only event intercepted",
        doc(backend([intercept(["model.error"])])),
      ],
      [
        "mtls authentication",
        doc(
          backend([observe(["tool.after"])], {
            authentication: { type: "mtls" },
          }),
        ),
      ],
      [
        "workload authentication",
        doc(
          backend([observe(["tool.after"])], {
            authentication: { type: "workload" },
          }),
        ),
      ],
      [
        "a literal token",
        doc(
          backend([observe(["tool.after"])], {
            authentication: { type: "bearer", token: "secret" },
          }),
        ),
      ],
      [
        "scope managed without disableable false",
        doc(backend([intercept(["tool.before"], { scope: "managed" })])),
      ],
      [
        "scope managed, disableable true",
        doc(
          backend([
            intercept(["tool.before"], { scope: "managed", disableable: true }),
          ]),
        ),
      ],
      [
        "an unknown key",
        { ...doc(backend([observe(["tool.after"])])), extra: 1 },
      ],
    ];
    for (const [what, registration] of cases) {
      const verdict = evaluate(registration);
      assert.equal(verdict.accepted, false, what);
      if (!verdict.accepted) assert.equal(verdict.rule, "schema", what);
    }
  });
});

/** A copy of `block` without `key`. */
function without(block: JsonObject, key: string): JsonObject {
  const copy = { ...block };
  delete copy[key];
  return copy;
}

describe("registration: backends", () => {
  test("duplicate-backend: two backends share an id", () => {
    rejects(
      evaluate(
        doc(
          backend([observe(["tool.after"])]),
          backend([observe(["tool.after"])]),
        ),
      ),
      "duplicate-backend",
    );
    accepts(
      evaluate(
        doc(
          backend([observe(["tool.after"])]),
          backend([observe(["tool.after"])], { id: "com.example.other" }),
        ),
      ),
    );
  });

  test("transport: a transport the manifest does not offer", () => {
    const stdio = { type: "stdio", command: "hook", lifecycle: "persistent" };
    rejects(
      evaluate(doc(backend([observe(["tool.after"])], { transport: stdio }))),
      "transport",
    );
    accepts(
      evaluate(
        doc(backend([observe(["tool.after"])], { transport: stdio })),
        [],
        interactive,
        { ...M, transports: ["http", "stdio"] },
      ),
    );
  });

  test("authentication: an authentication the manifest does not offer; none at all is fine", () => {
    const oauth = {
      type: "oauth",
      resource: "https://policy.example.invalid/",
      issuer: "https://issuer.example.invalid/",
      clientId: "client",
      flow: "client_credentials",
    };
    rejects(
      evaluate(
        doc(backend([observe(["tool.after"])], { authentication: oauth })),
      ),
      "authentication",
    );
    accepts(
      evaluate(
        doc(backend([observe(["tool.after"])], { authentication: oauth })),
        [],
        interactive,
        {
          ...M,
          authentication: ["bearer", "oauth"],
        },
      ),
    );
    accepts(evaluate(doc(backend([observe(["tool.after"])]))));
  });

  test("credential: a bearer token must resolve from the environment; no reference store", () => {
    const bearer = (auth: JsonObject) =>
      doc(
        backend([observe(["tool.after"])], {
          authentication: { type: "bearer", ...auth },
        }),
      );
    const withEnv = (environment: JsonObject) => ({
      interactive: true,
      environment,
    });
    accepts(
      evaluate(bearer({ tokenEnv: "TOKEN" }), [], withEnv({ TOKEN: "t" })),
    );
    rejects(
      evaluate(bearer({ tokenEnv: "TOKEN" }), [], withEnv({})),
      "credential",
    );
    rejects(
      evaluate(bearer({ tokenEnv: "TOKEN" }), [], withEnv({ TOKEN: "" })),
      "credential",
    );
    rejects(
      evaluate(bearer({ tokenEnv: "TOKEN" }), [], withEnv({ TOKEN: 7 })),
      "credential",
    );
    rejects(
      evaluate(bearer({ tokenEnv: "TOKEN" }), [], withEnv({ OTHER: "t" })),
      "credential",
    );
    rejects(
      evaluate(bearer({ tokenEnv: "TOKEN" }), [], { interactive: true }),
      "credential",
    );
    rejects(
      evaluate(
        bearer({ tokenRef: "vault:token" }),
        [],
        withEnv({ TOKEN: "t" }),
      ),
      "credential",
    );
  });
});

describe("registration: subscriptions", () => {
  test("event: the manifest must offer the event in the subscription's mode", () => {
    rejects(evaluate(doc(backend([observe(["hook.failure"])]))), "event");
    rejects(
      evaluate(doc(backend([intercept(["model.request.before"])]))),
      "event",
    );
    rejects(
      evaluate(
        doc(
          backend([
            observe(["tool.after"]),
            observe(["turn.end", "hook.failure"]),
          ]),
        ),
      ),
      "event",
    );
    accepts(
      evaluate(
        doc(backend([intercept(["tool.before", "tool.after", "turn.start"])])),
      ),
    );
    accepts(evaluate(doc(backend([observe([...CATALOGUE_EVENTS])]))));
  });

  test("event: a wildcard must match at least one offered event in the mode", () => {
    accepts(evaluate(doc(backend([observe(["*"])]))));
    accepts(evaluate(doc(backend([intercept(["*"])]))));
    accepts(evaluate(doc(backend([intercept(["tool.*"])]))));
    accepts(evaluate(doc(backend([observe(["model.*"])]))));
    rejects(evaluate(doc(backend([intercept(["model.*"])]))), "event");
    rejects(evaluate(doc(backend([observe(["hook.*"])]))), "event");
    rejects(evaluate(doc(backend([observe(["zz.*"])]))), "event");
    assert.equal(eventMatches("tool.*", "tool.permission.request"), true);
    assert.equal(eventMatches("tool.*", "toolkit.before"), false);
    assert.equal(eventMatches("*", "anything"), true);
    assert.equal(eventMatches("tool.before", "tool.before"), true);
    assert.equal(eventMatches("tool.before", "tool.after"), false);
  });

  test("scope: a stated scope must be one the managed policy offers", () => {
    accepts(
      evaluate(doc(backend([intercept(["tool.before"], { scope: "user" })]))),
    );
    accepts(
      evaluate(doc(backend([observe(["tool.after"], { scope: "project" })]))),
    );
    rejects(
      evaluate(
        doc(
          backend([
            intercept(["tool.before"], {
              scope: "managed",
              disableable: false,
            }),
          ]),
        ),
      ),
      "scope",
    );
    rejects(
      evaluate(
        doc(backend([observe(["tool.after"], { scope: "user" })])),
        [],
        interactive,
        {
          ...M,
          managedPolicy: { scopes: ["project"], disableable: true },
        },
      ),
      "scope",
    );
  });

  test("scope: a subscription that must not be disabled needs a manifest that enforces it", () => {
    // M.managedPolicy.disableable is true: the user may disable hooks.
    rejects(
      evaluate(
        doc(
          backend([
            observe(["tool.after"], { scope: "user", disableable: false }),
          ]),
        ),
      ),
      "scope",
    );
    rejects(
      evaluate(
        doc(backend([intercept(["tool.before"], { disableable: false })])),
      ),
      "scope",
    );
    accepts(
      evaluate(
        doc(
          backend([
            observe(["tool.after"], { scope: "user", disableable: true }),
          ]),
        ),
      ),
    );
    accepts(
      evaluate(
        doc(backend([intercept(["tool.before"], { disableable: false })])),
        [],
        interactive,
        {
          ...M,
          managedPolicy: { scopes: ["user", "project"], disableable: false },
        },
      ),
    );
  });

  test("timeout: an interceptor's timeoutMs within the manifest's limits, bounds included", () => {
    const at = (timeoutMs: number, manifest: Json = M) =>
      evaluate(
        doc(backend([intercept(["tool.before"], { timeoutMs })])),
        [],
        interactive,
        manifest,
      );
    rejects(at(99), "timeout");
    accepts(at(100));
    accepts(at(30000));
    rejects(at(30001), "timeout");
    // a limit the manifest does not state is not checked
    accepts(at(1, { ...M, limits: { maxTimeoutMs: 30000 } }));
    rejects(at(30001, { ...M, limits: { maxTimeoutMs: 30000 } }), "timeout");
    accepts(at(1_000_000, { ...M, limits: {} }));
  });
});

describe("registration: requirements and context", () => {
  const interceptor = doc(backend([intercept(["tool.before", "tool.after"])]));
  const req = (requirement: JsonObject) => evaluate(interceptor, [requirement]);

  test("a requirement must be covered by a subscription of its mode", () => {
    accepts(
      req({ event: "tool.before", mode: "intercept", effects: ["deny"] }),
    );
    rejects(
      req({ event: "turn.start", mode: "intercept", effects: [] }),
      "requirement",
    );
    rejects(
      req({ event: "tool.before", mode: "observe", effects: [] }),
      "requirement",
    );
    // covered by a wildcard
    accepts(
      evaluate(doc(backend([intercept(["tool.*"])])), [
        { event: "tool.after", mode: "intercept", effects: ["message"] },
      ]),
    );
    accepts(
      evaluate(doc(backend([observe(["*"])])), [
        { event: "file.changed", mode: "observe", effects: [] },
      ]),
    );
  });

  test("the manifest must list the requirement's event with its mode", () => {
    // covered by the wildcard, but hook.failure is not offered
    rejects(
      evaluate(doc(backend([observe(["*"])])), [
        { event: "hook.failure", mode: "observe", effects: [] },
      ]),
      "requirement",
    );
    rejects(
      evaluate(doc(backend([intercept(["*"])])), [
        { event: "model.error", mode: "intercept", effects: [] },
      ]),
      "requirement",
    );
  });

  test("intercept: every effect offered, modify targets and the operations set true", () => {
    accepts(
      req({
        event: "tool.before",
        mode: "intercept",
        effects: ["deny", "allow", "ask", "modify", "message", "flow"],
      }),
    );
    rejects(
      req({ event: "tool.before", mode: "intercept", effects: ["return"] }),
      "requirement",
    );
    rejects(
      req({ event: "tool.after", mode: "intercept", effects: ["deny"] }),
      "requirement",
    );
    accepts(
      req({
        event: "tool.before",
        mode: "intercept",
        effects: ["modify"],
        modify: { input: { replace: true, merge: true } },
      }),
    );
    accepts(
      req({
        event: "tool.after",
        mode: "intercept",
        effects: ["modify"],
        modify: { output: { replace: true } },
      }),
    );
    accepts(
      req({
        event: "tool.after",
        mode: "intercept",
        effects: ["modify"],
        modify: { output: { replace: true, merge: false } },
      }),
    );
    rejects(
      req({
        event: "tool.after",
        mode: "intercept",
        effects: ["modify"],
        modify: { output: { merge: true } },
      }),
      "requirement",
    );
    rejects(
      req({
        event: "tool.before",
        mode: "intercept",
        effects: ["modify"],
        modify: { nonexistent: { replace: true } },
      }),
      "requirement",
    );
    rejects(
      req({
        event: "tool.before",
        mode: "intercept",
        effects: ["modify"],
        modify: { output: {} },
      }),
      "requirement",
    );
  });

  test("intercept: a modify target's operations block is an object, and every operation it sets true counts", () => {
    // not an object: not covered (docs/CATALOGUE.md, Readings)
    for (const operations of [true, null, ["replace"], "replace"])
      rejects(
        req({
          event: "tool.before",
          mode: "intercept",
          effects: ["modify"],
          modify: { input: operations },
        }),
        "requirement",
      );
    // an operation other than replace and merge set true: not true in M
    rejects(
      req({
        event: "tool.before",
        mode: "intercept",
        effects: ["modify"],
        modify: { input: { replace: true, append: true } },
      }),
      "requirement",
    );
    rejects(
      req({
        event: "tool.before",
        mode: "intercept",
        effects: ["modify"],
        modify: { input: { toString: true } },
      }),
      "requirement",
    );
    // set to anything but true, an operation needs nothing
    accepts(
      req({
        event: "tool.before",
        mode: "intercept",
        effects: ["modify"],
        modify: { input: { replace: true, append: false, prepend: "yes" } },
      }),
    );
  });

  test("observe: no effects", () => {
    const observer = doc(backend([observe(["tool.after"])]));
    accepts(
      evaluate(observer, [
        { event: "tool.after", mode: "observe", effects: [] },
      ]),
    );
    rejects(
      evaluate(observer, [
        { event: "tool.after", mode: "observe", effects: ["message"] },
      ]),
      "requirement",
    );
  });

  test("interactive: ask needs an interactive context", () => {
    const ask = [{ event: "tool.before", mode: "intercept", effects: ["ask"] }];
    accepts(evaluate(interceptor, ask, { interactive: true, environment: {} }));
    rejects(
      evaluate(interceptor, ask, { interactive: false, environment: {} }),
      "interactive",
    );
    rejects(evaluate(interceptor, ask, { environment: {} }), "interactive");
    rejects(
      evaluate(interceptor, ask, { interactive: "yes", environment: {} }),
      "interactive",
    );
    accepts(
      evaluate(
        interceptor,
        [{ event: "tool.before", mode: "intercept", effects: ["deny"] }],
        {
          interactive: false,
          environment: {},
        },
      ),
    );
  });
});

describe("registration: the rules run in order", () => {
  test("a document failing every rule names each in turn as the earlier ones are mended", () => {
    // Each flag mends one rule's fault; the document fails the first unmended one.
    const faults = REGISTRATION_RULES.slice(1);
    const build = (mended: ReadonlySet<string>) => {
      const fixed = (rule: string) => mended.has(rule);
      const registration = doc(
        backend(
          [
            intercept(["tool.before"], {
              timeoutMs: fixed("timeout") ? 500 : 50,
            }),
          ],
          {
            transport: fixed("transport")
              ? http
              : { type: "stdio", command: "hook", lifecycle: "persistent" },
          },
        ),
        backend(
          [
            observe(
              fixed("event") ? ["tool.after"] : ["tool.after", "hook.failure"],
              {
                ...(fixed("scope")
                  ? { scope: "user" }
                  : { scope: "managed", disableable: false }),
              },
            ),
          ],
          {
            id: fixed("duplicate-backend")
              ? "com.example.second"
              : "com.example.catalogue",
            authentication: fixed("authentication")
              ? { type: "bearer", tokenEnv: "PRESENT" }
              : {
                  type: "oauth",
                  resource: "https://policy.example.invalid/",
                  issuer: "https://issuer.example.invalid/",
                  clientId: "client",
                  flow: "client_credentials",
                },
          },
        ),
        backend([observe(["turn.end"])], {
          id: "com.example.third",
          authentication: {
            type: "bearer",
            tokenEnv: fixed("credential") ? "PRESENT" : "ABSENT",
          },
        }),
      );
      const requirements: Json[] = [
        ...(fixed("requirement")
          ? []
          : [{ event: "tool.after", mode: "intercept", effects: ["message"] }]),
        { event: "tool.before", mode: "intercept", effects: ["ask"] },
      ];
      const context = {
        interactive: fixed("interactive"),
        environment: { PRESENT: "token" },
      };
      return evaluate(registration, requirements, context);
    };
    const mended = new Set<string>();
    for (const rule of faults) {
      rejects(build(mended), rule);
      mended.add(rule);
    }
    accepts(build(mended));
    // and schema before everything: the same faults plus an invalid document
    const verdict = evaluateRegistration(
      {
        registration: { protocolVersion: "draft", hooks: [] },
        manifest: M,
        requirements: [
          { event: "tool.after", mode: "intercept", effects: ["ask"] },
        ],
        context: { interactive: false, environment: {} },
      },
      schemas.registration,
    );
    rejects(verdict, "schema");
    assert.deepEqual(
      [...REGISTRATION_RULES],
      [
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
      ],
    );
  });
});

describe("the catalogue manifest", () => {
  test("every event type of the protocol but hook.failure, in the schema's order", () => {
    const common = JSON.parse(
      readFileSync(join(SCHEMA_DIR, "common.schema.json"), "utf8"),
    ) as { $defs: { eventType: { enum: string[] } } };
    const expected = common.$defs.eventType.enum.filter(
      (t) => t !== "hook.failure",
    );
    const events = M["events"] as JsonObject[];
    assert.deepEqual(
      events.map((entry) => entry["event"]),
      expected,
    );
    for (const entry of events) {
      const type = entry["event"] as string;
      if (["tool.before", "tool.after", "turn.start"].includes(type)) {
        assert.deepEqual(entry["modes"], ["intercept", "observe"], type);
        assert.ok(entry["capabilities"], type);
      } else {
        assert.deepEqual(entry, { event: type, modes: ["observe"] });
      }
    }
  });

  test("is a valid discovery response, and a fresh copy each time", () => {
    assert.equal(
      schemas.capabilitiesResponse(
        discoveryResponse("discovery", catalogueManifest()),
      ),
      null,
    );
    const copy = catalogueManifest();
    (copy["transports"] as string[]).push("stdio");
    assert.deepEqual(catalogueManifest()["transports"], ["http"]);
  });
});
