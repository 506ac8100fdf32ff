"""``cookies``, ``storage`` and ``state``: the current site's cookies, the page's Web Storage, and a
managed browser's login state saved to and loaded from a Playwright storage-state file."""

from __future__ import annotations

import argparse
import json

from tabpilot.cli.files import out_path, write_private
from tabpilot.cli.render import counted, fence
from tabpilot.cli.values import Count
from tabpilot.protocol import RpcError

# typing is for checkers only (see tabpilot/protocol.py).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from tabpilot.cli.context import Context

MAX_STATE_BYTES = 20 * 1024 * 1024


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    """Add this family's verbs to the parser."""
    p = sub.add_parser(
        "cookies",
        parents=[common],
        help="list, get, set or clear the current tab's site's cookies",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="""\
Only the cookies the current tab's page would send. Values of HttpOnly cookies (and, in your own
browser, of every cookie) are hidden unless --show-secrets.

  tabpilot cookies                       NAME=VALUE domain path flags, one per line
  tabpilot cookies get sid --show-secrets
  tabpilot cookies set lang en --path / --secure --http-only --expires 1767225600
  tabpilot cookies clear [NAME]""",
    )
    p.add_argument("action", nargs="?", choices=("list", "get", "set", "clear"), default="list")
    p.add_argument("name", nargs="?", metavar="NAME", help="get/set/clear: the cookie")
    p.add_argument("value", nargs="?", metavar="VALUE", help="set: its value")
    p.add_argument("--domain", help="set: the site's domain or a parent of it (default: the host only)")
    p.add_argument("--path", help="set: its path (default /)")
    p.add_argument("--secure", action="store_true", help="set: https only")
    p.add_argument("--http-only", action="store_true", help="set: hidden from the page's scripts")
    p.add_argument(
        "--expires", type=Count(1), metavar="EPOCH_S", help="set: when it expires (default: session)"
    )
    p.add_argument("--same-site", choices=("Strict", "Lax", "None"), help="set: SameSite")
    p.add_argument(
        "--show-secrets", action="store_true", help="show HttpOnly (and your own browser's) values"
    )
    p.set_defaults(handler=cmd_cookies)

    p = sub.add_parser(
        "storage",
        parents=[common],
        help="list, get, set or clear the page's localStorage or sessionStorage",
        description="The current page's origin only: storage local|session [list|get KEY|set KEY VALUE|clear [KEY]].",
    )
    p.add_argument("area", choices=("local", "session"), help="localStorage or sessionStorage")
    p.add_argument("action", nargs="?", choices=("list", "get", "set", "clear"), default="list")
    p.add_argument("key", nargs="?", metavar="KEY")
    p.add_argument("value", nargs="?", metavar="VALUE")
    p.set_defaults(handler=cmd_storage)

    p = sub.add_parser(
        "state",
        parents=[common],
        help="save or load cookies and localStorage (a managed browser's login) as a storage-state file",
        description="state save FILE writes the browser's cookies and the localStorage of the session's "
        "open origins as Playwright's storage-state JSON; state load FILE sets them (localStorage for the "
        "origins the session's tabs show: open one first). Managed browsers only (`tabpilot browser "
        "launch`): your own profile's logins never leave this way. The file holds secrets: keep it private.",
    )
    p.add_argument("action", choices=("save", "load"))
    p.add_argument("file", metavar="FILE")
    p.set_defaults(handler=cmd_state)


def _need(value: str | None, what: str, verb: str) -> str:
    if value is None:
        raise RpcError(
            "invalid_params", f"{verb} needs {what}", hint=f"see `tabpilot {verb.split()[0]} --help`"
        )
    return value


# RFC 6265: a name is a token, a value holds no separator a Cookie header would split on.
_NAME_REFUSED = frozenset('()<>@,;:\\"/[]?={} \t')
_VALUE_REFUSED = frozenset(';,"\\ \t')


def _cookie_part(text: str, what: str, refused: frozenset[str]) -> str:
    bad = sorted({ch for ch in text if ch in refused or ord(ch) < 32 or ord(ch) >= 127})
    if bad:
        shown = " ".join(repr(ch) for ch in bad)
        raise RpcError(
            "invalid_params",
            f"a cookie {what} cannot hold {shown}",
            hint="use letters, digits and -._~ (percent-encode anything else, e.g. %3B for ;)",
        )
    return text


def cookie_line(c: dict[str, Any]) -> str:
    """``sid=(hidden…) 127.0.0.1 / HttpOnly Secure``"""
    flags = [f for f, on in (("HttpOnly", c.get("http_only")), ("Secure", c.get("secure"))) if on]
    if c.get("same_site"):
        flags.append(f"SameSite={c['same_site']}")
    return " ".join([f"{c['name']}={c['value']}", str(c.get("domain")), str(c.get("path")), *flags])


def cmd_cookies(args: argparse.Namespace, ctx: Context) -> int:
    params: dict[str, Any] = {"action": args.action, "show_secrets": bool(args.show_secrets)}
    if args.action in ("get", "set"):
        params["name"] = _need(args.name, "a NAME", f"cookies {args.action}")
    if args.action == "set":
        _cookie_part(params["name"], "name", _NAME_REFUSED)
        if not params["name"]:
            raise RpcError("invalid_params", "the cookie name is empty", hint="give a NAME, e.g. lang")
        _cookie_part(_need(args.value, "a VALUE", "cookies set"), "value", _VALUE_REFUSED)
    elif args.name is not None:
        params["name"] = args.name
    if args.action == "set":
        params["value"] = _need(args.value, "a VALUE", "cookies set")
        for key in ("domain", "path", "expires", "same_site"):
            if getattr(args, key) is not None:
                params[key] = getattr(args, key)
        params.update(secure=bool(args.secure), http_only=bool(args.http_only))
    elif args.value is not None:
        raise RpcError(
            "invalid_params", f"cookies {args.action} takes no VALUE", hint="see `tabpilot cookies --help`"
        )
    result = ctx.tool("tool.cookies", params)
    if args.action == "clear":
        n = result.get("cleared", 0)
        return ctx.emit(result, f"cleared {n} cookie{'' if n == 1 else 's'} of {result.get('url')}")
    lines = [cookie_line(c) for c in result.get("cookies", [])]
    if args.action == "set":
        return ctx.emit(
            result, "set " + (lines[0] if lines else f"{args.name} (the browser did not keep it)")
        )
    # Names and values are the site's words: fenced like every page text.
    text = fence("\n".join(lines), ctx.nonce(result)) if lines else f"no cookies for {result.get('url')}"
    return ctx.emit(result, text)


def cmd_storage(args: argparse.Namespace, ctx: Context) -> int:
    params: dict[str, Any] = {"area": args.area, "action": args.action}
    if args.action in ("get", "set"):
        params["key"] = _need(args.key, "a KEY", f"storage {args.action}")
    elif args.key is not None:
        params["key"] = args.key
    if args.action == "set":
        params["value"] = _need(args.value, "a VALUE", "storage set")
    result = ctx.tool("tool.storage", params)
    name = f"{args.area}Storage of {result.get('origin')}"
    if args.action == "get":
        value = result.get("value")
        return ctx.emit(
            result, fence(value, ctx.nonce(result)) if value is not None else f"({args.key} is not in {name})"
        )
    if args.action == "set":
        return ctx.emit(result, f"set {args.key} in {name}")
    if args.action == "clear":
        return ctx.emit(result, f"cleared {args.key if args.key else 'everything'} in {name}")
    items = result.get("items", [])
    lines = [f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in items]
    return ctx.emit(result, fence("\n".join(lines), ctx.nonce(result)) if lines else f"({name} is empty)")


def cmd_state(args: argparse.Namespace, ctx: Context) -> int:
    import os

    path = os.path.abspath(args.file)
    if args.action == "save":
        path = out_path(args.file)
        result = ctx.tool("tool.state_save", {})
        state = result.pop("state")
        write_private(path, json.dumps(state, ensure_ascii=False, indent=1))
        result.update(
            path=path, cookies=len(state["cookies"]), origins=[o["origin"] for o in state["origins"]]
        )
        return ctx.emit(
            result,
            f"{path}\n{counted(result['cookies'], 'cookie')}, localStorage of {counted(len(state['origins']), 'origin')}",
        )
    try:
        with open(path, encoding="utf-8") as handle:
            state = json.loads(handle.read(MAX_STATE_BYTES))
    except OSError as err:
        raise RpcError(
            "invalid_params",
            f"cannot read {args.file}: {err.strerror}",
            hint="give a file from `tabpilot state save`",
        ) from None
    except ValueError:
        raise RpcError(
            "invalid_params", f"{args.file} is not JSON", hint="give a file from `tabpilot state save`"
        ) from None
    except RecursionError:
        raise RpcError(
            "invalid_params",
            f"{args.file} nests too deeply to be a saved state",
            hint="give a file from `tabpilot state save`",
        ) from None
    result = ctx.tool("tool.state_load", {"state": state})
    skipped = result.get("skipped_origins") or []
    cookies, origins = (
        counted(result.get("cookies", 0), "cookie"),
        counted(len(result.get("origins", [])), "origin"),
    )
    line = f"loaded {cookies} and localStorage of {origins}"
    if skipped:
        line += f" (not open in this session, skipped: {', '.join(skipped)})"
    return ctx.emit(result, line)
