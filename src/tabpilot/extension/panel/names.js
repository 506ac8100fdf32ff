// @ts-check
// Names the worker's panel bridge and the panel page share (kept apart, so the page loads nothing else
// of the worker's).

export const PANEL_PORT = "tabpilot-panel";
export const PANEL_PAGE = "sidepanel/sidepanel.html";
