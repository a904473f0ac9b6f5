// The settings the SDK's transports and credentials are set up from, and the
// error that names a setting that cannot be used. How they are obtained (a
// config file, a command line) is the caller's business.

/** A setting that is missing or unusable; `setting` is its dotted name, e.g. `auth.token`. */
export class SettingError extends Error {
  constructor(
    readonly setting: string,
    reason: string,
  ) {
    super(reason);
  }
}

export type AuthMode = "none" | "bearer" | "oauth" | "mtls" | "workload";
export type Profile = "strict" | "compat";

/** Authentication: the mode, the trust profile, and the mode's own fields. */
export interface AuthSettings {
  readonly mode: AuthMode;
  readonly profile: Profile;
  readonly token?: string;
  readonly tokenEndpoint?: string;
  readonly clientId?: string;
  readonly clientSecret?: string;
  readonly audience?: string;
  readonly assertion?: string;
  readonly issuer?: string;
  readonly purpose?: string;
  readonly clock?: number;
  readonly publicKeyFile?: string;
  readonly signingKey?: string;
  readonly caFile?: string;
  readonly certFile?: string;
  readonly keyFile?: string;
}

/** TLS files: a server's `certFile`/`keyFile`/`clientCaFile?`; a client's `caFile`/`certFile?`/`keyFile?`. */
export interface TlsFiles {
  readonly caFile?: string;
  readonly certFile?: string;
  readonly keyFile?: string;
  readonly clientCaFile?: string;
}
