"""``network``: the current tab's requests, one request's headers and body, routes that answer requests
with the agent's own response (or abort them), and a HAR file of what was recorded."""

from __future__ import annotations

import argparse
import json

from tabpilot.cli import shaping_commands
from tabpilot.cli.context import Context
from tabpilot.cli.files import out_path, write_private
from tabpilot.cli.render import counted, fence
from tabpilot.cli.values import Count
from tabpilot.protocol import RpcError

# typing is for checkers only (see tabpilot/protocol.py).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

TYPES = ("document", "fetch", "xhr", "script", "stylesheet", "image", "font", "media", "websocket", "other")
DEFAULT_BODY_BYTES = 64 * 1024
MAX_ROUTE_BODY = 5 * 1024 * 1024
HAR_LIMIT = 500


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    """Add this family's verbs to the parser."""
    network = sub.add_parser(
        "network",
        parents=[common],
        help="the current tab's requests, their bodies, routes that mock or abort them, HAR export, "
        "extra headers and credentials per origin",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="""\
Requests are recorded from the moment tabpilot first touches a tab (reload to see a page's first ones).
Authorization, Cookie and Set-Cookie values are hidden unless --show-secrets.

  tabpilot network requests --type fetch          #N METHOD STATUS TYPE SIZE TIME URL, one per line
  tabpilot network request 12 --body              one request's headers and response body
  tabpilot network route '*/api/items*' --status 200 --body '{"items":[]}' --content-type application/json
  tabpilot network route ads.example --abort      matching requests fail (a pattern without * matches
                                                  URLs that contain it; * is any run, ? one character)
  tabpilot network unroute                        remove the session's routes (all, or one PATTERN)
  tabpilot network har --out run.har              what was recorded, as a HAR 1.2 file
  tabpilot network headers https://api.example.com 'X-Api-Key: abc'
                                                  every request to that origin carries the header
  tabpilot network credentials https://intranet.example.com alice:s3cret
                                                  HTTP basic credentials for that origin only""",
    )
    verbs = network.add_subparsers(
        dest="network_verb", metavar="{requests,request,route,unroute,har,headers,credentials}"
    )
    verbs.required = True

    p = verbs.add_parser("requests", parents=[common], help="list the current tab's requests")
    p.add_argument("--filter", metavar="TEXT", help="only URLs containing TEXT")
    p.add_argument("--type", metavar="TYPE[,TYPE]", help=f"only these types ({', '.join(TYPES)})")
    p.add_argument("--since", type=Count(), metavar="N", help="only requests after number N")
    p.add_argument(
        "--limit", type=Count(1, HAR_LIMIT), metavar="N", help="at most N (the latest; default 100)"
    )
    p.set_defaults(handler=cmd_requests)

    p = verbs.add_parser("request", parents=[common], help="one request's headers (and body with --body)")
    p.add_argument("id", type=Count(1), metavar="ID", help="its number in `network requests`")
    p.add_argument("--body", action="store_true", help="print the response body too")
    p.add_argument(
        "--max-bytes",
        type=Count(0, 100_000_000),
        metavar="N",
        help=f"cut the body after N bytes (default {DEFAULT_BODY_BYTES:,}; 0 = no limit)",
    )
    p.add_argument("--out", metavar="FILE", help="write the whole body to FILE")
    p.add_argument("--show-secrets", action="store_true", help="show Authorization/Cookie/Set-Cookie values")
    p.set_defaults(handler=cmd_request)

    p = verbs.add_parser("route", parents=[common], help="answer matching requests yourself, or abort them")
    p.add_argument(
        "pattern", metavar="PATTERN", help="URL pattern: * any run, ? one character; no * = contains"
    )
    p.add_argument(
        "--status", type=Count(100, 599), default=200, metavar="N", help="HTTP status (default 200)"
    )
    what = p.add_mutually_exclusive_group(required=True)
    what.add_argument("--body", metavar="TEXT", help="the response body")
    what.add_argument("--file", metavar="FILE", help="the response body, from a file")
    what.add_argument("--abort", action="store_true", help="fail matching requests instead")
    p.add_argument("--content-type", metavar="TYPE", help="Content-Type (default text/plain)")
    p.set_defaults(handler=cmd_route)

    p = verbs.add_parser("unroute", parents=[common], help="remove the session's routes (or one)")
    p.add_argument("pattern", nargs="?", metavar="PATTERN", help="only this route")
    p.set_defaults(handler=cmd_unroute)

    p = verbs.add_parser("har", parents=[common], help="write the current tab's requests as a HAR file")
    p.add_argument("--out", metavar="FILE", required=True, help="where to write the HAR")
    p.add_argument("--show-secrets", action="store_true", help="keep Authorization/Cookie/Set-Cookie values")
    p.set_defaults(handler=cmd_har)
    shaping_commands.register_verbs(verbs, common)


def _size(n: Any) -> str:
    if not isinstance(n, int):
        return "-"
    return f"{n} B" if n < 1024 else f"{n / 1024:.1f} kB" if n < 1024 * 1024 else f"{n / 1048576:.1f} MB"


def request_line(e: dict[str, Any]) -> str:
    """``#3 GET 200 fetch 1.2 kB 12 ms http://…/api/items``"""
    status = f"failed ({e['failed']})" if e.get("failed") else str(e.get("status") or "…")
    if e.get("download"):
        status += " download"
    ms = f"{e['ms']} ms" if isinstance(e.get("ms"), int) else "-"
    return f"#{e['seq']} {e['method']} {status} {e['type']} {_size(e.get('bytes'))} {ms} {e['url']}"


def cmd_requests(args: argparse.Namespace, ctx: Context) -> int:
    params: dict[str, Any] = {}
    if args.filter:
        params["filter"] = args.filter
    if args.type:
        types = [t.strip().lower() for t in args.type.split(",") if t.strip()]
        unknown = [t for t in types if t not in TYPES]
        if unknown:
            raise RpcError(
                "invalid_params", f"unknown type {unknown[0]!r}", hint=f"pick from {', '.join(TYPES)}"
            )
        params["types"] = types
    if args.since is not None:
        params["since"] = args.since
    if args.limit:
        params["limit"] = args.limit
    result = ctx.tool("tool.network_requests", params)
    listed = [request_line(e) for e in result.get("entries", [])]
    # URLs are the page's words: fenced like every page text.
    lines = [fence("\n".join(listed), ctx.nonce(result))] if listed else []
    if result.get("more"):
        lines.insert(0, f"({result['more']} earlier requests not shown: --since or --limit)")
    if not lines:
        lines.append(f"no requests recorded yet (read on later with --since {result.get('next_since', 0)})")
    return ctx.emit(result, "\n".join(lines))


def cmd_request(args: argparse.Namespace, ctx: Context) -> int:
    out = out_path(args.out) if args.out else None
    params: dict[str, Any] = {
        "id": args.id,
        "body": bool(args.body or out),
        "show_secrets": bool(args.show_secrets),
    }
    if out:
        params["max_bytes"] = 0
    elif args.max_bytes is not None:
        params["max_bytes"] = args.max_bytes
    result = ctx.tool("tool.network_request", params)
    head = request_line(result)
    lines = [head, *(f"> {k}: {v}" for k, v in result.get("request_headers", {}).items())]
    lines += [f"< {k}: {v}" for k, v in result.get("response_headers", {}).items()]
    if "body" in result:
        import base64

        raw = result["body"]
        data = base64.b64decode(raw) if result.get("body_base64") else raw.encode()
        if out:
            write_private(out, data)
            result.pop("body")
            result["path"] = out
            lines.append(f"body: {len(data):,} bytes → {out}")
        else:
            text = (
                data.decode("utf-8", errors="replace")
                if not result.get("body_base64")
                else f"({len(data):,} bytes of binary: use --out FILE)"
            )
            lines += ["", text]
            if result.get("body_truncated"):
                lines.append(
                    f"(cut at {len(data):,} of {result['body_bytes']:,} bytes: --max-bytes 0 or --out FILE)"
                )
    return ctx.emit(result, fence("\n".join(lines), ctx.nonce(result)))


def cmd_route(args: argparse.Namespace, ctx: Context) -> int:
    params: dict[str, Any] = {"pattern": args.pattern, "status": args.status, "abort": bool(args.abort)}
    if args.file:
        import base64

        try:
            with open(args.file, "rb") as handle:
                data = handle.read(MAX_ROUTE_BODY + 1)
        except OSError as err:
            raise RpcError(
                "invalid_params", f"cannot read {args.file}: {err.strerror}", hint="give a readable file"
            ) from None
        if len(data) > MAX_ROUTE_BODY:
            raise RpcError(
                "invalid_params",
                f"{args.file} is larger than {MAX_ROUTE_BODY:,} bytes",
                hint="give a smaller body",
            )
        params.update(body=base64.b64encode(data).decode(), body_base64=True)
    elif args.body is not None:
        params["body"] = args.body
    if args.content_type:
        params["content_type"] = args.content_type
    result = ctx.tool("tool.network_route", params)
    if args.abort:
        what = "abort"
    elif args.file:
        what = f"{args.status} with {args.file}"
    else:
        what = f"{args.status} with {len(args.body.encode()):,} bytes"
    return ctx.emit(
        result,
        f"routed {args.pattern} → {what} ({counted(len(result.get('routes', [])), 'route')} in this session)",
    )


def cmd_unroute(args: argparse.Namespace, ctx: Context) -> int:
    params: dict[str, Any] = {"pattern": args.pattern} if args.pattern else {}
    result = ctx.tool("tool.network_unroute", params)
    n = result.get("removed", 0)
    return ctx.emit(result, f"removed {counted(n, 'route')} ({len(result.get('routes', []))} left)")


def _har_headers(headers: dict[str, str]) -> list[dict[str, str]]:
    return [{"name": k, "value": v} for k, v in headers.items()]


def har_of(entries: list[dict[str, Any]]) -> dict[str, Any]:
    """HAR 1.2 from recorded requests."""
    import datetime
    import urllib.parse

    out = []
    for e in entries:
        query = urllib.parse.parse_qsl(urllib.parse.urlsplit(e["url"]).query, keep_blank_values=True)
        started = (
            datetime.datetime.fromtimestamp(e["time"] / 1000, datetime.UTC).isoformat().replace("+00:00", "Z")
        )
        ms = e.get("ms") if isinstance(e.get("ms"), int) else 0
        request: dict[str, Any] = {
            "method": e["method"],
            "url": e["url"],
            "httpVersion": e.get("protocol") or "HTTP/1.1",
            "headers": _har_headers(e.get("request_headers", {})),
            "queryString": [{"name": k, "value": v} for k, v in query],
            "cookies": [],
            "headersSize": -1,
            "bodySize": len((e.get("post_data") or "").encode()),
        }
        if e.get("post_data"):
            request["postData"] = {
                "mimeType": e.get("request_headers", {}).get("Content-Type", ""),
                "text": e["post_data"],
            }
        out.append(
            {
                "startedDateTime": started,
                "time": ms,
                "request": request,
                "response": {
                    "status": e.get("status") or 0,
                    "statusText": e.get("status_text") or (e.get("failed") or ""),
                    "httpVersion": e.get("protocol") or "HTTP/1.1",
                    "headers": _har_headers(e.get("response_headers", {})),
                    "cookies": [],
                    "content": {"size": e.get("bytes") or 0, "mimeType": e.get("mime") or ""},
                    "redirectURL": e.get("response_headers", {}).get("location", ""),
                    "headersSize": -1,
                    "bodySize": e.get("bytes") if isinstance(e.get("bytes"), int) else -1,
                },
                "cache": {},
                "timings": {"send": 0, "wait": ms, "receive": 0},
                "_resourceType": e["type"],
            }
        )
    return {
        "log": {
            "version": "1.2",
            "creator": {"name": "tabpilot", "version": "1"},
            "pages": [],
            "entries": out,
        }
    }


def cmd_har(args: argparse.Namespace, ctx: Context) -> int:
    out = out_path(args.out)
    params = {"detail": True, "limit": HAR_LIMIT, "show_secrets": bool(args.show_secrets)}
    result = ctx.tool("tool.network_requests", params)
    entries = result.pop("entries", [])
    write_private(out, json.dumps(har_of(entries), ensure_ascii=False))
    result.update(path=out, requests=len(entries))
    return ctx.emit(result, f"{out}\n{counted(len(entries), 'request')} of {result.get('url', 'the tab')}")
