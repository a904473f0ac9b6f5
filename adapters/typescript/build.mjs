// Incremental build of the TypeScript adapter, with no dependencies.
// Runs `npm ci` only when package-lock.json changed since the last install
// (npm ci deletes node_modules every time), then `tsc -b` (incremental).
import { createHash } from "node:crypto";
import { spawnSync } from "node:child_process";
import {
  existsSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = dirname(fileURLToPath(import.meta.url));
const stampFile = join(root, "node_modules", ".lock-stamp");
const lockHash = createHash("sha256")
  .update(readFileSync(join(root, "package-lock.json")))
  .digest("hex");

function run(command, args) {
  const result = spawnSync(command, args, { cwd: root, stdio: "inherit" });
  if (result.status !== 0) {
    process.stderr.write(`build: ${command} ${args.join(" ")} failed\n`);
    process.exit(result.status ?? 1);
  }
}

const installed =
  existsSync(stampFile) && readFileSync(stampFile, "utf8").trim() === lockHash;
if (!installed) {
  run("npm", ["ci", "--no-audit", "--no-fund"]);
  writeFileSync(stampFile, `${lockHash}\n`);
}
run(process.execPath, [
  join(root, "node_modules", "typescript", "bin", "tsc"),
  "-b",
  "test",
]);
// tsc never deletes the output of a source that was moved or removed: drop
// it, so that a stale dist/test/*.test.js is not run and nothing imports a
// stale module.
const OUTPUT = /\.(js|d\.ts)(\.map)?$/;
function prune(outDir, srcDir) {
  if (!existsSync(outDir)) return;
  for (const entry of readdirSync(outDir, { withFileTypes: true })) {
    const output = join(outDir, entry.name);
    if (entry.isDirectory()) {
      if (relative(join(root, "dist"), output) === "schema-cache") continue;
      if (relative(join(root, "dist"), output) === "test") continue;
      prune(output, join(srcDir, entry.name));
    } else if (
      OUTPUT.test(entry.name) &&
      !existsSync(join(srcDir, entry.name.replace(OUTPUT, ".ts")))
    ) {
      rmSync(output);
    }
  }
}
prune(join(root, "dist"), join(root, "src"));
prune(join(root, "dist", "test"), join(root, "test"));
// Compile the canonical schemas once (cached by content under
// dist/schema-cache/), and drop the cache files of every other content.
const schemas = await import(
  pathToFileURL(join(root, "dist", "sdk", "schemas.js")).href
);
const { schemaDirFor } = await import(
  pathToFileURL(join(root, "dist", "contract", "config.js")).href
);
try {
  schemas.refreshSchemaCache(schemaDirFor(undefined).path);
} catch (error) {
  process.stderr.write(`build: schemas not compiled yet: ${error.message}\n`);
}
process.stdout.write(
  installed
    ? "build: dependencies up to date; compiled\n"
    : "build: installed dependencies; compiled\n",
);
