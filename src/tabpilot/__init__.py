"""tabpilot: a local bridge that lets AI agents drive the person's real browser, safely."""

__version__ = "0.1.0"
