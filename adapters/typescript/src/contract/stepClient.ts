// The step engine's client process (`lifecycle-client`, for every suite the
// lifecycle commands run): the link to the server is opened once (stdio:
// the server started); a link that cannot be opened fails every row with
// the reason, a setting that cannot be used is the config's (exit 2). The
// rows run in order, then the server's receipts (`GET /receipts`) join the
// report, and the control client and the link are closed before the report
// is written. A suite brings its rows and what one row does.

import type { Json } from "../sdk/json.js";
import { SettingError } from "../sdk/settings.js";
import {
  ConfigError,
  readStepClientConfig,
  readStepScenarios,
  type StepClientSettings,
} from "./config.js";
import type { ControlClient } from "./controlClient.js";
import { writeReport, type ResultEntry } from "./report.js";
import { asConfigError, schemasFor } from "./steps.js";

/** What the process closes at the end: the control client first, then the rest. */
export interface StepLink {
  readonly control: ControlClient;
  /** Closes the wire and whatever the run opened beside it (the stdio server is reaped). */
  close(): Promise<void>;
}

/** One suite's client run. */
export interface StepClientRun<
  R extends { readonly id: string },
  L extends StepLink,
> {
  readonly rows: readonly R[];
  /** The report's keys beside `results` (their values also when no link opened). */
  readonly extra: Record<string, Json>;
  /** A stderr line. */
  readonly note: (text: string) => void;
  /** Opens the link to the server (stdio: starts it). */
  open(): Promise<L>;
  /**
   * Readies the run over the open link (it may set `extra`); resolves with
   * what one row does.
   */
  start(
    link: L,
    extra: Record<string, Json>,
  ): Promise<(row: R) => Promise<ResultEntry>>;
}

/** Runs a suite's client over its rows and writes the report; resolves with the exit code. */
export async function runStepClient<
  R extends { readonly id: string },
  L extends StepLink,
>(settings: StepClientSettings, run: StepClientRun<R, L>): Promise<number> {
  const results: ResultEntry[] = [];
  const { extra } = run;
  let link: L | null = null;
  try {
    link = await run.open();
  } catch (error) {
    if (error instanceof SettingError || error instanceof ConfigError)
      throw asConfigError(settings.configFile, error);
    const reason = `cannot open transport: ${(error as Error).message}`;
    run.note(reason);
    for (const { id } of run.rows)
      results.push({ id, status: "failed", error: reason });
  }
  if (link !== null) {
    try {
      const runRow = await run.start(link, extra);
      for (const row of run.rows) results.push(await runRow(row));
      try {
        extra["receipts"] = await link.control.get("/receipts");
      } catch (error) {
        run.note(`cannot fetch the receipts: ${(error as Error).message}`);
      }
    } finally {
      link.control.close();
      await link.close();
    }
  }
  writeReport(settings.reportFile, settings.language, results, extra);
  return 0;
}

/**
 * `lifecycle-client` for a suite no module runs: the config and the
 * scenario file are read as every step-driven client reads them (an
 * unusable one is exit 2), then every row is reported `unsupported`, naming
 * the suite, in the shape of the lifecycle report (the default suite's).
 */
export function reportOtherSuite(configPath: string): Promise<number> {
  const settings = readStepClientConfig(configPath);
  const scenarios = readStepScenarios(settings.scenarioFile, {
    file: configPath,
    field: "scenarioFile",
  });
  schemasFor(configPath, settings.schemaDir);
  const error = `suite ${JSON.stringify(settings.suite)} is not implemented by this client`;
  writeReport(
    settings.reportFile,
    settings.language,
    scenarios.map(({ id }) => ({ id, status: "unsupported", error })),
    { contentUploads: [] },
  );
  return Promise.resolve(0);
}
