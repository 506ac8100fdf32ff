// @ts-check
// The keyboard command and the context-menu item that open the side panel. chrome.sidePanel.open needs
// the person's gesture, and the first await would spend it: the call comes first, before anything else.

export const OPEN_COMMAND = "open-side-panel";
export const MENU_ITEM = "tabpilot-open-panel";

/**
 * @param {{
 *   sidePanel: {open(options: {windowId: number}): Promise<void>},
 *   commands: {onCommand: {addListener(fn: (command: string, tab?: {windowId?: number}) => void): void}},
 *   contextMenus: {create(props: object, done?: () => void): unknown, onClicked: {addListener(fn: (info: {menuItemId: string | number}, tab?: {windowId?: number}) => void): void}},
 *   runtime: {onInstalled: {addListener(fn: () => void): void}, lastError?: unknown},
 *   log?: Pick<Console, "warn">,
 * }} deps
 */
export function registerPanelOpeners({ sidePanel, commands, contextMenus, runtime, log = console }) {
  /** @param {{windowId?: number} | undefined} tab */
  const open = (tab) => {
    if (tab?.windowId === undefined || tab.windowId < 0) return;
    sidePanel.open({ windowId: tab.windowId }).catch((err) => log.warn("tabpilot: cannot open the side panel", err));
  };
  commands.onCommand.addListener((command, tab) => {
    if (command === OPEN_COMMAND) open(tab);
  });
  contextMenus.onClicked.addListener((info, tab) => {
    if (info.menuItemId === MENU_ITEM) open(tab);
  });
  runtime.onInstalled.addListener(() => {
    // Reading lastError marks a "duplicate id" (an update over an install) as handled.
    contextMenus.create({ id: MENU_ITEM, title: "Open tabpilot panel", contexts: ["page", "selection", "link", "action"] }, () => void runtime.lastError);
  });
}
