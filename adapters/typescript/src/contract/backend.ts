// The scripted backend: each scenario's response by id, and the barrier that
// holds it, from the scenario file (reloaded by /reset).

import type { Json } from "../sdk/json.js";
import { readScenarios } from "./config.js";

export interface ScriptedReply {
  readonly response: Json;
  readonly barrier: string | null;
}

export class Backend {
  private replies = new Map<string, ScriptedReply>();

  /** `referrer`: the config field that named the file, for errors. */
  constructor(
    scenarioFile: string | null,
    referrer: { file: string; field: string } | null = null,
  ) {
    if (scenarioFile !== null) this.load(scenarioFile, referrer);
  }

  /** Replaces the scripted replies with those of `scenarioFile`; on error nothing changes. */
  load(
    scenarioFile: string,
    referrer: { file: string; field: string } | null = null,
  ): void {
    const replies = new Map<string, ScriptedReply>();
    for (const { id, response, barrier } of readScenarios(
      scenarioFile,
      referrer,
    ))
      replies.set(id, { response, barrier });
    this.replies = replies;
  }

  /** The reply scripted for `id`, or undefined. */
  reply(id: string): ScriptedReply | undefined {
    return this.replies.get(id);
  }
}
