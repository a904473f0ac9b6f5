// Server-side token checks and client-side token acquisition, in process.

import assert from "node:assert/strict";
import { generateKeyPairSync, type KeyObject } from "node:crypto";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { SignJWT, type JWTPayload } from "jose";
import {
  bearerToken,
  clientCredential,
  createAuthenticator,
  type FormPoster,
} from "../auth.js";
import type { AuthConfig } from "../config.js";
import { tempDir } from "./processes.js";

const CLOCK = 1_893_456_000;
const ISSUER = "urn:test:issuer";
const AUDIENCE = "urn:test:backend";
const directory = tempDir("ahp-ts-auth-");
after(() => rmSync(directory, { recursive: true, force: true }));

const es256 = generateKeyPairSync("ec", { namedCurve: "P-256" });
const otherEs256 = generateKeyPairSync("ec", { namedCurve: "P-256" });
const publicKeyFile = join(directory, "token-public.pem");
writeFileSync(
  publicKeyFile,
  es256.publicKey.export({ type: "spki", format: "pem" }),
);
const hsSecret = "compat-secret-for-tests-only-0123456789";

/** Standard claims with `change` applied; a key set to null is left out. */
function claims(change: Record<string, unknown> = {}): JWTPayload {
  const all: Record<string, unknown> = {
    iss: ISSUER,
    sub: "client-1",
    aud: AUDIENCE,
    purpose: "oauth",
    iat: CLOCK,
    exp: CLOCK + 3600,
    ...change,
  };
  return Object.fromEntries(
    Object.entries(all).filter(([, value]) => value !== null),
  );
}

function es256Token(
  payload: JWTPayload,
  key: KeyObject = es256.privateKey,
): Promise<string> {
  return new SignJWT(payload)
    .setProtectedHeader({ alg: "ES256", typ: "JWT" })
    .sign(key);
}

function hs256Token(payload: JWTPayload, secret = hsSecret): Promise<string> {
  return new SignJWT(payload)
    .setProtectedHeader({ alg: "HS256", typ: "JWT" })
    .sign(new TextEncoder().encode(secret));
}

const headers = (...values: string[]) =>
  values.flatMap((value) => ["Authorization", value]);

describe("Authorization header parsing", () => {
  test("exactly one Bearer header is required", () => {
    assert.equal(bearerToken(headers("Bearer abc")), "abc");
    assert.equal(bearerToken(["authorization", "Bearer abc"]), "abc");
    assert.equal(bearerToken(headers("Bearer abc", "Bearer abc")), null);
    assert.equal(bearerToken([]), null);
    assert.equal(bearerToken(headers("Basic abc")), null);
    assert.equal(bearerToken(headers("Bearer ")), null);
    assert.equal(bearerToken(headers("Bearer a b")), null);
  });
});

describe("bearer mode", async () => {
  const check = await createAuthenticator({
    mode: "bearer",
    profile: "strict",
    token: "s3cret-token",
  });
  test("accepts the configured token only", async () => {
    assert.equal(await check(headers("Bearer s3cret-token")), true);
    assert.equal(await check(headers("Bearer s3cret-tokeN")), false);
    assert.equal(
      await check(headers("Bearer s3cret-token", "Bearer s3cret-token")),
      false,
    );
  });
});

describe("strict oauth: ES256 with the PEM public key", async () => {
  const auth: AuthConfig = {
    mode: "oauth",
    profile: "strict",
    publicKeyFile,
    issuer: ISSUER,
    audience: AUDIENCE,
    purpose: "oauth",
    clock: CLOCK,
  };
  const check = await createAuthenticator(auth);
  const accepts = async (token: string) => check(headers(`Bearer ${token}`));
  test("accepts a valid token at the configured clock", async () => {
    assert.equal(await accepts(await es256Token(claims())), true);
  });
  const refusals: [string, () => Promise<string>][] = [
    ["another signer", () => es256Token(claims(), otherEs256.privateKey)],
    ["HS256 under strict", () => hs256Token(claims())],
    ["a wrong issuer", () => es256Token(claims({ iss: "urn:other" }))],
    ["a wrong audience", () => es256Token(claims({ aud: "urn:other" }))],
    ["a wrong purpose", () => es256Token(claims({ purpose: "workload" }))],
    ["no purpose", () => es256Token(claims({ purpose: null }))],
    ["an empty subject", () => es256Token(claims({ sub: "" }))],
    ["no subject", () => es256Token(claims({ sub: null }))],
    ["exp equal to the clock", () => es256Token(claims({ exp: CLOCK }))],
    ["iat after the clock", () => es256Token(claims({ iat: CLOCK + 1 }))],
    ["no exp", () => es256Token(claims({ exp: null }))],
  ];
  for (const [name, make] of refusals) {
    test(`refuses ${name}`, async () =>
      assert.equal(await accepts(await make()), false));
  }
  test("refuses alg none", async () => {
    const encode = (value: object) =>
      Buffer.from(JSON.stringify(value)).toString("base64url");
    assert.equal(
      await accepts(
        `${encode({ alg: "none", typ: "JWT" })}.${encode(claims())}.`,
      ),
      false,
    );
  });
});

describe("compat workload: HS256 with the signing key", async () => {
  const auth: AuthConfig = {
    mode: "workload",
    profile: "compat",
    signingKey: hsSecret,
    issuer: ISSUER,
    audience: AUDIENCE,
    purpose: "workload",
    clock: CLOCK,
  };
  const check = await createAuthenticator(auth);
  test("accepts HS256 with the right key and purpose; refuses the rest", async () => {
    assert.equal(
      await check(
        headers(`Bearer ${await hs256Token(claims({ purpose: "workload" }))}`),
      ),
      true,
    );
    assert.equal(
      await check(
        headers(`Bearer ${await hs256Token(claims({ purpose: "oauth" }))}`),
      ),
      false,
    );
    assert.equal(
      await check(
        headers(
          `Bearer ${await hs256Token(claims({ purpose: "workload" }), "other-secret")}`,
        ),
      ),
      false,
    );
    assert.equal(
      await check(
        headers(`Bearer ${await es256Token(claims({ purpose: "workload" }))}`),
      ),
      false,
    );
  });
});

describe("client credentials", () => {
  const oauth: AuthConfig = {
    mode: "oauth",
    profile: "compat",
    tokenEndpoint: "http://127.0.0.1:9/token",
    clientId: "c",
    clientSecret: "s",
    audience: AUDIENCE,
  };
  test("posts the client-credentials form once and uses the access token", async () => {
    const forms: string[] = [];
    const post: FormPoster = async (_url, form) => {
      forms.push(form);
      return {
        status: 200,
        body: JSON.stringify({
          access_token: "tok",
          token_type: "Bearer",
          expires_in: 60,
        }),
      };
    };
    assert.equal(await clientCredential(oauth, post), "tok");
    assert.deepEqual(Object.fromEntries(new URLSearchParams(forms[0] ?? "")), {
      grant_type: "client_credentials",
      client_id: "c",
      client_secret: "s",
      audience: AUDIENCE,
    });
    assert.equal(forms.length, 1);
  });
  test("a redirect or a non-Bearer answer is a failure", async () => {
    await assert.rejects(
      clientCredential(oauth, async () => ({ status: 302, body: "" })),
    );
    await assert.rejects(
      clientCredential(oauth, async () => ({
        status: 200,
        body: JSON.stringify({ access_token: "t", token_type: "mac" }),
      })),
    );
  });
  test("strict refuses a plain-HTTP token endpoint", async () => {
    await assert.rejects(
      clientCredential({ ...oauth, profile: "strict" }, async () => ({
        status: 200,
        body: "{}",
      })),
    );
  });
  test("static credentials", async () => {
    assert.equal(
      await clientCredential(
        { mode: "bearer", profile: "strict", token: "t" },
        async () => assert.fail(),
      ),
      "t",
    );
    assert.equal(
      await clientCredential(
        { mode: "workload", profile: "strict", assertion: "a" },
        async () => assert.fail(),
      ),
      "a",
    );
    assert.equal(
      await clientCredential({ mode: "mtls", profile: "strict" }, async () =>
        assert.fail(),
      ),
      null,
    );
  });
});
