// The canonical schema registry: every `*.schema.json` of the schema directory
// keyed by `$id`, validated with Ajv (Draft 2020-12, ECMA-262 patterns with
// the `u` flag, formats `uri` and `date-time` checked).
//
// Compiling the request schema costs about half a second, far more than the
// rest of start-up, so the validators are compiled once per schema content:
// Ajv's standalone code is cached under dist/schema-cache/, keyed by the
// SHA-256 of the schema files, and later processes load it in milliseconds.
// That code is some 1 MB; V8 compiling it (and each validator on its first
// call) cost more than the rest of start-up, so it runs with a V8 code cache
// beside it (KEY.TAG.code), written by a process that found none once it has
// used the validators, so that it holds the compiled ones.

import { createHash } from "node:crypto";
import {
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Script } from "node:vm";
import type { ErrorObject } from "ajv";
import type { ContentValidators } from "./content.js";
import { isObject, parseStrictJson } from "./json.js";
import { SettingError } from "./settings.js";

export const SCHEMA_BASE = "https://interop.ahp.test/schemas/draft/";
/** Bump when the set of generated validators or their options change. */
const GENERATOR_VERSION = "4";

/** The adapter directory (this file is dist/sdk/schemas.js). */
const ADAPTER_DIR = fileURLToPath(new URL("../../", import.meta.url));
const CACHE_DIR = join(ADAPTER_DIR, "dist", "schema-cache");
const require = createRequire(join(ADAPTER_DIR, "package.json"));

/** Returns null when the value is valid, else a short description of the first error. */
export type Check = (value: unknown) => string | null;

export interface SchemaSet {
  /** `intercept-request.schema.json`, plus the id rule outside it: `id` equals `params.event.id`. */
  readonly request: Check;
  /** `intercept-response.schema.json`: a whole JSON-RPC response message. */
  readonly response: Check;
  /** `capabilities-request.schema.json`: a whole `hooks/capabilities` request. */
  readonly capabilitiesRequest: Check;
  /** `capabilities-response.schema.json`: a whole discovery response. */
  readonly capabilitiesResponse: Check;
  /** `registration.schema.json`: a hook registration document. */
  readonly registration: Check;
  /** `observe-notification.schema.json`: a whole `hooks/observe` notification. */
  readonly observe: Check;
  /** `content-upload-receipt.schema.json`: the `{ref, size, sha256}` of a 201 upload. */
  readonly uploadReceipt: Check;
  readonly content: ContentValidators;
}

interface Validate {
  (value: unknown): boolean;
  errors?: ErrorObject[] | null;
}

type ValidatorName =
  | "request"
  | "response"
  | "capabilitiesRequest"
  | "capabilitiesResponse"
  | "registration"
  | "observe"
  | "uploadReceipt"
  | "messages"
  | "assistantMessages"
  | "textParts"
  | "workspaceChange"
  | "answerContent";
type Validators = Record<ValidatorName, Validate>;

/** Each generated validator: the schema `$id` (or a reference into one) it checks. */
const TARGETS: Record<ValidatorName, string> = {
  request: `${SCHEMA_BASE}intercept-request.schema.json`,
  response: `${SCHEMA_BASE}intercept-response.schema.json`,
  capabilitiesRequest: `${SCHEMA_BASE}capabilities-request.schema.json`,
  capabilitiesResponse: `${SCHEMA_BASE}capabilities-response.schema.json`,
  registration: `${SCHEMA_BASE}registration.schema.json`,
  observe: `${SCHEMA_BASE}observe-notification.schema.json`,
  uploadReceipt: `${SCHEMA_BASE}content-upload-receipt.schema.json`,
  messages: `${SCHEMA_BASE}content-item.schema.json#/$defs/messages`,
  assistantMessages: `${SCHEMA_BASE}interaction-event.schema.json#/$defs/assistantMessages`,
  textParts: `${SCHEMA_BASE}content-item.schema.json#/$defs/textParts`,
  workspaceChange: `${SCHEMA_BASE}common.schema.json#/$defs/workspaceChange`,
  answerContent: `${SCHEMA_BASE}mcp-elicitation.schema.json#/$defs/answerContent`,
};

interface SchemaFile {
  readonly name: string;
  readonly text: string;
}

function readSchemaFiles(directory: string): SchemaFile[] {
  let names: string[];
  try {
    names = readdirSync(directory);
  } catch (error) {
    throw new SettingError(
      "schemaDir",
      `cannot read ${directory}: ${(error as Error).message}`,
    );
  }
  return names
    .filter((name) => name.endsWith(".schema.json"))
    .sort()
    .map((name) => ({
      name,
      text: readFileSync(join(directory, name), "utf8"),
    }));
}

function contentKey(files: readonly SchemaFile[]): string {
  const hash = createHash("sha256").update(
    `ahp-ts-validators ${GENERATOR_VERSION}\n`,
  );
  for (const file of files)
    hash.update(`${file.name}\n${file.text.length}\n${file.text}`);
  return hash.digest("hex").slice(0, 32);
}

/** Compiles every target with Ajv, caching the standalone code; returns the compiled functions. */
function compile(files: readonly SchemaFile[], cacheFile: string): Validators {
  const Ajv2020 = (
    require("ajv/dist/2020") as typeof import("ajv/dist/2020.js")
  ).default;
  const addFormats = (require("ajv-formats") as typeof import("ajv-formats"))
    .default;
  const standaloneCode = (
    require("ajv/dist/standalone") as typeof import("ajv/dist/standalone/index.js")
  ).default;
  const ajv = new Ajv2020({
    strict: false,
    allErrors: false,
    unicodeRegExp: true,
    code: { source: true, lines: false },
  });
  addFormats(ajv, ["uri", "date-time"]);
  for (const file of files) {
    const schema: unknown = parseStrictJson(file.text);
    if (!isObject(schema))
      throw new Error(`schema ${file.name} is not an object`);
    const id =
      typeof schema["$id"] === "string"
        ? schema["$id"]
        : SCHEMA_BASE + file.name;
    ajv.addSchema(schema, id);
  }
  const exports: Record<string, string> = {};
  const validators = {} as Validators;
  for (const [name, target] of Object.entries(TARGETS) as [
    ValidatorName,
    string,
  ][]) {
    const wrapperId = `urn:ahp-ts:${name}`;
    ajv.addSchema({ $id: wrapperId, $ref: target });
    const validate = ajv.getSchema(wrapperId);
    if (validate === undefined) throw new Error(`schema for ${name} not found`);
    validators[name] = validate;
    exports[name] = wrapperId;
  }
  try {
    mkdirSync(CACHE_DIR, { recursive: true });
    const temporary = `${cacheFile}.${process.pid}.tmp`;
    writeFileSync(temporary, standaloneCode(ajv, exports));
    renameSync(temporary, cacheFile);
  } catch (error) {
    process.stderr.write(
      `ahp-ts: cannot cache compiled schemas: ${(error as Error).message}\n`,
    );
  }
  return validators;
}

/** The code cache's name part for this V8 and architecture (V8 rejects another's). */
const CODE_TAG = `v8-${process.versions.v8}-${process.arch}`.replace(
  /[^\w.-]/g,
  "_",
);
/**
 * A code cache starts with the size and mtime of the module it was made
 * from, then COMPLETE when every function of it was compiled (by the build),
 * else 0 (a process's: the validators it had called).
 */
const CODE_HEADER = 24;
const COMPLETE = 1;

/** Whether this process validated anything (its code cache then holds compiled validators). */
let validated = false;

/** The cached modules this process ran, by file (as `require` keeps them). */
const modules = new Map<string, unknown>();

/**
 * Runs a cached module as `require` would (same wrapper, same resolution of
 * its own requires, once per process), with the V8 code cache made from it
 * if there is one; when there is none, or V8 rejects it, one is written as
 * the process exits. Throws when the module cannot be read or run.
 */
function codeFileOf(cacheFile: string): string {
  return `${cacheFile.slice(0, -".cjs".length)}.${CODE_TAG}.code`;
}

/** The V8 code cache of the module `cacheFile` as it is now, and whether it is complete; null when none. */
function readCodeCache(
  cacheFile: string,
  size: number,
  mtimeMs: number,
): { readonly data: Buffer; readonly complete: boolean } | null {
  try {
    const code = readFileSync(codeFileOf(cacheFile));
    if (
      code.length > CODE_HEADER &&
      code.readDoubleLE(0) === size &&
      code.readDoubleLE(8) === mtimeMs
    )
      return {
        data: code.subarray(CODE_HEADER),
        complete: code.readDoubleLE(16) === COMPLETE,
      };
  } catch {
    // none
  }
  return null;
}

/** The script of a cached module, as `require` wraps it. */
function moduleScript(
  cacheFile: string,
  source: string,
  cachedData: Buffer | undefined,
): Script {
  return new Script(
    `(function (exports, require, module, __filename, __dirname) { ${source}\n});`,
    {
      filename: cacheFile,
      ...(cachedData === undefined ? {} : { cachedData }),
    },
  );
}

function runCompiled(cacheFile: string): unknown {
  if (modules.has(cacheFile)) return modules.get(cacheFile);
  const source = readFileSync(cacheFile, "utf8");
  const { size, mtimeMs } = statSync(cacheFile);
  const codeFile = codeFileOf(cacheFile);
  const cachedData = readCodeCache(cacheFile, size, mtimeMs)?.data;
  const script = moduleScript(cacheFile, source, cachedData);
  const module = { exports: {} as unknown };
  (script.runInThisContext() as (...args: unknown[]) => void).call(
    module.exports,
    module.exports,
    require,
    module,
    cacheFile,
    CACHE_DIR,
  );
  if (cachedData === undefined || script.cachedDataRejected === true)
    process.once("exit", () => {
      if (validated) writeCodeCache(codeFile, script, size, mtimeMs, false);
    });
  modules.set(cacheFile, module.exports);
  return module.exports;
}

function writeCodeCache(
  codeFile: string,
  script: Script,
  size: number,
  mtimeMs: number,
  complete: boolean,
): void {
  const temporary = `${codeFile}.${process.pid}.tmp`;
  try {
    const header = Buffer.alloc(CODE_HEADER);
    header.writeDoubleLE(size, 0);
    header.writeDoubleLE(mtimeMs, 8);
    header.writeDoubleLE(complete ? COMPLETE : 0, 16);
    writeFileSync(
      temporary,
      Buffer.concat([header, script.createCachedData()]),
    );
    renameSync(temporary, codeFile);
  } catch {
    // Only start-up is slower without it.
    rmSync(temporary, { force: true });
  }
}

function cacheFileOf(files: readonly SchemaFile[]): string {
  return join(CACHE_DIR, `${contentKey(files)}.cjs`);
}

function readSchemaDirectory(directory: string): SchemaFile[] {
  const files = readSchemaFiles(directory);
  if (files.length === 0)
    throw new SettingError(
      "schemaDir",
      `no *.schema.json files in ${directory}`,
    );
  return files;
}

function loadValidators(directory: string): Validators {
  const files = readSchemaDirectory(directory);
  const cacheFile = cacheFileOf(files);
  let cached: unknown;
  try {
    cached = runCompiled(cacheFile);
  } catch {
    return compile(files, cacheFile);
  }
  // A cache written by another generator must not lack a validator.
  const exported = (cached ?? {}) as Record<string, unknown>;
  const complete = Object.keys(TARGETS).every(
    (name) => typeof exported[name] === "function",
  );
  return complete ? (cached as Validators) : compile(files, cacheFile);
}

/**
 * For the build: the module's code cache with every function compiled,
 * unless it has one. A process's own cache holds only the validators it
 * called by its exit, so each process would compile (and V8 check the
 * source of) the ones it lacks: some 15 ms in a fresh process. V8 compiles
 * every function up front under --no-lazy; the flag is set back before the
 * cache is made, so that the cache carries the flags of a normal process
 * (V8 rejects one made under others, and the first process to meet such a
 * cache replaces it with its own).
 */
function writeCompleteCodeCache(cacheFile: string): void {
  let source: string;
  let size: number;
  let mtimeMs: number;
  try {
    source = readFileSync(cacheFile, "utf8");
    ({ size, mtimeMs } = statSync(cacheFile));
  } catch {
    return;
  }
  if (readCodeCache(cacheFile, size, mtimeMs)?.complete === true) return;
  // node:v8 only here: no process but the build needs it.
  const v8 = require("node:v8") as typeof import("node:v8");
  let script: Script;
  v8.setFlagsFromString("--no-lazy");
  try {
    // Another name than the module run by this process, whose compiled
    // (lazy) functions V8 would otherwise hand back; a cache is used under
    // any name.
    script = moduleScript(`${cacheFile}#complete`, source, undefined);
  } finally {
    v8.setFlagsFromString("--lazy");
  }
  writeCodeCache(codeFileOf(cacheFile), script, size, mtimeMs, true);
}

/** What the files of dist/schema-cache are named: KEY.cjs, KEY.TAG.code, and their temporaries. */
const CACHE_NAME = /^[0-9a-f]{32}\.(?:cjs|[\w.-]+\.code)(?:\.\d+\.tmp)?$/;

/**
 * For the build: compiles the validators of `directory` unless cached, then
 * deletes every cache file (by the names above) of other schema contents,
 * and every temporary; any other file is left alone.
 */
export function refreshSchemaCache(directory: string): void {
  loadValidators(directory);
  writeCompleteCodeCache(cacheFileOf(readSchemaDirectory(directory)));
  const keep = `${contentKey(readSchemaDirectory(directory))}.`;
  for (const name of readdirSync(CACHE_DIR)) {
    if (
      CACHE_NAME.test(name) &&
      (!name.startsWith(keep) || name.endsWith(".tmp"))
    )
      rmSync(join(CACHE_DIR, name), { force: true });
  }
}

function check(validate: Validate): Check {
  return (value) => {
    validated = true;
    if (validate(value)) return null;
    const first = validate.errors?.[0];
    return first === undefined
      ? "invalid"
      : `${first.instancePath || "/"} ${first.message ?? "is invalid"}`;
  };
}

/** A check of parsed JSON text by that text: the verdict of each text is kept. */
export type TextCheck = (value: unknown, text: string) => string | null;

/** Verdicts kept at most (about 2 KB of text each); then they start over. */
const KEPT_VERDICTS = 4096;

/**
 * `check` with its verdict kept per exact JSON text: validation is
 * deterministic, and `value` must be what `text` parses to, unchanged.
 */
export function byText(check: Check): TextCheck {
  const verdicts = new Map<string, string | null>();
  return (value, text) => {
    const kept = verdicts.get(text);
    if (kept !== undefined) return kept;
    const verdict = check(value);
    if (verdicts.size === KEPT_VERDICTS) verdicts.clear();
    verdicts.set(text, verdict);
    return verdict;
  };
}

/** The JSON-RPC id of an intercept must equal its event id (a rule the schema cannot state). */
function idMatchesEvent(value: unknown): boolean {
  if (!isObject(value)) return false;
  const params = value["params"];
  const event = isObject(params) ? params["event"] : undefined;
  return isObject(event) && event["id"] === value["id"];
}

/** The schema set of `directory` (every `*.schema.json` in it). */
export function loadSchemas(directory: string): SchemaSet {
  const validators = loadValidators(directory);
  const request = check(validators.request);
  return {
    request: (value) =>
      request(value) ??
      (idMatchesEvent(value) ? null : "/id differs from params.event.id"),
    response: check(validators.response),
    capabilitiesRequest: check(validators.capabilitiesRequest),
    capabilitiesResponse: check(validators.capabilitiesResponse),
    registration: check(validators.registration),
    observe: check(validators.observe),
    uploadReceipt: check(validators.uploadReceipt),
    content: {
      messageList: (value) => validators.messages(value),
      assistantMessageList: (value) => validators.assistantMessages(value),
      textPartList: (value) => validators.textParts(value),
      workspaceChange: (value) => validators.workspaceChange(value),
      answerContent: (value) => validators.answerContent(value),
    },
  };
}
