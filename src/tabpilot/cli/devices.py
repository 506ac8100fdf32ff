"""The device catalogue (``devices.json``: Playwright's published descriptors, plus ``Laptop`` and
``Desktop``) and lenient names: ``"iPhone 15 Pro"``, ``iphone-15-pro`` and ``IPHONE_15_PRO`` are one device."""

from __future__ import annotations

import argparse
import difflib
import json
import os
import re
from dataclasses import dataclass
from functools import cache


@dataclass(frozen=True)
class Device:
    name: str
    viewport: tuple[int, int]
    screen: tuple[int, int]
    dpr: float
    mobile: bool
    touch: bool
    user_agent: str | None

    def params(self) -> dict[str, object]:
        """The device's facts as tool.emulate takes them."""
        params: dict[str, object] = {
            "device": self.name,
            "viewport": {"width": self.viewport[0], "height": self.viewport[1]},
            "screen": {"width": self.screen[0], "height": self.screen[1]},
            "dpr": self.dpr,
            "mobile": self.mobile,
            "touch": self.touch,
        }
        if self.user_agent:
            params["device_user_agent"] = self.user_agent
        return params


def key(name: str) -> str:
    """The spelling-free form of a name: lower case, `+` as plus, every other run of symbols one dash."""
    return re.sub(r"[^a-z0-9]+", "-", name.lower().replace("+", " plus ")).strip("-")


@cache
def catalogue() -> dict[str, Device]:
    """Every device by its key."""
    with open(os.path.join(os.path.dirname(__file__), "devices.json"), encoding="utf-8") as handle:
        raw = json.load(handle)
    return {
        key(name): Device(
            name,
            tuple(d["viewport"]),
            tuple(d["screen"]),
            float(d["dpr"]),
            bool(d["mobile"]),
            bool(d["touch"]),
            d["user_agent"],
        )
        for name, d in raw.items()
    }


def device(text: str) -> Device:
    """A device by any spelling of its name (an argparse type)."""
    found = catalogue().get(key(text))
    if found is not None:
        return found
    near = difflib.get_close_matches(key(text), list(catalogue()), n=3, cutoff=0.6)
    names = ", ".join(repr(catalogue()[k].name) for k in near)
    also = f"; did you mean {names}?" if near else ""
    raise argparse.ArgumentTypeError(
        f"{text!r} is not a device tabpilot knows{also} (`tabpilot emulate --list-devices` lists them)"
    )


device.json_type = "string"  # type: ignore[attr-defined]
