"""``emulate``: a device, viewport, user agent, geolocation, timezone, locale, colour scheme or offline
for the current tab, until ``--reset``, the session's end, or the borrowed tab's return."""

from __future__ import annotations

import argparse
import re

from tabpilot.cli.devices import catalogue, device
from tabpilot.cli.values import Count, OneLine

# typing is for checkers only (see tabpilot/protocol.py).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from tabpilot.cli.context import Context


def viewport(text: str) -> dict[str, int]:
    """``390x844`` → width and height in CSS pixels."""
    parts = text.lower().split("x")
    size = Count(1, 10000)
    if len(parts) != 2:
        raise argparse.ArgumentTypeError(f"{text!r} is not WIDTHxHEIGHT (e.g. 390x844)")
    return {"width": size(parts[0]), "height": size(parts[1])}


def latlon(text: str) -> dict[str, float]:
    """``48.85,2.35`` → latitude and longitude."""
    try:
        lat, lon = (float(p) for p in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not LAT,LON (e.g. 48.85,2.35)") from None
    if not (abs(lat) <= 90 and abs(lon) <= 180):
        raise argparse.ArgumentTypeError("latitude is -90…90 and longitude -180…180")
    return {"latitude": lat, "longitude": lon}


def dpr(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 < value <= 10:
        raise argparse.ArgumentTypeError(f"{text!r} is not a device pixel ratio (0 to 10, e.g. 2 or 2.625)")
    return value


def locale(text: str) -> str:
    """A BCP 47 tag's shape (the browser decides whether it knows it)."""
    if not re.fullmatch(r"[A-Za-z]{2,8}(-[A-Za-z0-9]{1,8})*", text):
        raise argparse.ArgumentTypeError(f"{text!r} is not a locale (e.g. fr-FR, en-US, de)")
    return text


viewport.json_type = latlon.json_type = locale.json_type = "string"  # type: ignore[attr-defined]
dpr.json_type = "number"  # type: ignore[attr-defined]


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    """Add this family's verbs to the parser."""
    p = sub.add_parser(
        "emulate",
        parents=[common],
        help="emulate a device, viewport, user agent, place, timezone, locale, colour scheme or offline in this tab",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=f"""\
Settings stay on the current tab (across navigations) until --reset, `session stop`, or, for a
borrowed tab, `tab return`: the person gets their tab back as it was.

  tabpilot emulate --viewport 390x844 --mobile     a phone-sized page with a mobile user agent
  tabpilot emulate --device "iPhone 15 Pro"        any of {len(catalogue())} devices (--list-devices), any spelling
  tabpilot emulate --user-agent "MyBot/1.0"        the user agent pages and servers see
  tabpilot emulate --geolocation 48.85,2.35 --timezone Europe/Paris --locale fr-FR
                                                   the page's site may know where it is (until --reset
                                                   or `session stop`); navigator.language, Intl and
                                                   the Accept-Language header say fr-FR
  tabpilot emulate --color-scheme dark --offline
  tabpilot emulate --reset                         everything back to the browser's own""",
    )
    size = p.add_mutually_exclusive_group()
    size.add_argument("--viewport", type=viewport, metavar="WxH", help="the page's size in CSS pixels")
    size.add_argument(
        "--device",
        type=device,
        metavar="NAME",
        help="a device's size, pixel ratio, touch and user agent (e.g. 'iPhone 15 Pro', pixel-7)",
    )
    size.add_argument("--list-devices", action="store_true", help="list the devices --device knows")
    p.add_argument("--dpr", type=dpr, metavar="N", help="with --viewport: device pixel ratio (default 1)")
    p.add_argument(
        "--mobile", action="store_true", help="with --viewport: mobile layout, touch and user agent"
    )
    p.add_argument(
        "--user-agent", type=OneLine(512), metavar="UA", help="the user agent the page and its servers see"
    )
    p.add_argument("--geolocation", type=latlon, metavar="LAT,LON", help="where the page thinks it is")
    p.add_argument("--timezone", metavar="TZ", help="an IANA timezone, e.g. America/New_York")
    p.add_argument("--locale", type=locale, metavar="L", help="a locale (BCP 47), e.g. fr-FR")
    p.add_argument("--color-scheme", choices=("dark", "light"), help="prefers-color-scheme")
    net = p.add_mutually_exclusive_group()
    net.add_argument("--offline", action="store_true", help="the network is down for this tab")
    net.add_argument("--online", action="store_true", help="the network is back")
    p.add_argument("--reset", action="store_true", help="undo every emulation on this tab")
    p.set_defaults(handler=cmd_emulate)


def cmd_emulate(args: argparse.Namespace, ctx: Context) -> int:
    from tabpilot.protocol import RpcError

    if args.list_devices:
        devices = list(catalogue().values())
        lines = [
            f"{d.name}  {d.viewport[0]}x{d.viewport[1]} dpr {d.dpr:g}{'  mobile' if d.mobile else ''}{'  touch' if d.touch else ''}"
            for d in devices
        ]
        listed = [
            {"name": d.name, "viewport": f"{d.viewport[0]}x{d.viewport[1]}", "dpr": d.dpr, "mobile": d.mobile}
            for d in devices
        ]
        return ctx.emit({"devices": listed}, "\n".join(lines))
    params: dict[str, Any] = {}
    if args.reset:
        params["reset"] = True
    if (args.dpr is not None or args.mobile) and not args.viewport:
        raise RpcError(
            "invalid_params", "--dpr and --mobile go with --viewport", hint="e.g. --viewport 390x844 --mobile"
        )
    if args.viewport:
        params.update(viewport=args.viewport, mobile=bool(args.mobile))
        if args.dpr is not None:
            params["dpr"] = args.dpr
    if args.device:
        params.update(args.device.params())
    for key in ("user_agent", "geolocation", "timezone", "locale", "color_scheme"):
        if getattr(args, key) is not None:
            params[key] = getattr(args, key)
    if args.offline or args.online:
        params["offline"] = bool(args.offline)
    if not params:
        raise RpcError("invalid_params", "nothing to emulate", hint="see `tabpilot emulate --help`")
    if args.reset and len(params) > 1:
        raise RpcError("invalid_params", "--reset goes alone", hint="reset first, then emulate what you need")
    result = ctx.tool("tool.emulate", params)
    if result.get("reset"):
        return ctx.emit(result, f"tab {result['tab_id']}: emulation reset")
    parts = []
    for key, value in result.get("emulating", {}).items():
        if key == "offline":
            parts.append("offline" if value else "online")
        elif value is True:
            parts.append(key)
        elif value is not False:
            parts.append(f"{key.replace('_', '-')} {value}")
    shown = ", ".join(parts)
    return ctx.emit(result, f"tab {result['tab_id']} emulates {shown}")
