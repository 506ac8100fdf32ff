"""The person stays in charge, end to end: the badge in the page (absent from what the agent reads and
sees), the input shield during actions, Stop and Resume pressed like a person would, and request-help.

"The person" is the test's own connection to the page through the browser's debugging port: it
clicks and types with real input events where a person would, outside tabpilot.
"""

from __future__ import annotations

import base64
import contextlib
import json
import re
import struct
import time
import urllib.request
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from harness import REPO, PageServer, Tabpilot, wait_until
from websockets.sync.client import connect

EXTENSION_SW = "chrome-extension://abldppcldbamgeoepadjiaeommdfmihk/background.js"
PROMPT = "chrome-extension://abldppcldbamgeoepadjiaeommdfmihk/prompt/prompt.html"
# How long a prompt's buttons wait after it showed or moved: read from the prompt's own source.
ARM_MS_LINE = re.search(
    r"^const ARM_MS = (\d+);", (REPO / "src/tabpilot/extension/prompt/prompt.js").read_text(), re.M
)
assert ARM_MS_LINE, "prompt/prompt.js no longer says `const ARM_MS = <ms>;`"
PROMPT_ARM_S = int(ARM_MS_LINE[1]) / 1000
# What the person presses or types into in a prompt frame (the extension's page in the overlay).
IN_PROMPT = {
    "allow": ("borrow", "button[data-answer=allow]"),
    "deny": ("borrow", "button[data-answer=deny]"),
    "help-done": ("help", "button[data-answer=done]"),
    "help-cancel": ("help", "button[data-answer=cancel]"),
    "note": ("help", "input.note"),
}


class Person:
    """One page, seen and touched from outside tabpilot."""

    def __init__(self, ws: Any, port: int | None = None) -> None:
        self.ws = ws
        self.n = 0
        self.port = port

    def send(self, method: str, params: dict[str, Any] | None = None) -> Any:
        self.n += 1
        self.ws.send(json.dumps({"id": self.n, "method": method, "params": params or {}}))
        while True:
            try:
                reply = json.loads(self.ws.recv(timeout=10))
            except TimeoutError:
                raise AssertionError(f"the page answered no {method} within 10 s ({params})") from None
            if reply.get("id") == self.n:
                assert "error" not in reply, reply
                return reply["result"]

    def eval(self, expression: str) -> Any:
        result = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True})
        return result["result"].get("value")

    def overlay_node(self, css_class: str = "", action: str = "") -> dict[str, Any] | None:
        """A node of the overlay's closed shadow root (the debugging protocol sees through it)."""
        root = self.send("DOM.getDocument", {"depth": -1, "pierce": True})["root"]
        stack = [root]
        while stack:
            node = stack.pop()
            attrs = dict(zip(node.get("attributes", [])[::2], node.get("attributes", [])[1::2], strict=True))
            if (css_class and css_class in attrs.get("class", "").split()) or (
                action and attrs.get("data-action") == action
            ):
                return node
            stack += node.get("children", []) + node.get("shadowRoots", [])
        return None

    def overlay_text(self, css_class: str) -> str:
        node = self.overlay_node(css_class)
        if node is None:
            return ""
        parts, stack = [], [node]
        while stack:
            n = stack.pop(0)
            parts.append(n.get("nodeValue", "") if n.get("nodeType") == 3 else "")
            stack[:0] = n.get("children", [])
        return "".join(parts)

    def center_of(self, node: dict[str, Any]) -> tuple[float, float]:
        quad = self.send("DOM.getBoxModel", {"backendNodeId": node["backendNodeId"]})["model"]["border"]
        return (quad[0] + quad[4]) / 2, (quad[1] + quad[5]) / 2

    def wait_for(self, css_class: str = "", action: str = "", timeout: float = 10) -> tuple[float, float]:
        """Where a part of the overlay is, once it shows; a prompt's button once it takes clicks."""
        if action in IN_PROMPT or css_class in IN_PROMPT:
            kind, selector = IN_PROMPT[action or css_class]
            if css_class == "note":
                # the panel has settled (sized and armed) before the field is where it stays
                wait_until(
                    lambda: self.in_prompt(kind, IN_PROMPT["help-done"][1]), timeout=timeout, interval=0.05
                )
            place = wait_until(lambda: self.in_prompt(kind, selector), timeout=timeout, interval=0.05)
            return place[0], place[1]
        node = wait_until(lambda: self.overlay_node(css_class, action), timeout=timeout, interval=0.05)
        return self.center_of(node)

    def answer(self, action: str, timeout: float = 15) -> None:
        """Press a prompt's button as a person does: again when the prompt did not take the click.

        A prompt re-arms whenever its frame moves, and it moves once more when its own height
        arrives; on a loaded machine that can land after the buttons first showed armed."""
        kind, selector = IN_PROMPT[action]
        deadline = time.monotonic() + timeout
        while True:
            self.click(*self.wait_for(action=action, timeout=max(0.1, deadline - time.monotonic())))
            # Taken: the buttons stay disabled until the frame goes. Not taken: they arm again.
            time.sleep(PROMPT_ARM_S + 0.2)
            if self.in_prompt(kind, selector) is None:
                return
            if time.monotonic() > deadline:
                raise AssertionError(f"the {kind} prompt took no click on {action} within {timeout} s")

    def prompt_frame(self, kind: str) -> dict[str, Any] | None:
        """The overlay's frame of the borrow prompt or the help panel."""
        node = self.overlay_node(css_class=kind)
        return node if node and node.get("localName") == "iframe" else None

    def in_prompt(self, kind: str, selector: str, armed: bool = True) -> tuple[float, float] | None:
        """Where an element of the prompt frame is, in the page's coordinates (with `armed`: a button
        only once it takes clicks); None while it does not show."""
        frame = self.prompt_frame(kind)
        if frame is None or self.port is None:
            return None
        try:
            box = self.send("DOM.getBoxModel", {"backendNodeId": frame["backendNodeId"]})["model"]["content"]
        except AssertionError:
            return None
        probe = (
            f"(() => {{ const e = document.querySelector({json.dumps(selector)}); if (!e) return null;"
            " const r = e.getBoundingClientRect(); return [r.left + r.width / 2, r.top + r.height / 2, e.disabled === true]; })()"
        )
        for target in prompt_targets(self.port, kind):
            with connect(target["webSocketDebuggerUrl"], max_size=2**24) as ws:
                inner = Person(ws).eval(probe)
            if inner and not (armed and inner[2]):
                return box[0] + inner[0], box[1] + inner[1]
        return None

    def click(self, x: float, y: float) -> None:
        for kind, buttons in (("mouseMoved", 0), ("mousePressed", 1), ("mouseReleased", 0)):
            self.send(
                "Input.dispatchMouseEvent",
                {
                    "type": kind,
                    "x": x,
                    "y": y,
                    "button": "none" if kind == "mouseMoved" else "left",
                    "buttons": buttons,
                    "clickCount": 1,
                },
            )

    def type(self, char: str) -> None:
        self.send("Input.dispatchKeyEvent", {"type": "keyDown", "key": char, "text": char})
        self.send("Input.dispatchKeyEvent", {"type": "keyUp", "key": char})

    def element_center(self, selector: str) -> tuple[float, float]:
        box = self.eval(
            f"(() => {{ const r = document.querySelector({json.dumps(selector)}).getBoundingClientRect();"
            " return [r.left + r.width / 2, r.top + r.height / 2]; })()"
        )
        return box[0], box[1]


def png_pixel(path: Path, x: int, y: int) -> tuple[int, int, int]:
    """One pixel of an 8-bit RGB(A) PNG, decoded by hand (no imaging library in the test environment)."""
    data = path.read_bytes()
    at, idat, header = 8, b"", b""
    while at < len(data):
        length, kind = struct.unpack(">I4s", data[at : at + 8])
        body = data[at + 8 : at + 8 + length]
        if kind == b"IHDR":
            header = body
        elif kind == b"IDAT":
            idat += body
        at += 12 + length
    width, _, depth, color = struct.unpack(">IIBB", header[:10])
    assert depth == 8 and color in (2, 6), (depth, color)
    bpp = 3 if color == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * bpp
    previous = bytearray(stride)
    for row in range(y + 1):
        filt, line = (
            raw[row * (stride + 1)],
            bytearray(raw[row * (stride + 1) + 1 : (row + 1) * (stride + 1)]),
        )
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = previous[i]
            c = previous[i - bpp] if i >= bpp else 0
            if filt == 1:
                line[i] = (line[i] + a) & 0xFF
            elif filt == 2:
                line[i] = (line[i] + b) & 0xFF
            elif filt == 3:
                line[i] = (line[i] + (a + b) // 2) & 0xFF
            elif filt == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 0xFF
        previous = line
    r, g, b_ = previous[x * bpp : x * bpp + 3]
    return r, g, b_


FLOOR = (0, 128, 255)


def prompt_targets(port: int, kind: str) -> list[dict[str, Any]]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=5) as response:
        targets = json.load(response)
    return [
        t
        for t in targets
        if t.get("url", "").startswith(f"{PROMPT}?{kind}#") and t.get("webSocketDebuggerUrl")
    ]


def page_target(tp: Tabpilot, url: str) -> dict[str, Any]:
    return wait_until(lambda: next((t for t in tp.devtools().pages() if t["url"] == url), None))  # type: ignore[no-any-return]


@contextlib.contextmanager
def person_at(tp: Tabpilot, url: str) -> Iterator[Person]:
    """The person looking at the session's tab showing `url` (the tab keeps its target across navigations)."""
    with connect(page_target(tp, url)["webSocketDebuggerUrl"], max_size=2**26) as ws:
        yield Person(ws, tp.devtools().port)


@pytest.fixture()
def person(tp: Tabpilot, pages: PageServer) -> Iterator[Person]:
    """person.html open in the default session, and the person looking at it (its badge is up)."""
    url = pages.url("person.html")
    tp.run("open", url)
    with person_at(tp, url) as who:
        who.wait_for(action="stop")
        yield who


def page_events(person: Person, kind: str) -> list[Any]:
    return person.eval(f"__events.filter(e => e.type === {json.dumps(kind)}).map(e => [e.target, e.trusted])")


def test_the_badge_is_not_part_of_the_page_the_agent_reads_sees_or_clicks(
    tp: Tabpilot, person: Person, tmp_path: Path
) -> None:
    bx, by = person.wait_for(css_class="badge")
    # the person sees it (a capture taken from outside shows it over the floor's colour) …
    shot = tmp_path / "person.png"
    shot.write_bytes(base64.b64decode(person.send("Page.captureScreenshot")["data"]))
    assert png_pixel(shot, int(bx), int(by)) != FLOOR
    # … the agent does not: not in its snapshot, text, html, nor in its screenshot
    snapshot = tp.run("snapshot").out
    assert "Floor" in snapshot and "tabpilot" not in snapshot and "Stop" not in snapshot
    text = tp.run("text").out
    assert "Plain text of the page." in text and "Stop" not in text
    html = tp.run("html").out
    assert 'id="floor"' in html and "tabpilot-overlay" not in html and "data-action" not in html
    path = Path(tp.run("screenshot", "--out", str(tmp_path / "agent.png")).out.strip())
    assert png_pixel(path, int(bx), int(by)) == FLOOR
    # and the badge is back for the person afterwards
    assert person.overlay_node(css_class="badge") is not None
    # a click at the badge's place reaches the page's element under it
    floor_top = person.eval("document.querySelector('#floor').getBoundingClientRect().top")
    tp.run("click", "#floor", "--at", f"{bx:.0f},{by - floor_top:.0f}")
    assert page_events(person, "click") == [["floor", True]]


def test_the_shield_keeps_the_persons_input_out_while_an_action_runs(tp: Tabpilot, person: Person) -> None:
    person.eval("document.querySelector('#field').focus()")
    ox, oy = person.element_center("#other")
    # the agent's click waits for a button that is still disabled: the shield is up meanwhile
    click = tp.spawn("click", "#late", "--timeout", "10s")
    try:
        person.wait_for(css_class="shield")
        person.click(ox, oy)
        person.type("x")
        assert page_events(person, "click") == []
        assert person.eval("document.querySelector('#field').value") == ""
        person.eval("document.querySelector('#late').disabled = false")
        out, err = click.communicate(timeout=15)
    finally:
        click.kill()
    assert click.returncode == 0, err
    assert out.strip() == 'clicked button "Late button"'
    # only the agent's click reached the page; the shield is gone now and the person's input gets through
    assert page_events(person, "click") == [["late", True]]
    wait_until(lambda: person.overlay_node(css_class="shield") is None, timeout=5, interval=0.05)
    person.click(ox, oy)
    person.eval("document.querySelector('#field').focus()")
    person.type("y")
    assert page_events(person, "click") == [["late", True], ["other", True]]
    assert person.eval("document.querySelector('#field').value") == "y"


def test_stop_ends_a_long_wait_within_a_second_and_the_queued_command_never_runs(
    tp: Tabpilot, person: Person
) -> None:
    waiting = tp.spawn("wait", "--selector", "#never", "--timeout", "30s", "--json")
    queued = None
    try:
        wait_until(lambda: "wait for selector #never" in person.overlay_text("badge"), interval=0.05)
        queued = tp.spawn("eval", "window.__ran = true")
        wait_until(
            lambda: tp.run("session", "list", "--json").json["sessions"][0]["pending"] == 1, interval=0.05
        )
        x, y = person.wait_for(action="stop")
        pressed = time.monotonic()
        person.click(x, y)
        out, _ = waiting.communicate(timeout=10)
        took = time.monotonic() - pressed
        queued_out, queued_err = queued.communicate(timeout=10)
    finally:
        waiting.kill()
        if queued is not None:
            queued.kill()
    assert waiting.returncode == 1
    error = json.loads(out)["error"]
    assert (error["code"], error["reason"]) == ("user_aborted", "user_interrupt")
    assert "ask them before continuing" in error["hint"]
    assert took < 1.0, f"the CLI took {took:.2f} s to end after Stop"
    assert queued.returncode == 1 and "the person pressed Stop" in queued_err, queued_out
    # paused: new commands are refused until someone resumes; the page shows Resume
    refused = tp.run("eval", "1", "--json", check=False)
    assert refused.code == 1 and refused.json["error"]["reason"] == "session_paused"
    x, y = person.wait_for(action="resume")
    person.click(x, y)
    wait_until(
        lambda: not tp.run("session", "list", "--json").json["sessions"][0]["paused"],
        timeout=5,
        interval=0.05,
    )
    assert tp.run("eval", "typeof window.__ran").out.strip() == '"undefined"'
    person.wait_for(action="stop")


# ----- request-help ------------------------------------------------------------------------------


@pytest.fixture()
def login(tp: Tabpilot, pages: PageServer) -> Iterator[tuple[Person, str]]:
    url = pages.url("help/login.html")
    tp.run("open", url)
    with person_at(tp, url) as who:
        yield who, url


def helped(proc: Any) -> tuple[int, dict[str, Any]]:
    out, err = proc.communicate(timeout=30)
    assert out, err
    return proc.returncode, json.loads(out)


def test_help_done_with_a_note_after_a_navigation_continues(tp: Tabpilot, login: tuple[Person, str]) -> None:
    person, _ = login
    proc = tp.spawn("request-help", "--prompt", "Please check the page", "--target", "#login", "--json")
    try:
        person.wait_for(action="help-done")
        # the target is outlined where it is, from geometry the extension measured (nothing written in the page)
        mark = person.center_of(wait_until(lambda: person.overlay_node(css_class="mark"), interval=0.05))
        login_center = person.element_center("#login")
        assert abs(mark[0] - login_center[0]) < 2 and abs(mark[1] - login_center[1]) < 2
        assert person.eval("[...document.querySelector('#login').attributes].map(a => a.name)") == ["id"]
        # the person goes to another page: the panel follows
        person.click(*person.element_center("#away"))
        wait_until(lambda: person.eval("location.pathname") == "/second.html", interval=0.05)
        person.click(*person.wait_for(css_class="note"))
        for char in "all good":
            person.type(char)
        person.answer("help-done")
        code, result = helped(proc)
    finally:
        proc.kill()
    assert code == 0
    assert result["outcome"] == "continued" and result["note"] == "all good" and result["via"] == "page"
    # whether #login still counts as found depends on when the boxes were last measured on the new page
    assert result["url"].endswith("/second.html")
    assert [t["target"] for t in result["targets"]] == ["#login"]
    wait_until(lambda: person.overlay_node(css_class="help") is None, timeout=5, interval=0.05)


def test_help_cancel_timeout_and_disabled(tp: Tabpilot, login: tuple[Person, str]) -> None:
    person, _ = login
    proc = tp.spawn("request-help", "--prompt", "Approve the payment?", "--title", "Payment")
    try:
        person.answer("help-cancel")
        out, _ = proc.communicate(timeout=10)
    finally:
        proc.kill()
    assert proc.returncode == 1
    assert out.strip() == "cancelled: the person declined; ask them what they want before going on"
    timed = tp.run("request-help", "--prompt", "Anyone?", "--timeout", "1s", check=False)
    assert (
        timed.code == 1
        and timed.out.strip() == "timed_out: nobody answered within 1s; do not wait for the person"
    )
    assert 1 <= timed.seconds < 4
    assert person.overlay_node(css_class="help") is None
    tp.extra_env["TABPILOT_REQUEST_HELP"] = "off"
    try:
        disabled = tp.run("request-help", "--prompt", "Anyone?", "--json", check=False)
    finally:
        del tp.extra_env["TABPILOT_REQUEST_HELP"]
    assert disabled.code == 1 and disabled.json == {"outcome": "disabled"}
    assert disabled.seconds < 1.5


def test_help_completes_when_the_url_matches_after_two_redirects(
    tp: Tabpilot, login: tuple[Person, str]
) -> None:
    person, _ = login
    proc = tp.spawn("request-help", "--prompt", "Please log in", "--until-url", "*/help/dashboard*", "--json")
    try:
        person.wait_for(action="help-done")
        person.click(*person.element_center("#login"))
        code, result = helped(proc)
    finally:
        proc.kill()
    assert code == 0
    assert result["outcome"] == "completed" and result["until"] == {"url": "*/help/dashboard*"}
    assert result["url"].endswith("/help/dashboard.html")
    assert tp.run("eval", "document.title").out.strip() == '"Dashboard"'


def test_help_completes_when_the_selector_shows(tp: Tabpilot, login: tuple[Person, str]) -> None:
    person, _ = login
    proc = tp.spawn("request-help", "--prompt", "Solve the captcha", "--until-selector", "#welcome")
    try:
        person.wait_for(action="help-done")
        person.click(*person.element_center("#reveal"))
        out, _ = proc.communicate(timeout=10)
    finally:
        proc.kill()
    assert proc.returncode == 0 and out.strip() == "completed: #welcome is visible"


def in_service_worker(tp: Tabpilot, expression: str) -> Any:
    """Evaluate in the extension's service worker, seen from outside through the browser's debugging port."""
    with urllib.request.urlopen(f"http://127.0.0.1:{tp.devtools().port}/json/version", timeout=5) as response:
        endpoint = json.load(response)["webSocketDebuggerUrl"]
    with connect(endpoint, max_size=2**24) as ws:
        browser = Person(ws)
        workers = [t for t in browser.send("Target.getTargets")["targetInfos"] if t["url"] == EXTENSION_SW]
        session = browser.send("Target.attachToTarget", {"targetId": workers[0]["targetId"], "flatten": True})
        browser.n += 1
        ws.send(
            json.dumps(
                {
                    "id": browser.n,
                    "sessionId": session["sessionId"],
                    "method": "Runtime.evaluate",
                    "params": {"expression": expression, "awaitPromise": True, "returnByValue": True},
                }
            )
        )
        while True:
            reply = json.loads(ws.recv(timeout=10))
            if reply.get("id") == browser.n:
                return reply["result"]["result"].get("value")


def test_help_on_a_page_without_the_panel_asks_with_a_notification(tp: Tabpilot) -> None:
    tp.run("open", "about:blank")
    notifications = "chrome.notifications.getAll().then((all) => Object.keys(all))"
    proc = tp.spawn("request-help", "--prompt", "Please look at the browser", "--timeout", "3s")
    try:
        shown = wait_until(lambda: in_service_worker(tp, notifications), interval=0.1)
        out, _ = proc.communicate(timeout=10)
    finally:
        proc.kill()
    assert len(shown) == 1 and shown[0].startswith("tp-help:")
    # nobody answered it: a no, and the notification is gone
    assert proc.returncode == 1 and out.startswith("timed_out:")
    assert in_service_worker(tp, notifications) == []


def test_stop_while_the_person_is_asked_for_help_ends_the_request_and_its_panel(
    tp: Tabpilot, login: tuple[Person, str]
) -> None:
    person, _ = login
    proc = tp.spawn("request-help", "--prompt", "Please log in", "--json")
    try:
        person.wait_for(action="help-done")
        assert "waiting for your help" in person.overlay_text("badge")
        person.click(*person.wait_for(action="stop"))
        out, _ = proc.communicate(timeout=5)
    finally:
        proc.kill()
    assert proc.returncode == 1 and json.loads(out)["error"]["reason"] == "user_interrupt"
    wait_until(lambda: person.overlay_node(css_class="help") is None, timeout=5, interval=0.05)
    person.click(*person.wait_for(action="resume"))
    person.wait_for(action="stop")
    assert tp.run("eval", "document.title").out.strip() == '"Log in"'
