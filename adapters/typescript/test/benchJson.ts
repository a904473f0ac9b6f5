// Strict JSON parsing against JSON.parse (not a test: no timing assertions in
// tests). Parses the compact text of every request and every response of the
// core scenario sets, as the client and the server see them on the wire,
// many times over, and prints the time per pass and the ratio.
// Run: node dist/test/benchJson.js

import { parseStrictJson } from "../sdk/json.js";
import { CORE_FILE, readBlindRows, UPSTREAM_FILE } from "./processes.js";

const PASSES = 200;

const texts = [CORE_FILE, UPSTREAM_FILE].flatMap((file) =>
  readBlindRows(file).flatMap((row) => [
    JSON.stringify(row.request),
    JSON.stringify(row.response),
  ]),
);
const bytes = texts.reduce((total, text) => total + text.length, 0);

function time(parse: (text: string) => unknown): number {
  for (const text of texts) parse(text); // warm-up
  const start = process.hrtime.bigint();
  for (let pass = 0; pass < PASSES; pass += 1)
    for (const text of texts) parse(text);
  return Number(process.hrtime.bigint() - start) / 1e6 / PASSES;
}

const native = time((text) => JSON.parse(text));
const strict = time(parseStrictJson);
const nativeAgain = time((text) => JSON.parse(text));
const baseline = Math.min(native, nativeAgain);
process.stdout.write(
  `${texts.length} texts, ${(bytes / 1024).toFixed(0)} KiB per pass\n` +
    `JSON.parse:      ${baseline.toFixed(3)} ms/pass (${((baseline * 1000) / texts.length).toFixed(2)} µs/text)\n` +
    `parseStrictJson: ${strict.toFixed(3)} ms/pass (${((strict * 1000) / texts.length).toFixed(2)} µs/text), ${(strict / baseline).toFixed(2)}x\n`,
);
