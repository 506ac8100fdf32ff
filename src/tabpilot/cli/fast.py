"""The hot path: the commonest shapes of the page verbs, parsed by hand and sent with built-in modules only.

Agents run ``tabpilot`` once per action, so start-up is most of a command's cost: argparse, ``re`` and
``os`` take longer than the click itself. This module understands a strict subset of what the full
CLI (``tabpilot.cli.main``) accepts: the global options (``--json``, ``--session``, ``--browser``,
``--tab``, ``--no-boundaries``) before the verb or among its options, then the verb's positionals in one
run, options before or after them spelled out in full, values that cannot be mistaken for options, refs
as ``@eN``, durations as plain numbers with ``ms``/``s``/``m``/``h``. Anything else — another verb,
``-h``, an abbreviation, ``--``, ``--opt=value``, an option given twice, a CSS selector, an empty value,
a daemon not running yet — goes to the full CLI in the same process, before anything was sent. Both print through the same renderer
(``tabpilot.cli.outcomes``, ``tabpilot.cli.render``), and ``tests/unit/test_fast_cli.py`` checks them
against each other, argv shape by argv shape.

Once its answer is written, the ``tabpilot`` command ends its process at once: the interpreter's own
clean-up took ~2 ms of a 15 ms command (bench, latency suite) and frees nothing a finished process keeps.
"""

# No `from __future__ import annotations` here: it imports the __future__ module, and every
# annotation below is cheap to evaluate.
import posix
import sys

from tabpilot.cli import client, outcomes, render

# The full CLI's defaults for these verbs (checked equal by the test).
ACTION_TIMEOUT_S = 5.0
WAIT_TIMEOUT_S = 10.0
PAGE_TIMEOUT_S = 30.0
WAIT_UNTIL = ("commit", "domcontentloaded", "load", "networkidle")
LOAD_STATES = ("domcontentloaded", "load", "networkidle")
BUTTONS = ("left", "right", "middle")

# Kinds of values: a ref, a free text, a session or browser name, a tab id, a duration, or one of a few words.
REF, TEXT, NAME, TAB, DURATION = "ref", "text", "name", "tab", "duration"
FLAG = None
# The full CLI takes these before the verb or after it (cli/main.py, _common_options).
GLOBAL_OPTIONS = {"--json": FLAG, "--session": NAME, "--browser": NAME, "--tab": TAB, "--no-boundaries": FLAG}
# Every verb of the hot path takes --timeout.
VERB_OPTIONS = {"--timeout": DURATION}
AFTER_OPTIONS = {"--snapshot": FLAG, "--diff": FLAG}
# The full CLI's bounds (cli/values.py: MAX_TAB_ID, MAX_DURATION_S) and its duration suffixes, in its order.
MAX_TAB_ID = 2**31 - 1
MAX_DURATION_S = 3600.0
DURATION_SUFFIXES = (("ms", 0.001), ("s", 1.0), ("m", 60.0), ("h", 3600.0))


def _is_ref(word: str) -> bool:
    digits = word[2:]
    return word[:2] == "@e" and digits.isascii() and digits.isdigit() and digits[0] != "0"


def _is_name(word: str) -> bool:
    """What the daemon takes as a session name: [A-Za-z0-9][A-Za-z0-9._-]{0,63}."""
    return (
        0 < len(word) <= 64
        and word.isascii()
        and word[0].isalnum()
        and all(ch.isalnum() or ch in "._-" for ch in word)
    )


def _tab(word: str) -> object:
    """A tab id as the full CLI reads it, when it is written plainly (digits, no leading zero)."""
    if not (word.isascii() and word.isdigit()) or word[0] == "0":
        return None
    value = int(word)
    return value if value <= MAX_TAB_ID else None


def _duration(word: str) -> object:
    """Seconds, computed as the full CLI's Duration does, for a plain ``12``, ``1.5s``, ``500ms``, ``2m``."""
    number, scale = word, 1.0
    for suffix, factor in DURATION_SUFFIXES:
        if word.endswith(suffix):
            number, scale = word[: -len(suffix)], factor
            break
    digits = number.replace(".", "", 1)
    if not (digits.isascii() and digits.isdigit()):
        return None
    value = float(number) * scale
    return value if value <= MAX_DURATION_S else None


def _value_ok(kind: object, word: str) -> bool:
    if not word or word[0] == "-":
        return False
    if kind == REF:
        return _is_ref(word)
    if kind == NAME:
        return _is_name(word)
    if kind == TEXT:
        return True
    if kind == TAB:
        return _tab(word) is not None
    if kind == DURATION:
        return _duration(word) is not None
    return isinstance(kind, tuple) and word in kind


class Plan:
    """One tool call and how its result is printed: ``text(result, nonce)``, nonce the page-text one."""

    def __init__(self, method: str, params: dict, timeout_s: float, text: object) -> None:
        self.method = method
        self.params = params
        self.timeout_s = timeout_s
        self.text = text
        self.session: object = None
        self.browser: object = None
        self.as_json = False
        self.boundaries = True


def _after(params: dict, given: dict) -> dict:
    if "--snapshot" in given and "--diff" in given:
        raise ValueError
    if "--snapshot" in given:
        params["after"] = "snapshot"
    elif "--diff" in given:
        params["after"] = "diff"
    return params


def _click(pos: list, given: dict) -> Plan:
    (target,) = pos
    button = given.get("--button", "left")
    double = "--double" in given
    params = {"target": target, "button": button, "click_count": 2 if double else 1}
    return Plan(
        "tool.click",
        _after(params, given),
        ACTION_TIMEOUT_S,
        lambda r, n: outcomes.action_text(r, outcomes.click_line(r, button, double, n), n),
    )


def _simple(method: str, verb: str) -> object:
    def build(pos: list, given: dict) -> Plan:
        (target,) = pos
        return Plan(
            method,
            _after({"target": target}, given),
            ACTION_TIMEOUT_S,
            lambda r, n: outcomes.action_text(r, outcomes.simple_line(r, verb, n), n),
        )

    return build


def _fill(pos: list, given: dict) -> Plan:
    target, text = pos
    return Plan(
        "tool.fill",
        _after({"target": target, "value": text}, given),
        ACTION_TIMEOUT_S,
        lambda r, n: outcomes.action_text(r, outcomes.fill_line(r, n), n),
    )


def _type(pos: list, given: dict) -> Plan:
    (text,) = pos
    params = {"text": text, "delay_ms": 0}
    if "--ref" in given:
        params["target"] = given["--ref"]
    return Plan(
        "tool.type",
        _after(params, given),
        ACTION_TIMEOUT_S,
        lambda r, n: outcomes.action_text(r, outcomes.type_line(r, text, n), n),
    )


def _press(pos: list, given: dict) -> Plan:
    params = {"keys": pos}
    if "--ref" in given:
        params["target"] = given["--ref"]
    return Plan(
        "tool.press",
        _after(params, given),
        ACTION_TIMEOUT_S,
        lambda r, n: outcomes.action_text(r, outcomes.press_line(r, pos, n), n),
    )


def _select(pos: list, given: dict) -> Plan:
    return Plan(
        "tool.select",
        _after({"target": pos[0], "values": pos[1:]}, given),
        ACTION_TIMEOUT_S,
        lambda r, n: outcomes.action_text(r, outcomes.select_line(r, n), n),
    )


def _check(checked: bool) -> object:
    def build(pos: list, given: dict) -> Plan:
        (target,) = pos
        return Plan(
            "tool.check",
            _after({"target": target, "checked": checked}, given),
            ACTION_TIMEOUT_S,
            lambda r, n: outcomes.action_text(r, outcomes.check_line(r, checked, n), n),
        )

    return build


def _eval(pos: list, given: dict) -> Plan:
    (expression,) = pos
    return Plan("tool.evaluate", {"expression": expression}, PAGE_TIMEOUT_S, outcomes.eval_text)


def _open(pos: list, given: dict) -> Plan:
    (url,) = pos
    params: dict = {"url": url, "wait_until": given.get("--wait-until", "load")}
    if "--allow-file" in given:
        params["allow_file"] = True
    return Plan("tool.navigate", params, PAGE_TIMEOUT_S, outcomes.open_line)


def _snapshot(pos: list, given: dict) -> Plan:
    interactive = "-i" in given or "--interactive" in given
    params: dict = {"mode": "interactive" if interactive else "full"}
    if "--viewport" in given:
        params["viewport"] = True
    if "--urls" in given:
        params["urls"] = True
    if "--ref" in given:
        params["ref"] = given["--ref"]
    return Plan("tool.snapshot", params, PAGE_TIMEOUT_S, outcomes.page_text)


def _text(pos: list, given: dict) -> Plan:
    params = {"ref": given["--ref"]} if "--ref" in given else {}
    return Plan("tool.text", params, PAGE_TIMEOUT_S, outcomes.page_text)


def _find(pos: list, given: dict) -> Plan:
    (text,) = pos
    return Plan("tool.find", {"text": text}, PAGE_TIMEOUT_S, outcomes.find_text)


WAIT_CONDITIONS = {
    "--selector": "selector",
    "--text": "text",
    "--gone": "gone",
    "--url": "url",
    "--load": "load",
}


def _wait(pos: list, given: dict) -> Plan:
    ((option, value),) = ((k, v) for k, v in given.items() if k in WAIT_CONDITIONS)
    kind = WAIT_CONDITIONS[option]
    return Plan(
        "tool.wait", {kind: value}, WAIT_TIMEOUT_S, lambda r, n: outcomes.wait_line(r, kind, value, n)
    )


# verb: (positionals (the last one repeats when the count is open-ended), open-ended, options, plan).
VERBS: dict = {
    "click": ((REF,), False, {**AFTER_OPTIONS, "--button": BUTTONS, "--double": FLAG}, _click),
    "hover": ((REF,), False, AFTER_OPTIONS, _simple("tool.hover", "hovered")),
    "focus": ((REF,), False, AFTER_OPTIONS, _simple("tool.focus", "focused")),
    "fill": ((REF, TEXT), False, AFTER_OPTIONS, _fill),
    "type": ((TEXT,), False, {**AFTER_OPTIONS, "--ref": REF}, _type),
    "press": ((TEXT,), True, {**AFTER_OPTIONS, "--ref": REF}, _press),
    "select": ((REF, TEXT), True, AFTER_OPTIONS, _select),
    "check": ((REF,), False, AFTER_OPTIONS, _check(True)),
    "uncheck": ((REF,), False, AFTER_OPTIONS, _check(False)),
    "eval": ((TEXT,), False, {}, _eval),
    "open": ((TEXT,), False, {"--allow-file": FLAG, "--wait-until": WAIT_UNTIL}, _open),
    "snapshot": (
        (),
        False,
        {"-i": FLAG, "--interactive": FLAG, "--viewport": FLAG, "--urls": FLAG, "--ref": REF},
        _snapshot,
    ),
    "text": ((), False, {"--ref": REF}, _text),
    "find": ((TEXT,), False, {}, _find),
    "wait": (
        (),
        False,
        {"--selector": REF, "--text": TEXT, "--gone": REF, "--url": TEXT, "--load": LOAD_STATES},
        _wait,
    ),
}


def _option(options: dict, words: list, i: int, given: dict) -> int:
    """Take the option at ``words[i]`` into ``given``; the index after it, or -1 when it is not plain."""
    word = words[i]
    if word not in options or word in given:
        return -1
    kind = options[word]
    if kind is FLAG:
        given[word] = True
        return i + 1
    if i + 1 == len(words) or not _value_ok(kind, words[i + 1]):
        return -1
    given[word] = words[i + 1]
    return i + 2


def plan(words: list) -> Plan | None:
    """The call for ``words`` when the hot path understands them fully, else None."""
    given: dict = {}
    start = 0
    while start < len(words) and words[start][:1] == "-":
        start = _option(GLOBAL_OPTIONS, words, start, given)
        if start < 0:
            return None
    if start == len(words) or words[start] not in VERBS:
        return None
    kinds, open_ended, verb_options, build = VERBS[words[start]]
    options = {**GLOBAL_OPTIONS, **VERB_OPTIONS, **verb_options}
    positionals: list = []
    # 0: before the positionals, 1: among them, 2: after them (another positional then is refused).
    state = 0
    rest = words[start + 1 :]
    i = 0
    while i < len(rest):
        word = rest[i]
        if word[:1] == "-":
            i = _option(options, rest, i, given)
            if i < 0:
                return None
            state = 2 if state else 0
            continue
        if state == 2:
            return None
        state = 1
        positionals.append(word)
        i += 1
    if len(positionals) < len(kinds) or (len(positionals) > len(kinds) and not open_ended):
        return None
    for index, word in enumerate(positionals):
        if not _value_ok(kinds[min(index, len(kinds) - 1)], word):
            return None
    if words[start] == "wait" and sum(option in given for option in WAIT_CONDITIONS) != 1:
        return None
    try:
        call = build(positionals, given)
    except ValueError:
        return None
    call.as_json = "--json" in given
    call.session = given.get("--session")
    call.browser = given.get("--browser")
    call.boundaries = "--no-boundaries" not in given
    if "--timeout" in given:
        call.timeout_s = _duration(given["--timeout"])
    if "--tab" in given:
        call.params["tab_id"] = _tab(given["--tab"])
    return call


def _environ(name: bytes) -> bytes | None:
    return posix.environ.get(name)


def socket_path() -> bytes | None:
    """``paths.socket_path()`` where it is plain (an absolute, normal TABPILOT_HOME or HOME), else None."""
    home = _environ(b"TABPILOT_HOME")
    if home is None:
        user = _environ(b"HOME")
        if not user or not _plain(user):
            return None
        home = user.rstrip(b"/") + b"/.tabpilot"
    if not _plain(home) or home.endswith(b"/"):
        return None
    return home + b"/daemon.sock"


def _plain(path: bytes) -> bool:
    """An absolute path that os.path.abspath leaves as it is."""
    return (
        path[:1] == b"/"
        and b"//" not in path
        and b"/./" not in path
        and b"/../" not in path
        and not (path.endswith((b"/.", b"/..")))
    )


def _named(given: object, variable: bytes) -> tuple[bool, object]:
    """(understood, the name): the option, else the variable when it is a plain name (empty: none)."""
    if given is not None:
        return True, given
    raw = _environ(variable)
    if not raw:
        return True, None
    name = raw.decode("ascii", "replace")
    return _is_name(name), name


def main(argv: list | None = None, prepare_full: object = None, leave: bool = False) -> int:
    """Run ``tabpilot`` for argv; ``prepare_full`` (when given) runs before the full CLI takes over.

    With ``leave`` (the ``tabpilot`` command), what the hot path ran ends the process once its output
    is out.
    """
    words = sys.argv[1:] if argv is None else argv
    if words == ["--version"]:
        from tabpilot import __version__

        print(f"tabpilot {__version__}")
        if leave:
            _leave(0)
        return 0
    call = plan(words)
    path = socket_path() if call is not None else None
    known, session = _named(call.session, b"TABPILOT_SESSION") if call is not None else (False, None)
    known_browser, browser = _named(call.browser, b"TABPILOT_BROWSER") if call is not None else (False, None)
    if call is not None and path is not None and known and known_browser:
        try:
            sock = client.open_socket(path)
        except OSError:
            # Not running (the full CLI starts it), or something the full CLI explains.
            sock = None
        if sock is not None:
            params = dict(call.params)
            params["timeout_ms"] = int(call.timeout_s * 1000)
            request = client.frame(call.method, params, session, browser)

            raw = _environ(b"TABPILOT_BOUNDARIES")
            boundaries = call.boundaries and not render.boundaries_off(
                raw.decode("utf-8", "replace") if raw else None
            )

            def step() -> int:
                result = client.exchange(sock, request, call.timeout_s)
                return render.emit(
                    result, call.text(result, render.page_nonce(result, boundaries)), call.as_json
                )

            code = render.guarded(step, call.as_json, boundaries)
            if leave:
                _leave(code)
            return code
    if prepare_full is not None:
        prepare_full()
    from tabpilot.cli.main import main as full

    return full(words)


def _leave(code: int) -> None:
    """End the process with ``code`` now that its output is written."""
    for stream in (sys.stdout, sys.stderr):
        # Not contextlib.suppress: contextlib is no built-in module.
        try:  # noqa: SIM105
            stream.flush()
        except (OSError, ValueError, AttributeError):
            # The reader went away (e.g. `| head`), or the stream was closed before Python started (it
            # is None then): nothing left to say, as on the full path.
            pass
    posix._exit(code)
