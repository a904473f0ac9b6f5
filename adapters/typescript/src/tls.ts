// TLS material per trust profile (docs/CONTRACT.md, "Authentication and TLS").
// strict: the `tls` block on both sides, HTTPS for every mode but `none`.
// compat: HTTPS only for `mtls`, with the files under `auth`.

import { readFileSync } from "node:fs";
import { ConfigError, type AuthConfig, type TlsConfig } from "./config.js";

export interface ServerTls {
  readonly cert: Buffer;
  readonly key: Buffer;
  /** The CA that client certificates must chain to; null when none is required. */
  readonly clientCa: Buffer | null;
}

export interface ClientTls {
  readonly ca: Buffer | null;
  readonly cert: Buffer | null;
  readonly key: Buffer | null;
}

function read(path: string | undefined): Buffer | null {
  return path === undefined ? null : readFileSync(path);
}

/** The server's TLS material, or null for plain HTTP. Fails closed on a strict mismatch. */
export function serverTls(
  auth: AuthConfig,
  tls: TlsConfig | null,
): ServerTls | null {
  if (auth.profile === "compat" && auth.mode === "mtls") {
    const cert = read(auth.certFile);
    const key = read(auth.keyFile);
    const clientCa = read(auth.caFile);
    if (cert === null || key === null || clientCa === null) {
      throw new ConfigError(
        "compat mtls needs auth.caFile, auth.certFile and auth.keyFile",
      );
    }
    return { cert, key, clientCa };
  }
  if (tls === null) {
    if (auth.profile === "strict" && auth.mode !== "none") {
      throw new ConfigError(
        `strict profile: auth mode ${auth.mode} needs a tls block`,
      );
    }
    return null;
  }
  const cert = read(tls.certFile);
  const key = read(tls.keyFile);
  if (cert === null || key === null)
    throw new ConfigError("tls needs certFile and keyFile");
  const clientCa = read(tls.clientCaFile);
  if (auth.mode === "mtls" && clientCa === null)
    throw new ConfigError("mtls needs tls.clientCaFile");
  return { cert, key, clientCa };
}

/** The client's TLS material (used only for https URLs). */
export function clientTls(auth: AuthConfig, tls: TlsConfig | null): ClientTls {
  if (auth.profile === "compat" && auth.mode === "mtls" && tls === null) {
    return {
      ca: read(auth.caFile),
      cert: read(auth.certFile),
      key: read(auth.keyFile),
    };
  }
  return {
    ca: read(tls?.caFile),
    cert: read(tls?.certFile),
    key: read(tls?.keyFile),
  };
}

/** Whether the profile requires HTTPS for this mode (strict: every mode but none). */
export function requiresHttps(auth: AuthConfig): boolean {
  return (
    auth.mode === "mtls" || (auth.profile === "strict" && auth.mode !== "none")
  );
}
