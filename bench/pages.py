"""The pages the bench measures: the fixture pages of tests/pages and Debian's Python documentation."""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from tests.e2e.harness import PAGES

DOCS_ROOT = Path("/usr/share/doc/python3/html")
DOCS_PAGES = ("index.html", "library/json.html", "library/stdtypes.html")
DOCS_PACKAGE = "python3-doc"


@dataclass(frozen=True)
class Page:
    """A page to snapshot: `path` on the fixture server or, when `docs`, on the documentation server."""

    path: str
    docs: bool

    @property
    def label(self) -> str:
        return f"docs {self.path}" if self.docs else f"fixture {self.path}"


def fixture_pages() -> list[Page]:
    return [Page(p.name, docs=False) for p in sorted(PAGES.glob("*.html"))]


def docs_pages() -> list[Page]:
    return [Page(path, docs=True) for path in DOCS_PAGES]


def python_docs() -> tuple[Path | None, str]:
    """The documentation root, installing python3-doc with apt when missing and root; else why not."""
    if _docs_present():
        return DOCS_ROOT, f"Python docs from {DOCS_ROOT}"
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        return (
            None,
            f"skipped the Python docs pages: {DOCS_PACKAGE} is not installed (apt-get install {DOCS_PACKAGE})",
        )
    _apt("install", "-y", "-qq", DOCS_PACKAGE)
    if not _docs_present():
        # A fresh machine may have no package lists yet.
        _apt("update", "-qq")
        _apt("install", "-y", "-qq", DOCS_PACKAGE)
    if _docs_present():
        return DOCS_ROOT, f"installed {DOCS_PACKAGE}; Python docs from {DOCS_ROOT}"
    return (
        None,
        f"skipped the Python docs pages: `apt-get install {DOCS_PACKAGE}` did not provide {DOCS_ROOT}",
    )


def _docs_present() -> bool:
    return all((DOCS_ROOT / page).is_file() for page in DOCS_PAGES)


def _apt(*args: str) -> None:
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    subprocess.run(["apt-get", *args], env=env, capture_output=True, timeout=600, check=False)
