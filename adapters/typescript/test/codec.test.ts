// Strict JSON (parser and equality), schema dialect details, codec and
// framing helpers.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, test } from "node:test";
import { decodeJson, decodeUtf8, CodecError } from "../sdk/codec.js";
import { interceptUrl } from "../sdk/httpTransport.js";
import {
  countedProblem,
  isPositiveInteger,
  jsonEqual,
  JsonSyntaxError,
  MAX_DEPTH,
  parseStrictJson,
  scannedProblem,
  type Json,
  type JsonObject,
} from "../sdk/json.js";
import {
  catalogueManifest,
  discoveryManifest,
  discoveryResponse,
  getCapabilities,
} from "../sdk/manifest.js";
import { loadSchemas } from "../sdk/schemas.js";
import { LINE_TOO_LONG, LineSplitter } from "../sdk/stdioTransport.js";
import * as b from "./builders.js";
import { CORE_FILE, SCHEMA_DIR, UPSTREAM_FILE } from "./processes.js";

const schemas = loadSchemas(SCHEMA_DIR);

const nested = (depth: number) => "[".repeat(depth) + "]".repeat(depth);

describe("strict JSON parsing", () => {
  const malformed = (text: string) =>
    assert.throws(() => parseStrictJson(text), JsonSyntaxError, text);
  const raw = String.raw;

  test("a duplicate key is malformed, at any depth, however it is spelt", () => {
    malformed('{"a":1,"a":2}');
    malformed('{"a":1,"b":{"c":1,"c":1}}');
    malformed('[{"x":[{"a":1,"a":1}]}]');
    malformed(raw`{"a":1,"\u0061":2}`);
    malformed(raw`{"é":1,"\u00e9":2}`);
    malformed('{"__proto__":1,"__proto__":2}');
    const many = [...Array(40).keys()].map((i) => `"k${i}":${i}`).join(",");
    malformed(`{${many},"k39":0}`);
    assert.doesNotThrow(() => parseStrictJson(`{${many}}`));
  });

  test("equal keys in different objects, and keys inside strings, are fine", () => {
    assert.deepEqual(parseStrictJson('{"a":{"a":1},"b":[{"a":2},{"a":3}]}'), {
      a: { a: 1 },
      b: [{ a: 2 }, { a: 3 }],
    });
    assert.deepEqual(
      parseStrictJson(raw`{"a":"{\"a\":1}","b":"\\","c":"\\\""}`),
      {
        a: '{"a":1}',
        b: "\\",
        c: '\\"',
      },
    );
    assert.deepEqual(parseStrictJson(raw`{"a\"":1,"a":2,"a\\":3}`), {
      'a"': 1,
      a: 2,
      "a\\": 3,
    });
  });

  test(`nesting up to ${MAX_DEPTH} levels is fine, deeper is malformed`, () => {
    assert.doesNotThrow(() => parseStrictJson(nested(MAX_DEPTH)));
    const objects = (depth: number) =>
      `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`;
    assert.doesNotThrow(() => parseStrictJson(objects(MAX_DEPTH)));
    malformed(nested(MAX_DEPTH + 1));
    malformed(objects(MAX_DEPTH + 1));
    malformed(nested(10_000));
    malformed(nested(1_000_000));
    // Both checks count levels alike.
    for (const depth of [MAX_DEPTH, MAX_DEPTH + 1]) {
      const text = objects(depth);
      assert.equal(
        countedProblem(text, JSON.parse(text) as Json) === null,
        scannedProblem(text) === null,
      );
    }
  });

  test("whatever JSON.parse refuses is malformed", () => {
    for (const text of [
      "",
      " ",
      "NaN",
      "Infinity",
      "-Infinity",
      '{"a":NaN}',
      "[1,]",
      '{"a":1,}',
      "{'a':1}",
      "01",
      "1.",
      ".5",
      "+1",
      raw`"\x41"`,
      '"tab\there"',
      "[1] [2]",
      "/* c */ 1",
      "undefined",
      '{"a" 1}',
      raw`"\ud800`,
    ])
      malformed(text);
  });

  test("escaped lone surrogates are kept, as JSON.parse keeps them", () => {
    assert.equal(parseStrictJson(raw`"\ud800"`), "\ud800");
    assert.deepEqual(parseStrictJson(raw`{"\udc00":1,"\ud800":2}`), {
      "\udc00": 1,
      "\ud800": 2,
    });
  });

  test("a colon spelt as an escape cannot hide a duplicate", () => {
    // Counting alone would balance here: 3 colons in the text, 1 in the
    // value's strings, 2 keys in the value.
    malformed(raw`{"k":1,"k":2,"s":"\u003a"}`);
    malformed(raw`{"a:":1,"a\u003A":2}`);
    assert.deepEqual(parseStrictJson(raw`{"a:":1,"b\u003a":"\u003a:"}`), {
      "a:": 1,
      "b:": "::",
    });
  });

  test("the counted check agrees with the scan on 3,000 generated texts", () => {
    let seed = 7;
    const random = () => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed / 2147483648;
    };
    const pick = <T>(items: readonly T[]): T =>
      items[Math.floor(random() * items.length)] as T;
    const strings = ["a", "b", "a:b", ":", "::", "", "é", raw`q\"`, raw`\\`];
    const keyText = () => JSON.stringify(pick(strings));
    const valueText = (depth: number): string => {
      const roll = random();
      if (depth > 3 || roll < 0.3)
        return pick(["1", "null", "true", keyText(), '"x:y"']);
      if (roll < 0.6)
        return `[${Array.from({ length: Math.floor(random() * 3) }, () => valueText(depth + 1)).join(",")}]`;
      const members = Array.from(
        { length: Math.floor(random() * 4) },
        () => `${keyText()}:${valueText(depth + 1)}`,
      );
      return `{${members.join(" , ")}}`;
    };
    let duplicates = 0;
    for (let round = 0; round < 3000; round += 1) {
      const text = valueText(0);
      const scanned = scannedProblem(text);
      const counted = countedProblem(text, JSON.parse(text) as Json);
      assert.equal(counted === null, scanned === null, text);
      if (scanned !== null) duplicates += 1;
    }
    assert.ok(duplicates > 100, `only ${duplicates} texts had a duplicate`);
  });

  test("every scenario file parses to exactly what JSON.parse gives", () => {
    for (const file of [CORE_FILE, UPSTREAM_FILE]) {
      const text = readFileSync(file, "utf8");
      assert.deepEqual(parseStrictJson(text), JSON.parse(text));
    }
  });

  test("wire messages: strict UTF-8, then strict JSON", () => {
    assert.deepEqual(decodeJson(Buffer.from('{"a":"é"}')), { a: "é" });
    assert.throws(() => decodeJson(Buffer.from('{"a":1,"a":1}')), CodecError);
    assert.throws(
      () => decodeJson(Buffer.from([0x22, 0xc3, 0x22])),
      CodecError,
    );
    assert.throws(() => decodeJson(Buffer.from(nested(600))), CodecError);
  });
});

describe("strict JSON", () => {
  test("booleans are never numbers; numbers compare by value", () => {
    assert.equal(jsonEqual(true, 1), false);
    assert.equal(jsonEqual(false, 0), false);
    assert.equal(jsonEqual(null, false), false);
    assert.equal(jsonEqual(1, JSON.parse("1.0")), true);
  });
  test("object key order is ignored, array order is not", () => {
    assert.equal(jsonEqual({ a: 1, b: [1, 2] }, { b: [1, 2], a: 1 }), true);
    assert.equal(jsonEqual([1, 2], [2, 1]), false);
    assert.equal(jsonEqual({ a: 1 }, { a: 1, b: undefined }), false);
  });
  test("positive integers exclude booleans, fractions, zero and negatives", () => {
    for (const bad of [true, 1.5, 0, -1, "1", null])
      assert.equal(isPositiveInteger(bad), false, JSON.stringify(bad));
    assert.equal(isPositiveInteger(JSON.parse("2.0")), true);
  });
});

describe("schema dialect", () => {
  const sha = "a".repeat(64);
  const withHash = (hash: string) => [
    b.message("m", "user", {
      id: "p",
      kind: "text",
      mediaType: "text/plain",
      selection: "metadata",
      sha256: hash,
    }),
  ];
  test("pattern `$` does not match before a trailing newline", () => {
    assert.equal(schemas.content.messageList(withHash(sha)), true);
    assert.equal(schemas.content.messageList(withHash(`${sha}\n`)), false);
  });
  const valid = b.request("r-1", b.toolBefore({}), b.capabilities(["deny"]));
  const withEvent = (change: Record<string, unknown>) => {
    const request = structuredClone(valid) as {
      params: { event: Record<string, unknown> };
    };
    Object.assign(request.params.event, change);
    return request;
  };
  test("date-time is checked for real", () => {
    assert.equal(schemas.request(valid), null);
    assert.notEqual(
      schemas.request(withEvent({ time: "20260101T000000Z" })),
      null,
    );
    assert.notEqual(
      schemas.request(withEvent({ time: "2026-13-01T00:00:00Z" })),
      null,
    );
    assert.notEqual(
      schemas.request(withEvent({ time: "2026-01-01T00:00:00" })),
      null,
    );
  });
  test("uri is checked for real", () => {
    assert.notEqual(schemas.request(withEvent({ source: "not a uri" })), null);
    assert.equal(
      schemas.request(
        withEvent({ source: "urn:uuid:6e8bc430-9c3a-11d9-9669-0800200c9a66" }),
      ),
      null,
    );
  });
  test("the request id must equal the event id", () => {
    assert.notEqual(schemas.request({ ...valid, id: "other" }), null);
  });
  test("the discovery manifest is valid", () => {
    assert.equal(
      schemas.capabilitiesResponse(discoveryResponse("discovery")),
      null,
    );
  });
  test("GET /capabilities: the bare tool.before capabilities of each manifest, canonical", () => {
    for (const manifest of [discoveryManifest(), catalogueManifest()]) {
      const entries = (manifest["events"] as JsonObject[]).filter(
        (entry) =>
          entry["event"] === "tool.before" &&
          (entry["modes"] as string[]).includes("intercept"),
      );
      assert.equal(entries.length, 1);
      const got = getCapabilities(manifest);
      assert.deepEqual(got, entries[0]?.["capabilities"]);
      assert.equal("jsonrpc" in got, false);
      // capabilities.schema.json (and its tool.before definition), through
      // the intercept request that carries it
      assert.equal(
        schemas.request(b.request("caps-1", b.toolBefore({}), got)),
        null,
      );
      (got["effects"] as string[]).length = 0; // a copy: the manifest is untouched
      assert.notDeepEqual(entries[0]?.["capabilities"], got);
    }
  });
  test("GET /capabilities without a tool.before intercept entry: the first intercept entry's", () => {
    const manifest = {
      events: [
        { event: "tool.before", modes: ["observe"] },
        {
          event: "turn.start",
          modes: ["intercept"],
          capabilities: { effects: ["deny"] },
        },
        {
          event: "tool.after",
          modes: ["intercept"],
          capabilities: { effects: [] },
        },
      ],
    };
    assert.deepEqual(getCapabilities(manifest), { effects: ["deny"] });
    assert.throws(() =>
      getCapabilities({
        events: [{ event: "tool.before", modes: ["observe"] }],
      }),
    );
  });
});

describe("codec and framing", () => {
  test("malformed UTF-8 is an error, never replaced", () => {
    assert.throws(
      () => decodeUtf8(Buffer.from([0x7b, 0xff, 0x7d])),
      CodecError,
    );
    assert.equal(decodeUtf8(Buffer.from('{"é":1}', "utf8")), '{"é":1}');
  });
  test("a line over the limit is not kept: it comes out as LINE_TOO_LONG", () => {
    const splitter = new LineSplitter(4);
    assert.deepEqual(splitter.push(Buffer.from("abcd\nabc")), [
      Buffer.from("abcd"),
    ]);
    assert.deepEqual(splitter.push(Buffer.from("de\nx\n")), [
      LINE_TOO_LONG,
      Buffer.from("x"),
    ]);
  });
  test("lines split across chunks keep multi-byte characters intact", () => {
    const splitter = new LineSplitter();
    const bytes = Buffer.from('{"a":"é"}\n{"b":2}\n', "utf8");
    const first = splitter.push(bytes.subarray(0, 8));
    const rest = splitter.push(bytes.subarray(8));
    assert.deepEqual(
      [...first, ...rest].map((line) => line.toString("utf8")),
      ['{"a":"é"}', '{"b":2}'],
    );
  });
  test("the intercept URL is the endpoint, or endpoint + /intercept", () => {
    assert.equal(
      interceptUrl("http://127.0.0.1:1/intercept").href,
      "http://127.0.0.1:1/intercept",
    );
    assert.equal(
      interceptUrl("http://127.0.0.1:1").href,
      "http://127.0.0.1:1/intercept",
    );
    assert.equal(
      interceptUrl("http://127.0.0.1:1/ahp/").href,
      "http://127.0.0.1:1/ahp/intercept",
    );
  });
});
