"""Which extension methods a CLI/MCP client may call through the daemon."""

from __future__ import annotations

# Page, tab and person tools: the verbs of the CLI and MCP server.
PUBLIC_TOOLS = frozenset(
    {
        "tool.check",
        "tool.click",
        "tool.console",
        "tool.dialog",
        "tool.drag",
        "tool.evaluate",
        "tool.fill",
        "tool.find",
        "tool.focus",
        "tool.hover",
        "tool.html",
        "tool.navigate",
        "tool.navigate_back",
        "tool.navigate_forward",
        "tool.press",
        "tool.reload",
        "tool.request_help",
        "tool.screenshot",
        "tool.scroll",
        "tool.select",
        "tool.snapshot",
        "tool.tab_borrow",
        "tool.tab_close",
        "tool.tab_create",
        "tool.tab_list",
        "tool.tab_return",
        "tool.tab_select",
        "tool.text",
        "tool.type",
        "tool.upload",
        "tool.wait",
        "tool.downloads_list",
        "tool.downloads_wait",
        "tool.network_requests",
        "tool.network_request",
        "tool.network_route",
        "tool.network_unroute",
        "tool.cookies",
        "tool.storage",
        "tool.state_save",
        "tool.state_load",
        "tool.emulate",
        "tool.pdf",
    }
)
# Called by the daemon itself, with state only it holds (which session owns which window).
INTERNAL_TOOLS = frozenset({"tool.session_start", "tool.session_stop"})
