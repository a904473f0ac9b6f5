// Server-side token checks and client-side token acquisition, in process.

import assert from "node:assert/strict";
import { generateKeyPairSync } from "node:crypto";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import type { JWTPayload } from "jose";
import {
  bearerToken,
  clientCredential,
  createAuthenticator,
  type FormPoster,
} from "../sdk/auth.js";
import type { AuthSettings } from "../sdk/settings.js";
import { tempDir } from "./processes.js";
import {
  AUDIENCE,
  claims,
  CLOCK,
  es256Token as signEs256,
  HS_SECRET,
  hs256Token,
  jwtAuth,
} from "./tokens.js";

const directory = tempDir("ahp-ts-auth-");
after(() => rmSync(directory, { recursive: true, force: true }));

const es256 = generateKeyPairSync("ec", { namedCurve: "P-256" });
const otherEs256 = generateKeyPairSync("ec", { namedCurve: "P-256" });
const publicKeyFile = join(directory, "token-public.pem");
writeFileSync(
  publicKeyFile,
  es256.publicKey.export({ type: "spki", format: "pem" }),
);
const es256Token = (payload: JWTPayload, key = es256.privateKey) =>
  signEs256(payload, key);

const headers = (...values: string[]) =>
  values.flatMap((value) => ["Authorization", value]);

/** Whether the authenticator for `auth` accepts a token sent as the one Bearer header. */
async function accepting(
  auth: AuthSettings,
): Promise<(token: string) => Promise<boolean>> {
  const check = await createAuthenticator(auth);
  return async (token) => check(headers(`Bearer ${token}`));
}

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
  const accepts = await accepting(
    jwtAuth("oauth", "strict", { publicKeyFile }),
  );
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
  const accepts = await accepting(
    jwtAuth("workload", "compat", { signingKey: HS_SECRET }),
  );
  const workload = claims({ purpose: "workload" });
  test("accepts HS256 with the right key and purpose; refuses the rest", async () => {
    assert.equal(await accepts(await hs256Token(workload)), true);
    const refused = [
      () => hs256Token(claims({ purpose: "oauth" })),
      () => hs256Token(workload, "other-secret"),
      () => es256Token(workload),
    ];
    for (const make of refused)
      assert.equal(await accepts(await make()), false);
  });
});

describe("client credentials", () => {
  const oauth: AuthSettings = {
    mode: "oauth",
    profile: "compat",
    tokenEndpoint: "http://127.0.0.1:9/token",
    clientId: "c",
    clientSecret: "s",
    audience: AUDIENCE,
  };
  test("posts the client-credentials form once and uses the access token", async () => {
    const forms: string[] = [];
    const post: FormPoster = (_url, form) => {
      forms.push(form);
      return Promise.resolve({
        status: 200,
        body: JSON.stringify({
          access_token: "tok",
          token_type: "Bearer",
          expires_in: 60,
        }),
      });
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
      clientCredential(oauth, () => Promise.resolve({ status: 302, body: "" })),
    );
    await assert.rejects(
      clientCredential(oauth, () =>
        Promise.resolve({
          status: 200,
          body: JSON.stringify({ access_token: "t", token_type: "mac" }),
        }),
      ),
    );
  });
  test("strict refuses a plain-HTTP token endpoint", async () => {
    await assert.rejects(
      clientCredential({ ...oauth, profile: "strict" }, () =>
        Promise.resolve({ status: 200, body: "{}" }),
      ),
    );
  });
  test("static credentials", async () => {
    const statics: [AuthSettings, string | null][] = [
      [{ mode: "bearer", profile: "strict", token: "t" }, "t"],
      [{ mode: "workload", profile: "strict", assertion: "a" }, "a"],
      [{ mode: "mtls", profile: "strict" }, null],
    ];
    for (const [auth, credential] of statics) {
      assert.equal(
        await clientCredential(auth, () => assert.fail()),
        credential,
      );
    }
  });
});
