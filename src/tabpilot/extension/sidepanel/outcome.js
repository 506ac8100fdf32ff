// @ts-check
// The one-line outcome of a tabpilot call in the timeline, worded like the CLI's own line
// (`clicked button "Sign in" @e1 → navigated to …`), from the result the daemon recorded. The daemon
// clips long results, so a result that no longer parses is read for its label and title only.

const PAST = /** @type {Record<string, string>} */ ({
  click: "clicked",
  hover: "hovered",
  focus: "focused",
  fill: "filled",
  type: "typed into",
  press: "pressed keys in",
  select: "selected in",
  check: "checked",
  scroll: "scrolled",
  drag: "dragged",
  upload: "uploaded to",
});

/** @param {any} target */
function targetText(target) {
  if (!target || typeof target !== "object") return "the element";
  const label = target.label || "element";
  return target.ref ? `${label} @${target.ref}` : label;
}

/** @param {any} result */
function consequences(result) {
  const parts = [];
  const nav = result.navigated;
  if (nav && typeof nav === "object") parts.push(nav.committed === false ? `navigating to ${nav.url}` : `navigated to ${nav.url}`);
  const opened = result.opened_tab;
  if (opened && typeof opened === "object") parts.push(`opened a new tab ${opened.url ?? ""}`.trim());
  const dialog = result.dialog;
  if (dialog && typeof dialog === "object") parts.push(`dialog: ${dialog.type}${dialog.message ? ` "${dialog.message}"` : ""}`);
  return parts.map((p) => ` → ${p}`).join("");
}

/** A JSON string's escapes (`\u00b7`, `\"`) as the characters they stand for. @param {string} s */
function unescapeJson(s) {
  return s.replace(/\\(u[0-9a-fA-F]{4}|["\\/bfnrt])/g, (_, e) =>
    e[0] === "u" ? String.fromCharCode(parseInt(e.slice(1), 16)) : (/** @type {Record<string, string>} */ ({ b: "\b", f: "\f", n: " ", r: " ", t: " " })[e] ?? e),
  );
}

/** @param {string} text */
function firstLine(text) {
  const line = text.split("\n").find((l) => l.trim() !== "") ?? "";
  return line.length > 200 ? `${line.slice(0, 199)}…` : line;
}

/**
 * @param {string} name the tool's verb (`click`, `snapshot`, … or an agent tool such as `Bash`)
 * @param {string} source "tabpilot" for the calls the daemon made, "agent" for the agent's own tools
 * @param {unknown} summary
 */
export function outcomeLine(name, source, summary) {
  const text = typeof summary === "string" ? summary : summary === undefined || summary === null ? "" : JSON.stringify(summary);
  if (source !== "tabpilot") return firstLine(text);
  /** @type {any} */
  let result = null;
  try {
    result = JSON.parse(text);
  } catch {
    result = null;
  }
  if (result === null || typeof result !== "object") {
    // Clipped: what it acted on, if that much survived.
    const label = /"label":"((?:[^"\\]|\\.)*)"/.exec(text)?.[1];
    const title = /"title":"((?:[^"\\]|\\.)*)"/.exec(text)?.[1];
    // What it read, as far as the clip kept it (a string cut short has no closing quote).
    const read = /"text":"((?:[^"\\]|\\.)*)/.exec(text)?.[1];
    if (label && PAST[name]) return `${PAST[name]} ${unescapeJson(label)}`;
    if (title !== undefined && (name === "snapshot" || name === "text")) return `read "${unescapeJson(title)}"`;
    if (read !== undefined) return firstLine(unescapeJson(read));
    return firstLine(unescapeJson(text.replace(/"tab_id":\d+,?/g, "")));
  }
  if (PAST[name]) return `${PAST[name]} ${targetText(result.target)}${consequences(result)}`;
  if (name === "snapshot" || name === "text" || name === "find") {
    const refs = typeof result.refs === "number" ? `, ${result.refs} refs` : "";
    return `read "${result.title ?? result.url ?? "the page"}"${refs}`;
  }
  if (typeof result.url === "string") return `${name === "navigate" || name === "open" ? "at" : "on"} ${result.url}${consequences(result)}`;
  const answered = result.answered;
  if (answered && typeof answered === "object") {
    const what = `${answered.type ?? ""} dialog${answered.message ? ` "${answered.message}"` : ""}`.trim();
    return `${answered.handled === "dismissed" ? "dismissed" : "accepted"} the ${what}`;
  }
  // Whatever else it answered, without the ids that mean nothing to the person.
  const { tab_id: _tab, session: _session, ...rest } = result;
  return firstLine(JSON.stringify(rest));
}
