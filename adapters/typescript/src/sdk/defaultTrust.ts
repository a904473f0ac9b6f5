// The default TLS trust, with NODE_EXTRA_CA_CERTS read on first use.
//
// Node 20 builds its whole root store at start-up when NODE_EXTRA_CA_CERTS
// is set (some 70 ms of CPU per process), though a TLS client with a CA of
// its own never looks at it. So the launcher (ahp-ts.sh) hands the variable
// over as DEFERRED_EXTRA_CA; restoreEnvironment() puts it back, before
// anything reads the environment, and the adapter's TLS clients that have no
// CA of their own get the same store Node would have built: its bundled
// roots plus the file's certificates. Run as `node dist/cli.js` nothing is
// deferred and Node's own store is used.

import { readFileSync } from "node:fs";
import { createRequire } from "node:module";

/** Where the launcher keeps NODE_EXTRA_CA_CERTS for the adapter. */
export const DEFERRED_EXTRA_CA = "AHP_TS_DEFERRED_NODE_EXTRA_CA_CERTS";

/** The deferred file, or null when Node read it (or none is set). */
let deferredFile: string | null = null;
/** The store built from it, once a client needed it. */
let store: string[] | null = null;

/**
 * Restores the environment the launcher was given (children and every
 * lookup see NODE_EXTRA_CA_CERTS as it was) and notes the deferred file.
 */
export function restoreEnvironment(): void {
  const file = process.env[DEFERRED_EXTRA_CA];
  if (file === undefined) return;
  delete process.env[DEFERRED_EXTRA_CA];
  process.env["NODE_EXTRA_CA_CERTS"] = file;
  if (file.length > 0) deferredFile = file;
}

/**
 * The `ca` option of a TLS client that has no CA of its own: undefined for
 * Node's default store, else that store with the deferred extra
 * certificates (Node's bundled roots alone, and Node's warning, when the
 * file cannot be read).
 */
export function defaultCa(): string[] | undefined {
  if (deferredFile === null) return undefined;
  if (store === null) {
    // node:tls only now: the launcher's process may never need it.
    const { rootCertificates } = createRequire(import.meta.url)(
      "node:tls",
    ) as typeof import("node:tls");
    let extra: string | null = null;
    try {
      extra = readFileSync(deferredFile, "latin1");
    } catch (error) {
      process.stderr.write(
        `Warning: Ignoring extra certs from \`${deferredFile}\`, load failed: ${(error as Error).message}\n`,
      );
    }
    store =
      extra === null ? [...rootCertificates] : [...rootCertificates, extra];
  }
  return store;
}
