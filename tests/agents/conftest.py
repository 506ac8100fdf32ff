"""Tests of side-panel agent runs: the daemon unit fakes and the e2e harness are shared with them."""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
for folder in (HERE.parent / "unit", HERE.parent / "e2e"):
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))
