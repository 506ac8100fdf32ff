"""The `tabpilot` command after its two small scripts (bin/tabpilot, bin/tabpilot-launcher): installed
at the top of site-packages, so its bytecode is cached, unlike a script's.

Started without `site`, it adds what `site` would have added for this venv — site-packages and the
path lines of its .pth files — and runs the hot path; the full CLI gets the real `site` first. When
the venv is not plain (it also sees the system's packages, or a .pth line is not a plain absolute
path), `site` runs at once. An editable install holds a copy of this file: after changing it, run
scripts/bootstrap again.
"""

import sys


def _site() -> None:
    import site

    site.main()


def _plain(path: str) -> bool:
    """An absolute path that os.path.abspath leaves as it is."""
    return (
        path[:1] == "/"
        and "//" not in path
        and "/./" not in path
        and "/../" not in path
        and not path.endswith(("/", "/.", "/.."))
    )


def venv_paths() -> list | None:
    """What `site` adds to sys.path for the plain venv of this interpreter, in its order; None when unsure."""
    import posix

    root = sys.executable.rpartition("/")[0].rpartition("/")[0]
    try:
        with open(root + "/pyvenv.cfg", "rb") as handle:
            config = handle.read().decode()
    except (OSError, ValueError):
        return None
    for line in config.splitlines():
        key, _, value = line.partition("=")
        if key.strip().lower() == "include-system-site-packages" and value.strip().lower() != "false":
            return None
    version = f"python{sys.version_info[0]}.{sys.version_info[1]}"
    found = []
    for lib in [sys.platlibdir] + (["lib"] if sys.platlibdir != "lib" else []):
        site_packages = f"{root}/{lib}/{version}/site-packages"
        try:
            names = sorted(name for name in posix.listdir(site_packages) if name.endswith(".pth"))
        except OSError:
            continue
        found.append(site_packages)
        for name in names:
            with open(f"{site_packages}/{name}", "rb") as handle:
                lines = handle.read().decode().splitlines()
            for line in lines:
                if not line.strip() or line.startswith(("#", "import ", "import\t")):
                    continue
                path = line.rstrip()
                if not _plain(path):
                    return None
                try:
                    posix.stat(path)
                except OSError:
                    continue
                found.append(path)
    return found


def run() -> int:
    without_site = bool(sys.flags.no_site)
    if without_site:
        paths = venv_paths()
        if paths is None:
            _site()
            without_site = False
        else:
            sys.path.extend(p for p in paths if p not in sys.path)
    try:
        from tabpilot.cli import fast
    except ImportError:
        if not without_site:
            raise
        _site()
        without_site = False
        from tabpilot.cli import fast
    return fast.main(prepare_full=_site if without_site else None, leave=True)
