"""Which extension methods a CLI/MCP client may call through the daemon."""

from __future__ import annotations

from tabpilot.protocol import EXTENSION_METHODS

# Called by the daemon itself, with state only it holds (which session owns which window).
INTERNAL_TOOLS = frozenset({"tool.session_start", "tool.session_stop"})
# Page, tab and person tools: the verbs of the CLI and MCP server (every tool the extension serves but those).
PUBLIC_TOOLS = frozenset(m for m in EXTENSION_METHODS if m.startswith("tool.")) - INTERNAL_TOOLS
