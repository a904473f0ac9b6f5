// TLS material per trust profile (docs/CONTRACT.md, "Authentication and TLS").
// strict: the `tls` block on both sides, HTTPS for every mode but `none`.
// compat: HTTPS only for `mtls`, with the files under `auth`.

import { createPrivateKey, X509Certificate } from "node:crypto";
import { readFileSync } from "node:fs";
import { SettingError, type AuthSettings, type TlsFiles } from "./settings.js";

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

/**
 * The PEM file named by setting `setting` (`path`), or null when the setting
 * is absent: a private key for a `keyFile`, else a certificate (the first of
 * a bundle is checked).
 */
function read(setting: string, path: string | undefined): Buffer | null {
  if (path === undefined) return null;
  let pem: Buffer;
  try {
    pem = readFileSync(path);
  } catch (error) {
    throw new SettingError(
      setting,
      `cannot read ${path}: ${(error as Error).message}`,
    );
  }
  const isKey = setting.endsWith("keyFile");
  try {
    if (isKey) createPrivateKey(pem);
    else new X509Certificate(pem);
  } catch {
    throw new SettingError(
      setting,
      `${path} is not a PEM ${isKey ? "private key" : "certificate"}`,
    );
  }
  return pem;
}

/** The server's TLS material, or null for plain HTTP. Fails closed on a strict mismatch. */
export function serverTls(
  auth: AuthSettings,
  tls: TlsFiles | null,
): ServerTls | null {
  if (auth.profile === "compat" && auth.mode === "mtls") {
    const cert = read("auth.certFile", auth.certFile);
    const key = read("auth.keyFile", auth.keyFile);
    const clientCa = read("auth.caFile", auth.caFile);
    if (cert === null || key === null || clientCa === null) {
      const missing =
        cert === null ? "certFile" : key === null ? "keyFile" : "caFile";
      throw new SettingError(`auth.${missing}`, "is required for compat mtls");
    }
    return { cert, key, clientCa };
  }
  if (tls === null) {
    if (auth.profile === "strict" && auth.mode !== "none") {
      throw new SettingError(
        "tls",
        `is required for auth mode ${auth.mode} under the strict profile`,
      );
    }
    return null;
  }
  const cert = read("tls.certFile", tls.certFile);
  const key = read("tls.keyFile", tls.keyFile);
  if (cert === null) throw new SettingError("tls.certFile", "is required");
  if (key === null) throw new SettingError("tls.keyFile", "is required");
  const clientCa = read("tls.clientCaFile", tls.clientCaFile);
  if (auth.mode === "mtls" && clientCa === null)
    throw new SettingError("tls.clientCaFile", "is required for mtls");
  return { cert, key, clientCa };
}

/** The client's TLS material (used only for https URLs). */
export function clientTls(auth: AuthSettings, tls: TlsFiles | null): ClientTls {
  if (auth.profile === "compat" && auth.mode === "mtls" && tls === null) {
    return {
      ca: read("auth.caFile", auth.caFile),
      cert: read("auth.certFile", auth.certFile),
      key: read("auth.keyFile", auth.keyFile),
    };
  }
  return {
    ca: read("tls.caFile", tls?.caFile),
    cert: read("tls.certFile", tls?.certFile),
    key: read("tls.keyFile", tls?.keyFile),
  };
}

/** Whether the profile requires HTTPS for this mode (strict: every mode but none). */
export function requiresHttps(auth: AuthSettings): boolean {
  return (
    auth.mode === "mtls" || (auth.profile === "strict" && auth.mode !== "none")
  );
}
