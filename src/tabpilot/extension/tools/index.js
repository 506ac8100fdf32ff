// @ts-check
// The one dispatcher table: every method the extension serves, by wire name.
import { sessionStart, sessionStop } from "./navigate/session.js";
import { tabList, tabCreate, tabClose, tabSelect } from "./navigate/tabs.js";
import { tabBorrow, tabReturn } from "./human/borrow.js";
import { navigate, navigateBack, navigateForward, reload } from "./navigate/navigation.js";
import { evaluate } from "./observe/evaluate.js";
import { screenshot, html } from "./observe/observation.js";
import { snapshot, find, text } from "./observe/snapshot.js";
import { consoleEntries } from "./observe/console.js";
import { click, hover, drag } from "./interact/pointer.js";
import { focus, fill, select, check } from "./interact/fields.js";
import { type, press } from "./interact/keyboard.js";
import { scroll } from "./interact/scroll.js";
import { upload } from "./interact/upload.js";
import { wait } from "./interact/wait.js";
import { dialog } from "./interact/dialog.js";
import { requestHelp } from "./human/help.js";
import { downloadsList, downloadsWait } from "./downloads/downloads.js";
import { cookies, storage, stateSave, stateLoad } from "./storage/storage.js";
import { emulate } from "./emulate/emulate.js";
import { pdf } from "./observe/pdf.js";
import { networkRequests, networkRequest, networkRoute, networkUnroute } from "./network/network.js";
import { networkHeaders, networkCredentials } from "./network/shaping.js";
import { initScriptAdd, initScriptList, initScriptRemove } from "./emulate/init-script.js";

/** @type {Readonly<Record<string, import("../link/dispatcher.js").Handler>>} */
export const METHODS = Object.freeze({
  "system.ping": () => ({}),
  "tool.session_start": sessionStart,
  "tool.session_stop": sessionStop,
  "tool.tab_list": tabList,
  "tool.tab_create": tabCreate,
  "tool.tab_close": tabClose,
  "tool.tab_select": tabSelect,
  "tool.tab_borrow": tabBorrow,
  "tool.tab_return": tabReturn,
  "tool.navigate": navigate,
  "tool.navigate_back": navigateBack,
  "tool.navigate_forward": navigateForward,
  "tool.reload": reload,
  "tool.evaluate": evaluate,
  "tool.screenshot": screenshot,
  "tool.snapshot": snapshot,
  "tool.find": find,
  "tool.text": text,
  "tool.html": html,
  "tool.console": consoleEntries,
  "tool.click": click,
  "tool.hover": hover,
  "tool.focus": focus,
  "tool.fill": fill,
  "tool.type": type,
  "tool.press": press,
  "tool.select": select,
  "tool.check": check,
  "tool.scroll": scroll,
  "tool.drag": drag,
  "tool.upload": upload,
  "tool.wait": wait,
  "tool.dialog": dialog,
  "tool.request_help": requestHelp,
  "tool.downloads_list": downloadsList,
  "tool.downloads_wait": downloadsWait,
  "tool.network_requests": networkRequests,
  "tool.network_request": networkRequest,
  "tool.network_route": networkRoute,
  "tool.network_unroute": networkUnroute,
  "tool.network_headers": networkHeaders,
  "tool.network_credentials": networkCredentials,
  "tool.init_script_add": initScriptAdd,
  "tool.init_script_list": initScriptList,
  "tool.init_script_remove": initScriptRemove,
  "tool.cookies": cookies,
  "tool.storage": storage,
  "tool.state_save": stateSave,
  "tool.state_load": stateLoad,
  "tool.emulate": emulate,
  "tool.pdf": pdf,
});
