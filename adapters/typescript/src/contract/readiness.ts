// The readiness file: written atomically (a temporary file in the same
// directory, then rename) once the server listens.

import { renameSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";

export interface Readiness {
  readonly endpoint: string | null;
  readonly controlEndpoint: string;
  /** The upload receiver (stepServer.ts), and any other listener a suite publishes. */
  readonly [listener: string]: string | number | null;
  readonly pid: number;
}

export function writeReadiness(path: string, readiness: Readiness): void {
  const temporary = join(dirname(path), `.${process.pid}.ready.tmp`);
  writeFileSync(temporary, JSON.stringify(readiness));
  renameSync(temporary, path);
}
