// The elicitation suite: the receiver's checks one rule at a time (each
// accepts its good case and refuses the broken one, changing no state), the
// host's judgements at both boundaries, and the server and client as real
// processes over HTTP (none, strict bearer over TLS) and stdio with a
// hand-written scenario file, the report and receipts checked against the
// contract schemas.

import assert from "node:assert/strict";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import {
  ElicitationReceiver,
  FormSchemas,
  judgeRequestReply,
  judgeResultReply,
  mcpChecks,
  requestView,
  resultRequest,
  type HostDeps,
  type Verdict,
} from "../sdk/elicitation.js";
import type { Json, JsonObject } from "../sdk/json.js";
import { loadSchemas } from "../sdk/schemas.js";
import * as b from "./builders.js";
import { assertContract } from "./contractSchemas.js";
import {
  attachmentItem,
  AUTH_SOURCE,
  bodyPart,
  FORM,
  formParams,
  gapPart,
  intercept,
  noEffect,
  reply,
  REQUEST_CAPS,
  requestEvent,
  requestSummary,
  RESULT_CAPS,
  resultEvent,
  resultSummary,
  schemaDocuments,
  send,
  sha,
  upload,
  URL_PARAMS,
  withheldPart,
  withheldSummary,
} from "./elicitationKit.js";
import { makeTrust, type TrustFiles } from "./pki.js";
import {
  ADAPTER_DIR,
  CLI,
  control,
  processGone,
  runCli,
  SCHEMA_DIR,
  startServer,
  tempDir,
  writeJson,
  type RunningServer,
} from "./processes.js";

const schemas = loadSchemas(SCHEMA_DIR);
const mcp = mcpChecks(schemaDocuments());

// ---------------------------------------------------------------- the receiver

function receiver(stored: readonly string[] = []): ElicitationReceiver {
  return new ElicitationReceiver({
    request: schemas.request,
    mcp,
    forms: new FormSchemas(),
    stored: (ref) => stored.includes(ref),
    authenticatedSource: AUTH_SOURCE,
  });
}

function accepted(verdict: Verdict): JsonObject {
  assert.ok(verdict.accepted, verdict.accepted ? "" : verdict.reason);
  return verdict.summary;
}

function refused(verdict: Verdict, status: 400 | 409 = 400): void {
  assert.equal(verdict.accepted, false, "accepted, expected a refusal");
  if (!verdict.accepted) assert.equal(verdict.status, status, verdict.reason);
}

/** A copy of `value` without `key`. */
function without(value: JsonObject, key: string): JsonObject {
  const copy = { ...value };
  delete copy[key];
  return copy;
}

const ACCEPT: JsonObject = {
  action: "accept",
  content: { day: "monday", seats: 2 },
};

/** A receiver with request `r` live in session `s`. */
function withLive(
  params: JsonObject = formParams(),
  options = {},
): ElicitationReceiver {
  const live = receiver();
  accepted(
    live.receive(
      intercept(
        requestEvent("r", "s", {
          part: bodyPart("r-body", params),
          ...options,
        }),
      ),
    ),
  );
  return live;
}

const result = (
  body: JsonObject | string,
  options: Parameters<typeof resultEvent>[4] = {},
): JsonObject => {
  const value = typeof body === "string" ? { action: "accept" } : body;
  return intercept(
    resultEvent("a", "r", "s", value, {
      ...(typeof body === "string" ? { part: bodyPart("a-body", body) } : {}),
      ...options,
    }),
  );
};

describe("the receiver: 1. the canonical envelope and an elicitation event", () => {
  it("accepts a canonical request event", () => {
    assert.deepEqual(
      accepted(receiver().receive(intercept(requestEvent("r", "s")))),
      requestSummary(formParams()),
    );
  });

  it("refuses a message the intercept-request schema refuses", () => {
    const message = intercept(requestEvent("r", "s"));
    (message["params"] as JsonObject)["protocolVersion"] = "2020-01-01";
    refused(receiver().receive(message));
    refused(
      receiver().receive({
        jsonrpc: "2.0",
        id: "r",
        method: "hooks/intercept",
      }),
    );
    refused(receiver().receive([1, 2]));
  });

  it("refuses a canonical intercept of an event that is no elicitation event", () => {
    const message = intercept(b.event("r", b.toolBefore({ q: 1 })), {
      effects: ["deny"],
    });
    assert.equal(schemas.request(message), null);
    refused(receiver().receive(message));
  });
});

describe("the receiver: 2. content references", () => {
  const withItem = (ref: string) =>
    intercept(requestEvent("r", "s", { items: [attachmentItem("i", ref)] }));

  it("accepts a ref the store has", () => {
    accepted(
      receiver(["urn:uuid:stored"]).receive(withItem("urn:uuid:stored")),
    );
  });

  it("refuses a ref never stored with 409", () => {
    refused(
      receiver(["urn:uuid:stored"]).receive(withItem("urn:uuid:other")),
      409,
    );
  });
});

describe("the receiver: 3. session, part, gaps", () => {
  it("refuses an event without a session", () => {
    refused(
      receiver().receive(intercept(requestEvent("r", "s", { session: null }))),
    );
  });

  // interaction-payloads.md, "MCP elicitation binding": omission has no part.
  it("accepts a request event without its request part as omitted", () => {
    const live = receiver();
    assert.deepEqual(
      accepted(live.receive(intercept(requestEvent("r", "s", { part: null })))),
      { selection: "omit" },
    );
    assert.equal(live.liveCount, 1);
    refused(
      receiver().receive(
        intercept(requestEvent("r", "s", { part: null, session: null })),
      ),
    );
  });

  it("accepts a result event without its result part as omitted", () => {
    const live = withLive();
    assert.deepEqual(
      accepted(live.receive(result(ACCEPT, { part: null }))),
      withheldSummary("body", "omit"),
    );
    assert.equal(live.liveCount, 0);
  });

  it("correlates a result to a request that had no part", () => {
    const live = receiver();
    accepted(live.receive(intercept(requestEvent("r", "s", { part: null }))));
    const decline = { action: "decline" };
    assert.deepEqual(
      accepted(
        live.receive(
          intercept(resultEvent("a", "r", "s", decline, { part: null })),
        ),
      ),
      withheldSummary("omit", "omit"),
    );
    assert.equal(live.liveCount, 0);
  });

  it("refuses a body-selected part with a gap, at either event", () => {
    refused(
      receiver().receive(
        intercept(requestEvent("r", "s", { part: gapPart("g") })),
      ),
    );
    const live = withLive();
    refused(live.receive(result(ACCEPT, { part: gapPart("g") })));
    accepted(live.receive(result(ACCEPT)));
  });
});

describe("the receiver: 4. a request event", () => {
  const withBody = (body: Json | string, mode = "form") =>
    intercept(requestEvent("r", "s", { part: bodyPart("b", body), mode }));

  it("refuses the id of a live request", () => {
    const live = withLive();
    refused(live.receive(intercept(requestEvent("r", "s"))));
    refused(live.receive(intercept(requestEvent("r", "other"))));
    assert.equal(live.liveCount, 1);
  });

  it("refuses a text that is not one strict JSON object", () => {
    refused(receiver().receive(withBody("not json")));
    refused(receiver().receive(withBody('{"mode":"form","mode":"form"}')));
    refused(receiver().receive(withBody([formParams()])));
  });

  it("refuses a body the MCP requestParams definition refuses", () => {
    const noUrl = without(URL_PARAMS, "url");
    refused(receiver().receive(withBody(noUrl, "url")));
    const noSchema = without(formParams(), "requestedSchema");
    refused(receiver().receive(withBody(noSchema)));
    accepted(receiver().receive(withBody(URL_PARAMS, "url")));
  });

  it("refuses a body mode other than the event's (absent means form)", () => {
    refused(receiver().receive(withBody(URL_PARAMS, "form")));
    refused(receiver().receive(withBody(formParams(), "url")));
    const noMode = without(formParams(), "mode");
    accepted(receiver().receive(withBody(noMode, "form")));
    refused(receiver().receive(withBody(noMode, "url")));
  });

  it("refuses a requested schema that is not a usable JSON Schema", () => {
    refused(
      receiver().receive(
        withBody(
          formParams({
            type: "object",
            properties: { n: { type: "integer", minimum: "one" } },
          }),
        ),
      ),
    );
  });

  it("summarises a metadata or omit request by its selection, nothing more checked", () => {
    for (const selection of ["metadata", "omit"] as const)
      assert.deepEqual(
        accepted(
          receiver().receive(
            intercept(
              requestEvent("r", "s", { part: withheldPart("w", selection) }),
            ),
          ),
        ),
        { selection },
      );
  });

  it("keeps the parsed body exactly as sent (defaults and annotations)", () => {
    const params = formParams({
      type: "object",
      properties: { day: { type: "string", default: "monday", title: "Day" } },
    });
    assert.deepEqual(accepted(receiver().receive(withBody(params))), {
      request: params,
    });
  });
});

describe("the receiver: 5. a result event", () => {
  it("accepts a valid answer; the request is then answered", () => {
    const live = withLive();
    assert.deepEqual(
      accepted(live.receive(result(ACCEPT))),
      resultSummary(formParams(), ACCEPT),
    );
    assert.equal(live.liveCount, 0);
    refused(live.receive(intercept(resultEvent("b", "r", "s", ACCEPT))));
  });

  it("refuses a result without parentEventId or naming no live request", () => {
    const live = withLive();
    const orphan = resultEvent("a", "r", "s", ACCEPT);
    delete orphan["parentEventId"];
    refused(live.receive(intercept(orphan)));
    refused(live.receive(intercept(resultEvent("a", "nobody", "s", ACCEPT))));
    accepted(live.receive(result(ACCEPT)));
  });

  it("refuses a result in another session than its request's", () => {
    const live = withLive();
    refused(live.receive(result(ACCEPT, { session: "elsewhere" })));
    accepted(live.receive(result(ACCEPT)));
  });

  it("refuses a source, server or mode other than the request's", () => {
    const live = withLive();
    refused(
      live.receive(result(ACCEPT, { source: "urn:ahp-ts:someone-else" })),
    );
    refused(live.receive(result(ACCEPT, { server: "another-desk" })));
    refused(live.receive(result(ACCEPT, { mode: "url" })));
    accepted(live.receive(result(ACCEPT)));
  });

  it("refuses a body the MCP result definition refuses, or strict JSON does", () => {
    const live = withLive();
    refused(live.receive(result({ action: "maybe" }, { action: "accept" })));
    refused(
      live.receive(
        result({ action: "accept", content: { day: { nested: 1 } } }),
      ),
    );
    refused(live.receive(result('{"action":"accept","action":"accept"}')));
    accepted(live.receive(result(ACCEPT)));
  });

  it("refuses an action other than elicitation.action", () => {
    const live = withLive();
    refused(live.receive(result({ action: "decline" }, { action: "cancel" })));
    accepted(live.receive(result({ action: "decline" })));
  });

  it("refuses content anywhere but an accepted form", () => {
    const live = withLive();
    refused(
      live.receive(result({ action: "decline", content: { day: "monday" } })),
    );
    accepted(live.receive(result({ action: "decline" })));
    const url = withLive(URL_PARAMS, { mode: "url" });
    refused(
      url.receive(
        result(
          { action: "accept", content: { day: "monday" } },
          { mode: "url" },
        ),
      ),
    );
    accepted(url.receive(result({ action: "accept" }, { mode: "url" })));
  });

  it("checks a submitted form against the requested schema (absent content is {})", () => {
    const live = withLive();
    refused(
      live.receive(result({ action: "accept", content: { day: "friday" } })),
    );
    refused(
      live.receive(
        result({ action: "accept", content: { day: "monday", seats: 9 } }),
      ),
    );
    refused(live.receive(result({ action: "accept" })));
    // formats are annotations; properties outside the schema are allowed
    accepted(
      live.receive(
        result({
          action: "accept",
          content: { day: "tuesday", contact: "not an address", extra: true },
        }),
      ),
    );
  });

  it("fills in no default and compiles each distinct schema once", () => {
    const forms = new FormSchemas();
    const live = new ElicitationReceiver({
      request: schemas.request,
      mcp,
      forms,
      stored: () => false,
      authenticatedSource: AUTH_SOURCE,
    });
    const defaulted = formParams({
      required: ["day"],
      properties: { day: { type: "string", default: "monday" } },
      type: "object",
    });
    for (const id of ["r1", "r2"])
      accepted(
        live.receive(
          intercept(
            requestEvent(id, "s", { part: bodyPart(`${id}-b`, defaulted) }),
          ),
        ),
      );
    // the same schema with its keys in another order is the same schema
    accepted(live.receive(intercept(requestEvent("r3", "s"))));
    accepted(
      live.receive(
        intercept(
          requestEvent("r4", "s", {
            part: bodyPart(
              "r4-b",
              formParams({
                required: ["day"],
                type: "object",
                properties: FORM["properties"] ?? {},
              }),
            ),
          }),
        ),
      ),
    );
    assert.equal(forms.size, 2);
    refused(
      live.receive(
        intercept(
          resultEvent("a1", "r1", "s", { action: "accept", content: {} }),
        ),
      ),
    );
  });

  it("checks a result whose request had no body against the MCP definition only", () => {
    const live = receiver();
    accepted(
      live.receive(
        intercept(
          requestEvent("r", "s", { part: withheldPart("w", "metadata") }),
        ),
      ),
    );
    refused(
      live.receive(result({ action: "accept", content: { day: ["x", 1] } })),
    );
    assert.deepEqual(
      accepted(
        live.receive(result({ action: "accept", content: { day: "friday" } })),
      ),
      withheldSummary("metadata", "body"),
    );
  });

  it("summarises a withheld result by both selections", () => {
    const live = withLive();
    assert.deepEqual(
      accepted(
        live.receive(result(ACCEPT, { part: withheldPart("w", "omit") })),
      ),
      withheldSummary("body", "omit"),
    );
  });

  it("answers requests in any order, each in its own session", () => {
    const live = receiver();
    accepted(live.receive(intercept(requestEvent("r1", "s"))));
    accepted(live.receive(intercept(requestEvent("r2", "s"))));
    accepted(live.receive(intercept(resultEvent("a2", "r2", "s", ACCEPT))));
    accepted(live.receive(intercept(resultEvent("a1", "r1", "s", ACCEPT))));
    assert.equal(live.liveCount, 0);
  });
});

// ---------------------------------------------------------------- the host

const host: HostDeps = {
  engine: {
    validateResponse: schemas.response,
    content: schemas.content,
    hostRule: () => null,
  },
  mcp,
  forms: new FormSchemas(),
};

const USER: JsonObject = {
  action: "accept",
  content: { day: "monday", seats: 1 },
};

function hostRequest(
  params: JsonObject = formParams(),
  mode = "form",
  caps: JsonObject = REQUEST_CAPS,
): JsonObject {
  return intercept(
    requestEvent("h:request", "h:session", {
      part: bodyPart("h:body", params),
      mode,
    }),
    caps,
  );
}

describe("the host: the request boundary", () => {
  const judge = (effects: Json[], request = hostRequest()) =>
    judgeRequestReply(request, reply("h:request", effects), USER, host);

  it("asks the user when no effect decides", () => {
    assert.deepEqual(judge([{ type: "message", text: "fine" }]), {
      request: "allowed",
      result: USER,
      provenance: "user",
    });
  });

  it("denies on a deny, also after a return", () => {
    const given = { type: "return", value: { action: "decline" } };
    assert.deepEqual(judge([{ type: "deny", reason: "no" }]), {
      request: "denied",
    });
    assert.deepEqual(judge([given, { type: "deny", reason: "no" }]), {
      request: "denied",
    });
  });

  it("takes the last valid return as the hook's result", () => {
    const first = { action: "decline" };
    const last = { action: "accept", content: { day: "tuesday" } };
    assert.deepEqual(
      judge([
        { type: "return", value: first },
        { type: "return", value: last },
      ]),
      { request: "allowed", result: last, provenance: "hook" },
    );
  });

  it("rejects a return the requested schema or the MCP definition refuses", () => {
    for (const value of [
      { action: "accept", content: { day: "friday" } },
      { action: "accept" },
      { action: "decline", content: { day: "monday" } },
      { action: "later" },
      "accept",
    ])
      assert.equal(
        judge([
          { type: "message", text: "first" },
          { type: "return", value },
        ]).request,
        "rejected",
        JSON.stringify(value),
      );
    const url = hostRequest(URL_PARAMS, "url");
    assert.equal(
      judge([{ type: "return", value: { action: "accept", content: {} } }], url)
        .request,
      "rejected",
    );
    assert.equal(
      judge([{ type: "return", value: { action: "accept" } }], url).request,
      "allowed",
    );
  });

  it("rejects an unadvertised effect, another id, an error, another protocolVersion", () => {
    const noReturn = hostRequest(formParams(), "form", {
      effects: ["deny", "message"],
    });
    assert.equal(
      judge([{ type: "return", value: { action: "decline" } }], noReturn)
        .request,
      "rejected",
    );
    const request = hostRequest();
    const judged = (response: Json) =>
      judgeRequestReply(request, response, USER, host).request;
    assert.equal(judged(reply("other", [])), "rejected");
    assert.equal(
      judged({
        jsonrpc: "2.0",
        id: "h:request",
        error: { code: -32602, message: "no" },
      }),
      "rejected",
    );
    assert.equal(
      judged({
        jsonrpc: "2.0",
        id: "h:request",
        result: { protocolVersion: "1999", effects: [] },
      }),
      "rejected",
    );
    assert.equal(judged(null), "rejected");
  });
});

describe("the host: the result boundary", () => {
  const request = hostRequest();
  const call = (effective: JsonObject, caps: JsonObject = RESULT_CAPS) =>
    resultRequest(
      request,
      effective,
      { eventId: "h:result", partId: "h:result-body" },
      caps,
    );
  const settle = (effects: Json[], effective: JsonObject = USER) =>
    judgeResultReply(
      call(effective),
      reply("h:result", effects),
      effective,
      requestView(request, host.forms),
      host,
    );
  const modify = (operation: string, value: Json) => ({
    type: "modify",
    target: "content",
    operation,
    value,
  });

  it("builds the result event from the request event and the effective result", () => {
    const built = call(USER);
    assert.equal(schemas.request(built), null);
    const event = (built["params"] as JsonObject)["event"] as JsonObject;
    assert.deepEqual(event, {
      id: "h:result",
      source: "urn:ahp-ts:elicitation",
      time: "2026-05-19T14:05:00Z",
      session: { id: "h:session" },
      type: "user.elicitation.result",
      parentEventId: "h:request",
      elicitation: {
        server: "ts-travel-desk",
        mode: "form",
        action: "accept",
        result: bodyPart("h:result-body", USER),
      },
    });
    assert.deepEqual(
      (built["params"] as JsonObject)["capabilities"],
      RESULT_CAPS,
    );
  });

  it("publishes the user's result unchanged without an edit", () => {
    assert.deepEqual(settle([{ type: "message", text: "noted" }]), {
      result: "accepted",
      published: USER,
      edited: false,
    });
  });

  it("replaces and shallowly merges the content", () => {
    assert.deepEqual(settle([modify("replace", { day: "tuesday" })]), {
      result: "accepted",
      published: { action: "accept", content: { day: "tuesday" } },
      edited: true,
    });
    assert.deepEqual(settle([modify("merge", { seats: 3 })]), {
      result: "accepted",
      published: { action: "accept", content: { day: "monday", seats: 3 } },
      edited: true,
    });
  });

  it("rejects an edit the requested schema or the answer definition refuses", () => {
    assert.equal(settle([modify("merge", { seats: 9 })]).result, "rejected");
    assert.equal(settle([modify("replace", { seats: 2 })]).result, "rejected");
    assert.equal(
      settle([modify("merge", { day: { nested: true } })]).result,
      "rejected",
    );
  });

  it("rejects an edit of a declined result", () => {
    assert.equal(
      settle([modify("merge", { day: "monday" })], { action: "decline" })
        .result,
      "rejected",
    );
    assert.equal(settle([], { action: "decline" }).result, "accepted");
  });
});

// ---------------------------------------------------------------- end to end

const UPLOAD_TOKEN = "elicitation-upload-token-0123456789";
const STRANGER_TOKEN = "elicitation-stranger-token-012345";
const ENV = {
  AHP_INTEROP_UPLOAD_TOKEN: UPLOAD_TOKEN,
  AHP_INTEROP_UNAUTHORIZED_UPLOAD_TOKEN: STRANGER_TOKEN,
};

interface ExpectedWire {
  readonly steps: JsonObject[];
  readonly receipts: JsonObject[];
}
interface ExpectedAtomic {
  readonly actual: JsonObject;
  readonly receipts: JsonObject[];
}

/** The hand-written scenario file: its rows and, apart, what each must give. */
function scenarioSet(): {
  rows: JsonObject[];
  expected: Map<string, ExpectedWire | ExpectedAtomic>;
} {
  const rows: JsonObject[] = [];
  const expected = new Map<string, ExpectedWire | ExpectedAtomic>();
  const ok = (): JsonObject => ({
    op: "send",
    outcome: "accepted",
    status: 200,
  });
  const no = (status = 400): JsonObject => ({
    op: "send",
    outcome: "rejected",
    status,
  });
  const up = (status: number): JsonObject => ({ op: "upload", status });
  const wire = (
    id: string,
    steps: JsonObject[],
    outcomes: JsonObject[],
    receipts: JsonObject[],
  ) => {
    rows.push({ id, steps });
    expected.set(id, { steps: outcomes, receipts });
  };
  const receipt = (eventId: string, summary: JsonObject): JsonObject => ({
    eventId,
    summary,
  });
  const answer: JsonObject = {
    action: "accept",
    content: { day: "tuesday", seats: 2 },
  };

  // An attachment uploaded, then named by the request; the result answers it.
  {
    const id = "w-attachment";
    const request = intercept(
      requestEvent(`${id}:request`, `${id}:s`, {
        items: [attachmentItem(`${id}:plan`, "plan")],
      }),
    );
    wire(
      id,
      [
        upload("plan", "floor plan, level 2"),
        send(request),
        send(
          intercept(
            resultEvent(`${id}:result`, `${id}:request`, `${id}:s`, answer),
          ),
        ),
      ],
      [up(201), ok(), ok()],
      [
        receipt(`${id}:request`, requestSummary(formParams())),
        receipt(`${id}:result`, resultSummary(formParams(), answer)),
      ],
    );
  }
  // Uploads refused (a stranger's and no credential: 401, a wrong digest:
  // 400); the event naming the alias that never bound is 409.
  {
    const id = "w-upload-refused";
    wire(
      id,
      [
        upload("doc", "stranger's bytes", "unauthorized"),
        upload("doc", "anonymous bytes", "none"),
        upload(
          "doc",
          "misdeclared bytes",
          "upload",
          sha(Buffer.from("other bytes")),
        ),
        send(
          intercept(
            requestEvent(`${id}:request`, `${id}:s`, {
              items: [attachmentItem(`${id}:doc`, "doc")],
            }),
          ),
        ),
      ],
      [up(401), up(401), up(400), no(409)],
      [],
    );
  }
  // The same alias, different bytes: two refs; the event names the later.
  {
    const id = "w-immutable";
    wire(
      id,
      [
        upload("menu", "menu, first edition"),
        upload("menu", "menu, second edition"),
        send(
          intercept(
            requestEvent(`${id}:request`, `${id}:s`, {
              items: [attachmentItem(`${id}:menu`, "menu")],
            }),
          ),
        ),
      ],
      [up(201), up(201), ok()],
      [receipt(`${id}:request`, requestSummary(formParams()))],
    );
  }
  // Correlation mutations: each refused, the request stays live; then the
  // true answer; a second answer is a wrong parent.
  {
    const id = "w-correlation";
    const rid = `${id}:request`;
    const result = (
      eventId: string,
      options: Parameters<typeof resultEvent>[4] = {},
      body = answer,
    ) => send(intercept(resultEvent(eventId, rid, `${id}:s`, body, options)));
    wire(
      id,
      [
        send(intercept(requestEvent(rid, `${id}:s`))),
        result(`${id}:other-session`, { session: `${id}:elsewhere` }),
        result(`${id}:other-source`, { source: "urn:ahp-ts:intruder" }),
        result(`${id}:other-server`, { server: "another-desk" }),
        result(
          `${id}:off-form`,
          {},
          { action: "accept", content: { day: "friday" } },
        ),
        result(`${id}:result`),
        result(`${id}:again`),
      ],
      [ok(), no(), no(), no(), no(), ok(), no()],
      [
        receipt(rid, requestSummary(formParams())),
        receipt(`${id}:result`, resultSummary(formParams(), answer)),
      ],
    );
  }
  // Two requests live at once, answered in reverse order.
  {
    const id = "w-reverse";
    const [a, b] = [`${id}:a`, `${id}:b`];
    const declined = { action: "decline" };
    wire(
      id,
      [
        send(intercept(requestEvent(a, `${id}:s`))),
        send(
          intercept(
            requestEvent(b, `${id}:s`, {
              part: bodyPart("b-body", URL_PARAMS),
              mode: "url",
            }),
          ),
        ),
        send(
          intercept(
            resultEvent(`${b}:result`, b, `${id}:s`, declined, { mode: "url" }),
          ),
        ),
        send(intercept(resultEvent(`${a}:result`, a, `${id}:s`, answer))),
      ],
      [ok(), ok(), ok(), ok()],
      [
        receipt(a, requestSummary(formParams())),
        receipt(b, requestSummary(URL_PARAMS)),
        receipt(`${b}:result`, resultSummary(URL_PARAMS, declined)),
        receipt(`${a}:result`, resultSummary(formParams(), answer)),
      ],
    );
  }
  // Selections and gaps: a metadata request, a gap, a text that is not JSON.
  {
    const id = "w-selections";
    const rid = `${id}:request`;
    wire(
      id,
      [
        send(
          intercept(
            requestEvent(`${id}:gap`, `${id}:s`, { part: gapPart("g") }),
          ),
        ),
        send(
          intercept(
            requestEvent(`${id}:text`, `${id}:s`, {
              part: bodyPart("t", "{not json"),
            }),
          ),
        ),
        send(
          intercept(
            requestEvent(rid, `${id}:s`, {
              part: withheldPart("m", "metadata"),
            }),
          ),
        ),
        send(intercept(resultEvent(`${id}:result`, rid, `${id}:s`, answer))),
      ],
      [no(), no(), ok(), ok()],
      [
        receipt(rid, { selection: "metadata" }),
        receipt(`${id}:result`, withheldSummary("metadata", "body")),
      ],
    );
  }

  // Atomic rows.
  const atomic = (
    id: string,
    options: {
      returns?: Json[];
      edits?: Json[];
      user?: JsonObject;
    },
    actual: JsonObject,
    receipts: "request" | "both",
    sentResult?: JsonObject,
  ) => {
    const request = intercept(
      requestEvent(`${id}:request`, `${id}:session`),
      REQUEST_CAPS,
    );
    const user = options.user ?? USER;
    const responses: JsonObject = {};
    if (options.returns !== undefined)
      responses[`${id}:request`] = reply(`${id}:request`, options.returns);
    if (options.edits !== undefined)
      responses[`${id}:result`] = reply(`${id}:result`, options.edits);
    rows.push({
      id,
      atomic: { request, userResult: user, resultCapabilities: RESULT_CAPS },
      responses,
    });
    const list = [receipt(`${id}:request`, requestSummary(formParams()))];
    if (receipts === "both")
      list.push(
        receipt(
          `${id}:result`,
          resultSummary(formParams(), sentResult ?? user),
        ),
      );
    expected.set(id, { actual, receipts: list });
  };
  const done = (published: JsonObject, provenance: string): JsonObject => ({
    request: "allowed",
    result: "accepted",
    published,
    provenance,
  });
  const notSent = (request: string): JsonObject => ({
    request,
    result: "not-sent",
    published: null,
    provenance: null,
  });
  const given = { action: "accept", content: { day: "tuesday", seats: 4 } };
  atomic("a-user", {}, done(USER, "user"), "both");
  atomic(
    "a-deny",
    {
      returns: [
        { type: "message", text: "checking" },
        { type: "deny", reason: "not now" },
      ],
    },
    notSent("denied"),
    "request",
  );
  atomic(
    "a-return",
    { returns: [{ type: "return", value: given }] },
    done(given, "hook"),
    "both",
    given,
  );
  atomic(
    "a-return-off-form",
    {
      returns: [
        {
          type: "return",
          value: { action: "accept", content: { day: "friday" } },
        },
      ],
    },
    notSent("rejected"),
    "request",
  );
  const edit = (operation: string, value: JsonObject) => ({
    type: "modify",
    target: "content",
    operation,
    value,
  });
  atomic(
    "a-replace",
    { edits: [edit("replace", { day: "tuesday" })] },
    done({ action: "accept", content: { day: "tuesday" } }, "hook"),
    "both",
  );
  atomic(
    "a-merge",
    { edits: [edit("merge", { seats: 3 })] },
    done({ action: "accept", content: { day: "monday", seats: 3 } }, "hook"),
    "both",
  );
  atomic(
    "a-merge-off-form",
    {
      edits: [{ type: "message", text: "first" }, edit("merge", { seats: 9 })],
    },
    {
      request: "allowed",
      result: "rejected",
      published: null,
      provenance: null,
    },
    "both",
  );
  return { rows, expected };
}

interface Report {
  language: string;
  results: {
    id: string;
    status: string;
    actual?: JsonObject;
    error?: string;
  }[];
  receipts?: { entries: JsonObject[] };
}

/** Checks the report and the receipts of one run against the set. */
function checkRun(
  report: Report,
  rows: JsonObject[],
  expected: Map<string, ExpectedWire | ExpectedAtomic>,
  transport: "http" | "stdio",
): void {
  assertContract("elicitation-report.schema.json", report, "report");
  const entries = report.receipts?.entries ?? [];
  for (const entry of entries)
    assertContract(
      "elicitation-control.schema.json#/$defs/entry",
      entry,
      "receipt entry",
    );
  assert.equal(report.language, "typescript");
  assert.deepEqual(
    report.results.map((r) => r.id),
    rows.map((r) => r["id"]),
  );
  // The entries of each row: from its row-start mark to the next.
  const byRow = new Map<string, JsonObject[]>();
  let current: JsonObject[] | null = null;
  for (const entry of entries) {
    if (entry["kind"] === "row-start") {
      assert.equal(entry["id"], entry["scenario"]);
      current = [];
      byRow.set(entry["id"] as string, current);
    } else {
      assert.ok(
        current !== null,
        `an entry before any mark: ${JSON.stringify(entry)}`,
      );
      current.push(entry);
    }
  }
  const allRefs = new Map<string, string>();
  for (const row of rows) {
    const id = row["id"] as string;
    const result = report.results.find((r) => r.id === id);
    assert.ok(result !== undefined);
    assert.equal(result.status, "completed", `${id}: ${result.error ?? ""}`);
    const mine = byRow.get(id);
    assert.ok(mine !== undefined, `${id}: no row-start mark`);
    const want = expected.get(id);
    assert.ok(want !== undefined);
    assert.deepEqual(
      mine
        .filter((e) => e["kind"] === "elicitation")
        .map((e) => ({ eventId: e["eventId"], summary: e["summary"] })),
      want.receipts,
      `${id}: receipts`,
    );
    if ("actual" in want) {
      assert.deepEqual(result.actual, want.actual, `${id}: actual`);
      continue;
    }
    const steps = (result.actual?.["steps"] ?? []) as JsonObject[];
    const sent = row["steps"] as JsonObject[];
    assert.equal(steps.length, want.steps.length, id);
    const uploads = mine.filter((e) => e["kind"] === "upload");
    let uploadIndex = 0;
    want.steps.forEach((outcome, index) => {
      const got = steps[index] as JsonObject;
      const step = sent[index] as JsonObject;
      const where = `${id} step ${index}`;
      assert.equal(got["op"], outcome["op"], where);
      if (outcome["op"] === "upload") {
        assert.equal(got["status"], outcome["status"], where);
        const entry = uploads[uploadIndex++] as JsonObject;
        const bytes = Buffer.from(step["bodyBase64"] as string, "base64");
        assert.equal(entry["status"], outcome["status"], where);
        assert.equal(entry["size"], bytes.length, where);
        assert.equal(entry["sha256"], step["sha256"] ?? sha(bytes), where);
        if (outcome["status"] === 201) {
          assert.equal(got["ref"], entry["ref"], where);
          const digest = sha(bytes);
          for (const [ref, other] of allRefs)
            if (other !== digest) assert.notEqual(ref, got["ref"], where);
          allRefs.set(got["ref"] as string, digest);
        } else assert.equal(got["ref"], null, where);
        return;
      }
      assert.equal(got["outcome"], outcome["outcome"], where);
      const message = step["message"] as JsonObject;
      if (transport === "http")
        assert.equal(got["status"], outcome["status"], where);
      else assert.equal(got["status"], null, where);
      if (outcome["outcome"] === "accepted") {
        assert.deepEqual(
          got["response"],
          noEffect(message["id"] ?? null),
          where,
        );
        assert.equal(got["error"], null, where);
      } else {
        assert.equal(got["error"], -32602, where);
        assert.equal(got["response"], null, where);
      }
    });
    assert.equal(uploadIndex, uploads.length, `${id}: upload entries`);
  }
}

/**
 * `GET /capabilities` of a running server: 200 with exactly the bare
 * capabilities of the tool.before intercept entry of the manifest it answers
 * `hooks/capabilities` with, and no new receipt.
 */
async function assertBareCapabilities(readiness: {
  endpoint: string;
  controlEndpoint: string;
}): Promise<void> {
  const entries = async (): Promise<unknown[]> =>
    (
      (await control(readiness.controlEndpoint, "GET", "/receipts")).body as {
        entries: unknown[];
      }
    ).entries;
  const before = (await entries()).length;
  const got = await control(readiness.endpoint, "GET", "/capabilities");
  // this server answers hooks/capabilities with the core discovery manifest
  const discovery = await control(readiness.endpoint, "POST", "", {
    jsonrpc: "2.0",
    id: "d-1",
    method: "hooks/capabilities",
    params: { protocolVersion: "draft" },
  });
  const manifest = ((discovery.body as JsonObject)["result"] as JsonObject)[
    "manifest"
  ] as JsonObject;
  const toolBefore = (manifest["events"] as JsonObject[]).filter(
    (entry) =>
      entry["event"] === "tool.before" &&
      (entry["modes"] as string[]).includes("intercept"),
  );
  assert.equal(toolBefore.length, 1);
  assert.deepEqual(
    [got.status, got.body],
    [200, toolBefore[0]?.["capabilities"]],
  );
  assert.equal((await entries()).length, before);
}

describe("elicitation end to end", () => {
  const directory = tempDir("ahp-ts-elicitation-");
  const { rows, expected } = scenarioSet();
  const scenarioFile = writeJson(join(directory, "scenarios.json"), {
    version: 1,
    suite: "elicitation",
    authenticatedSource: AUTH_SOURCE,
    scenarios: rows,
  });
  let trust: TrustFiles | null = null;
  const servers: RunningServer[] = [];

  before(() => {
    trust = makeTrust();
  });
  after(async () => {
    for (const server of servers) await server.stop();
    if (trust !== null)
      rmSync(trust.directory, { recursive: true, force: true });
    rmSync(directory, { recursive: true, force: true });
  });

  const serverConfig = (name: string, extra: JsonObject): JsonObject => {
    const config = {
      suite: "elicitation",
      transport: "http",
      readinessFile: join(directory, `${name}-ready.json`),
      scenarioFile,
      auth: { mode: "none", profile: "strict" },
      uploadAuth: { token: UPLOAD_TOKEN },
      schemaDir: SCHEMA_DIR,
      ...extra,
    };
    assertContract(
      "elicitation-server-config.schema.json",
      config,
      "server config",
    );
    return config;
  };

  const upload = (endpoint?: string): JsonObject => ({
    auth: { type: "bearer", tokenEnv: "AHP_INTEROP_UPLOAD_TOKEN" },
    timeoutMs: 5000,
    maxBytes: 1048576,
    ...(endpoint === undefined ? {} : { endpoint }),
  });

  async function runClient(name: string, config: JsonObject): Promise<Report> {
    assertContract(
      "elicitation-client-config.schema.json",
      config,
      "client config",
    );
    const path = writeJson(join(directory, `${name}-client.json`), config);
    const run = await runCli("lifecycle-client", path, ENV, 90_000);
    assert.equal(run.code, 0, run.stderr);
    return JSON.parse(
      readFileSync(config["reportFile"] as string, "utf8"),
    ) as Report;
  }

  async function overHttp(
    name: string,
    serverAuth: JsonObject,
    clientAuth: JsonObject,
    tls: { server: JsonObject; client: JsonObject } | null,
  ) {
    const config = serverConfig(name, {
      auth: serverAuth,
      ...(tls === null ? {} : { tls: tls.server }),
    });
    const server = await startServer(
      writeJson(join(directory, `${name}-server.json`), config),
      config["readinessFile"] as string,
      "lifecycle-server",
    );
    servers.push(server);
    const readiness = server.readiness as unknown as Record<string, string>;
    assertContract("readiness.schema.json", readiness, "readiness");
    const report = await runClient(name, {
      suite: "elicitation",
      transport: "http",
      scenarioFile,
      reportFile: join(directory, `${name}-report.json`),
      childPidFile: join(directory, `${name}-child.json`),
      auth: clientAuth,
      ...(tls === null ? {} : { tls: tls.client }),
      timeoutMs: 10000,
      upload: upload(readiness["uploadEndpoint"]),
      endpoint: readiness["endpoint"] ?? "",
      controlEndpoint: readiness["controlEndpoint"] ?? "",
      schemaDir: SCHEMA_DIR,
    });
    return { server, report, readiness };
  }

  it("runs every row over HTTP without auth; /mark takes row-start only", async () => {
    const { report, readiness } = await overHttp(
      "none",
      { mode: "none", profile: "strict" },
      { mode: "none", profile: "strict" },
      null,
    );
    checkRun(report, rows, expected, "http");
    const base = readiness["controlEndpoint"] ?? "";
    const mark = await control(base, "POST", "/mark", {
      scenario: "x",
      kind: "acquired",
      id: "x",
    });
    assert.equal(mark.status, 400);
    const health = await control(base, "GET", "/health");
    assert.deepEqual(health.body, { ready: true });
    await assertBareCapabilities({
      endpoint: readiness["endpoint"] ?? "",
      controlEndpoint: base,
    });
  });

  it("runs every row over HTTPS with a bearer token", async () => {
    const files = trust as TrustFiles;
    const { report } = await overHttp(
      "bearer",
      { mode: "bearer", profile: "strict", token: "elicitation-bearer-1" },
      { mode: "bearer", profile: "strict", token: "elicitation-bearer-1" },
      {
        server: {
          certFile: files.serverCertFile,
          keyFile: files.serverKeyFile,
        },
        client: { caFile: files.caFile },
      },
    );
    checkRun(report, rows, expected, "http");
  });

  it("runs every row over stdio and reaps its server", async () => {
    const stdioServer = writeJson(
      join(directory, "stdio-server.json"),
      serverConfig("stdio", { transport: "stdio" }),
    );
    const childPidFile = join(directory, "stdio-child.json");
    const report = await runClient("stdio", {
      suite: "elicitation",
      transport: "stdio",
      scenarioFile,
      reportFile: join(directory, "stdio-report.json"),
      childPidFile,
      auth: { mode: "none", profile: "strict" },
      timeoutMs: 10000,
      upload: upload(),
      serverCommand: [process.execPath, CLI, "lifecycle-server"],
      serverCwd: ADAPTER_DIR,
      serverConfig: stdioServer,
      schemaDir: SCHEMA_DIR,
    });
    checkRun(report, rows, expected, "stdio");
    assert.ok(existsSync(childPidFile));
    const { pid } = JSON.parse(readFileSync(childPidFile, "utf8")) as {
      pid: number;
    };
    assert.ok(processGone(pid), "the stdio server outlived the client");
  });

  it("never reads expected or responses: a blind copy gives the same report", async () => {
    const blind = writeJson(join(directory, "blind.json"), {
      version: 1,
      suite: "elicitation",
      scenarios: rows.map((row) => without(row, "responses")),
    });
    const config = serverConfig("blind", {});
    const server = await startServer(
      writeJson(join(directory, "blind-server.json"), config),
      config["readinessFile"] as string,
      "lifecycle-server",
    );
    servers.push(server);
    const readiness = server.readiness as unknown as Record<string, string>;
    const report = await runClient("blind", {
      suite: "elicitation",
      transport: "http",
      scenarioFile: blind,
      reportFile: join(directory, "blind-report.json"),
      childPidFile: join(directory, "blind-child.json"),
      auth: { mode: "none", profile: "strict" },
      timeoutMs: 10000,
      upload: upload(readiness["uploadEndpoint"]),
      endpoint: readiness["endpoint"] ?? "",
      controlEndpoint: readiness["controlEndpoint"] ?? "",
      schemaDir: SCHEMA_DIR,
    });
    checkRun(report, rows, expected, "http");
  });
});
