// Token material shared by the auth tests: the fixed clock, issuer and
// audience, standard claims, and ES256/HS256 signing with jose.

import type { KeyObject } from "node:crypto";
import { SignJWT, type JWTPayload } from "jose";

export const CLOCK = 1_893_456_000;
export const ISSUER = "urn:test:issuer";
export const AUDIENCE = "urn:test:backend";
export const HS_SECRET = "compat-secret-for-tests-only-0123456789";

/** Standard claims with `change` applied; a key set to null is left out. */
export function claims(change: Record<string, unknown> = {}): JWTPayload {
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

export function es256Token(
  payload: JWTPayload,
  key: KeyObject,
): Promise<string> {
  return new SignJWT(payload)
    .setProtectedHeader({ alg: "ES256", typ: "JWT" })
    .sign(key);
}

export function hs256Token(
  payload: JWTPayload,
  secret = HS_SECRET,
): Promise<string> {
  return new SignJWT(payload)
    .setProtectedHeader({ alg: "HS256", typ: "JWT" })
    .sign(new TextEncoder().encode(secret));
}

export type Profile = "strict" | "compat";

/** The server auth block for JWTs of purpose `mode`, checked at the fixed clock with `key`. */
export const jwtAuth = (
  mode: "oauth" | "workload",
  profile: Profile,
  key: { publicKeyFile: string } | { signingKey: string },
) => ({
  mode,
  profile,
  issuer: ISSUER,
  audience: AUDIENCE,
  purpose: mode,
  clock: CLOCK,
  ...key,
});
