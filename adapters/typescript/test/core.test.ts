// Strict JSON, schema dialect details, codec and framing helpers.

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { decodeUtf8, CodecError } from "../codec.js";
import { interceptUrl } from "../httpTransport.js";
import { isPositiveInteger, jsonEqual } from "../json.js";
import { discoveryResponse } from "../manifest.js";
import { loadSchemas } from "../schemas.js";
import { LineSplitter } from "../stdioTransport.js";
import * as b from "./builders.js";

const schemas = loadSchemas();

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
});

describe("codec and framing", () => {
  test("malformed UTF-8 is an error, never replaced", () => {
    assert.throws(
      () => decodeUtf8(Buffer.from([0x7b, 0xff, 0x7d])),
      CodecError,
    );
    assert.equal(decodeUtf8(Buffer.from('{"é":1}', "utf8")), '{"é":1}');
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
