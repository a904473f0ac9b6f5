// Authentication: the server's check of every AHP request, and the client's
// credential (static token, workload assertion, or an OAuth client-credentials
// token acquired once per run). Never logs a token, secret or key.

import { createHash, timingSafeEqual } from "node:crypto";
import { readFileSync } from "node:fs";
import { parseStrictJson, isObject } from "./json.js";
import { SettingError, type AuthSettings } from "./settings.js";

/** Checks one request's raw header list; true when it may proceed. */
export type Authenticator = (rawHeaders: readonly string[]) => Promise<boolean>;

/** The values of every header named `name` (case-insensitive) in a raw header list. */
export function headerValues(
  rawHeaders: readonly string[],
  name: string,
): string[] {
  const wanted = name.toLowerCase();
  const values: string[] = [];
  for (let index = 0; index + 1 < rawHeaders.length; index += 2) {
    if (rawHeaders[index]?.toLowerCase() === wanted)
      values.push(rawHeaders[index + 1] ?? "");
  }
  return values;
}

/** The token of exactly one well-formed `Authorization: Bearer <token>` header (scheme in any case), else null. */
export function bearerToken(rawHeaders: readonly string[]): string | null {
  const values = headerValues(rawHeaders, "authorization");
  if (values.length !== 1) return null;
  // the scheme is case-insensitive (RFC 7235 section 2.1); one or more spaces (RFC 6750)
  const match = /^bearer +([\x21-\x7e]+)$/i.exec(values[0] ?? "");
  return match?.[1] ?? null;
}

function sameSecret(a: string, b: string): boolean {
  // Compare digests so that lengths do not leak and timingSafeEqual gets equal sizes.
  const digest = (value: string) =>
    createHash("sha256").update(value, "utf8").digest();
  return timingSafeEqual(digest(a), digest(b));
}

function required(value: string | undefined, what: string): string {
  if (value === undefined || value.length === 0)
    throw new SettingError(`auth.${what}`, "is required");
  return value;
}

/** The ES256 verification key: a PEM SubjectPublicKeyInfo file. */
async function publicKey(
  path: string,
): ReturnType<typeof import("jose").importSPKI> {
  const { importSPKI } = await import("jose");
  let pem: string;
  try {
    pem = readFileSync(path, "utf8");
  } catch (error) {
    throw new SettingError(
      "auth.publicKeyFile",
      `cannot read ${path}: ${(error as Error).message}`,
    );
  }
  try {
    return await importSPKI(pem, "ES256");
  } catch {
    throw new SettingError(
      "auth.publicKeyFile",
      `${path} is not a PEM P-256 public key`,
    );
  }
}

async function jwtAuthenticator(auth: AuthSettings): Promise<Authenticator> {
  const { jwtVerify } = await import("jose");
  const issuer = required(auth.issuer, "issuer");
  const audience = required(auth.audience, "audience");
  const purpose = required(auth.purpose ?? auth.mode, "purpose");
  const clock = auth.clock;
  if (clock === undefined) throw new SettingError("auth.clock", "is required");
  const strict = auth.profile === "strict";
  const algorithm = strict ? "ES256" : "HS256";
  const key = strict
    ? await publicKey(required(auth.publicKeyFile, "publicKeyFile"))
    : new TextEncoder().encode(required(auth.signingKey, "signingKey"));
  return async (rawHeaders) => {
    const token = bearerToken(rawHeaders);
    if (token === null) return false;
    try {
      const { payload } = await jwtVerify(token, key, {
        algorithms: [algorithm],
        issuer,
        audience,
        currentDate: new Date(clock * 1000),
        clockTolerance: 0,
      });
      const { sub, exp, iat } = payload;
      return (
        payload["purpose"] === purpose &&
        typeof sub === "string" &&
        sub.length > 0 &&
        typeof exp === "number" &&
        exp > clock &&
        typeof iat === "number" &&
        iat <= clock
      );
    } catch {
      return false;
    }
  };
}

/** The server's per-request check for the configured mode (mtls is enforced by TLS itself). */
export async function createAuthenticator(
  auth: AuthSettings,
): Promise<Authenticator> {
  switch (auth.mode) {
    case "none":
    case "mtls":
      return () => Promise.resolve(true);
    case "bearer": {
      const expected = required(auth.token, "token");
      return (rawHeaders) => {
        const token = bearerToken(rawHeaders);
        return Promise.resolve(token !== null && sameSecret(token, expected));
      };
    }
    case "oauth":
    case "workload":
      return jwtAuthenticator(auth);
  }
}

/** Posts a form and returns the status and body; never follows a redirect. */
export type FormPoster = (
  url: string,
  form: string,
) => Promise<{ status: number; body: string }>;

/** The client's bearer credential for the run, or null for modes without one. */
export async function clientCredential(
  auth: AuthSettings,
  post: FormPoster,
): Promise<string | null> {
  switch (auth.mode) {
    case "none":
    case "mtls":
      return null;
    case "bearer":
      return required(auth.token, "token");
    case "workload":
      return required(auth.assertion, "assertion");
    case "oauth":
      return acquireToken(auth, post);
  }
}

async function acquireToken(
  auth: AuthSettings,
  post: FormPoster,
): Promise<string> {
  const endpoint = required(auth.tokenEndpoint, "tokenEndpoint");
  if (auth.profile === "strict" && !endpoint.startsWith("https://")) {
    throw new SettingError(
      "auth.tokenEndpoint",
      "must be https under the strict profile",
    );
  }
  const form = new URLSearchParams({
    grant_type: "client_credentials",
    client_id: required(auth.clientId, "clientId"),
    client_secret: required(auth.clientSecret, "clientSecret"),
    audience: required(auth.audience, "audience"),
  }).toString();
  const { status, body } = await post(endpoint, form);
  if (status !== 200) throw new Error(`token endpoint answered HTTP ${status}`);
  let answer: unknown;
  try {
    answer = parseStrictJson(body);
  } catch {
    throw new Error("token endpoint answer is not JSON");
  }
  if (
    !isObject(answer) ||
    typeof answer["access_token"] !== "string" ||
    answer["access_token"].length === 0
  ) {
    throw new Error("token endpoint answer has no access_token");
  }
  const type = answer["token_type"];
  if (typeof type !== "string" || type.toLowerCase() !== "bearer")
    throw new Error("token endpoint answer is not a Bearer token");
  return answer["access_token"];
}
