"""``pdf``: the current page printed to a PDF file."""

from __future__ import annotations

import argparse
import os
import time

from tabpilot import paths
from tabpilot.cli.context import parse_duration
from tabpilot.cli.files import out_path, write_private

# typing is for checkers only (see tabpilot/protocol.py).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from tabpilot.cli.context import Context


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    """Add this family's verbs to the parser."""
    p = sub.add_parser(
        "pdf",
        parents=[common],
        help="print the current page to a PDF file and print its path",
        description="Print the current page as the browser would (backgrounds included) to FILE, by "
        "default $TABPILOT_HOME/pdf/SESSION-TIME.pdf. Managed headless browsers always can; a browser "
        "that cannot answers `unsupported` with a hint.",
    )
    p.add_argument("--out", metavar="FILE", help="where to write the PDF")
    p.add_argument("--landscape", action="store_true", help="landscape pages")
    p.add_argument("--timeout", type=parse_duration, help="give up after this long (default 30s)")
    p.set_defaults(handler=cmd_pdf)


def cmd_pdf(args: argparse.Namespace, ctx: Context) -> int:
    import base64

    if args.out:
        out = out_path(args.out)
    else:
        folder = os.path.join(paths.home(), "pdf")
        os.makedirs(folder, mode=0o700, exist_ok=True)
        out = os.path.join(folder, f"{ctx.session or 'default'}-{time.strftime('%Y%m%d-%H%M%S')}.pdf")
    result = ctx.tool("tool.pdf", {"landscape": bool(args.landscape)})
    data = base64.b64decode(result.pop("data"))
    write_private(out, data)
    result.update(path=out, bytes=len(data))
    return ctx.emit(result, f"{out}\n{len(data):,} bytes of PDF of {result.get('url', 'the page')}")
