// The extension's folders are its layers (docs/architecture.md): a module imports only from its own
// layer or those below, and no folder grows into a drawer. Read from the import lines, so it cannot drift.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync, statSync, existsSync } from "node:fs";
import { join, relative, resolve, dirname, sep } from "node:path";
import { fileURLToPath } from "node:url";

const EXTENSION = resolve(dirname(fileURLToPath(import.meta.url)), "../../src/tabpilot/extension");
const MAX_MODULES_PER_FOLDER = 12;

/** Lowest first. The top layer is what Chrome loads: the worker's root and the extension's pages. */
const LAYERS = [
  ["link"],
  ["snapshot"],
  ["state"],
  ["browser"],
  ["page"],
  ["person"],
  ["approval"],
  ["tools"],
  ["panel"],
  ["", "content", "prompt", "popup", "options", "sidepanel"],
];

/** @param {string} dir @returns {string[]} */
function modulesUnder(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return modulesUnder(path);
    return name.endsWith(".js") ? [path] : [];
  });
}

/** @param {string} file the layer's index, from the file's first folder under the extension */
function layerOf(file) {
  const top = relative(EXTENSION, file).split(sep);
  const folder = top.length > 1 ? top[0] : "";
  const index = LAYERS.findIndex((names) => names.includes(folder));
  assert.notEqual(index, -1, `${relative(EXTENSION, file)}: folder "${folder}" has no layer in this test and docs/architecture.md`);
  return index;
}

// Static imports, re-exports and JSDoc type imports: a type from a higher layer is a dependency too.
const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)["'](\.{1,2}\/[^"']+)["']/gm;

const modules = modulesUnder(EXTENSION);

test("every module's folder has a layer", () => {
  for (const file of modules) layerOf(file);
});

test(`no folder holds more than ${MAX_MODULES_PER_FOLDER} modules`, () => {
  /** @type {Map<string, number>} */
  const counts = new Map();
  for (const file of modules) counts.set(dirname(file), (counts.get(dirname(file)) ?? 0) + 1);
  for (const [dir, count] of counts) {
    assert.ok(count <= MAX_MODULES_PER_FOLDER, `${relative(EXTENSION, dir) || "extension/"} holds ${count} modules`);
  }
});

test("imports go to the module's own layer or below, and resolve to a file", () => {
  const upward = [];
  for (const file of modules) {
    const source = readFileSync(file, "utf8");
    for (const [, specifier] of source.matchAll(SPECIFIER)) {
      const target = resolve(dirname(file), specifier);
      assert.ok(existsSync(target), `${relative(EXTENSION, file)} imports missing ${specifier}`);
      assert.ok(target.startsWith(EXTENSION + sep), `${relative(EXTENSION, file)} imports outside the extension: ${specifier}`);
      if (layerOf(target) > layerOf(file)) upward.push(`${relative(EXTENSION, file)} → ${relative(EXTENSION, target)}`);
    }
  }
  assert.deepEqual(upward, []);
});
