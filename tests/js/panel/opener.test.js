// The keyboard command and the context-menu item open the side panel inside the gesture: the call is
// made before anything is awaited.
import { test } from "node:test";
import assert from "node:assert/strict";
import { registerPanelOpeners, OPEN_COMMAND, MENU_ITEM } from "../../../src/tabpilot/extension/panel/opener.js";
import { FakeEvent } from "../helpers/fake-event.js";

function setup() {
  const opened = [];
  const created = [];
  const deps = {
    sidePanel: { open: (options) => (opened.push(options), Promise.resolve()) },
    commands: { onCommand: new FakeEvent() },
    contextMenus: { create: (props, done) => (created.push(props), done?.()), onClicked: new FakeEvent() },
    runtime: { onInstalled: new FakeEvent() },
    log: { warn() {} },
  };
  registerPanelOpeners(deps);
  return { deps, opened, created };
}

test("the command and the menu item open the panel of the tab's window synchronously", () => {
  const { deps, opened } = setup();
  deps.commands.onCommand.fire(OPEN_COMMAND, { windowId: 4 });
  assert.deepEqual(opened, [{ windowId: 4 }], "opened before the listener returned");
  deps.contextMenus.onClicked.fire({ menuItemId: MENU_ITEM }, { windowId: 9 });
  assert.deepEqual(opened, [{ windowId: 4 }, { windowId: 9 }]);
  deps.commands.onCommand.fire("something-else", { windowId: 4 });
  deps.contextMenus.onClicked.fire({ menuItemId: "other" }, { windowId: 4 });
  deps.commands.onCommand.fire(OPEN_COMMAND, undefined);
  assert.equal(opened.length, 2);
});

test("the menu item is created on install", () => {
  const { deps, created } = setup();
  deps.runtime.onInstalled.fire();
  assert.equal(created[0].id, MENU_ITEM);
  assert.equal(created[0].title, "Open tabpilot panel");
});

test("the manifest declares the panel, its permission and the command", async () => {
  const { readFileSync } = await import("node:fs");
  const manifest = JSON.parse(readFileSync(new URL("../../../src/tabpilot/extension/manifest.json", import.meta.url), "utf8"));
  assert.ok(manifest.permissions.includes("sidePanel") && manifest.permissions.includes("contextMenus"));
  assert.equal(manifest.side_panel.default_path, "sidepanel/sidepanel.html");
  assert.ok(manifest.commands[OPEN_COMMAND].suggested_key.default);
  assert.equal(manifest.externally_connectable, undefined, "no web page may connect");
});
