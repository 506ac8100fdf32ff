"""Tasks a person does in the real apps of app_servers.py, written once as steps on controls named by
role and accessible name, and a driver that carries them out through the `tabpilot` CLI the way an
agent does: read a snapshot, find the control's ref by its role and name, act on the ref.

The bench drives the same steps through Playwright's aria snapshot as its baseline (bench/apps.py).
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from app_servers import ADMIN_PASSWORD, ADMIN_USER, App
from harness import Tabpilot

# ── Steps ────────────────────────────────────────────────────────────────────────────────────────────


@dataclass(frozen=True)
class Control:
    """A control as a person names it: its ARIA role and accessible name. Where a reader gives it no
    name (Playwright's aria snapshot, for select2's combobox and Django's search field), it is taken as
    the first nameless one of its role `after` another control."""

    role: str
    name: str
    after: Control | None = None


@dataclass(frozen=True)
class Open:
    path: str


@dataclass(frozen=True)
class Fill:
    control: Control
    text: str


@dataclass(frozen=True)
class TypeInto:
    """Type key by key into the focused control (an autocomplete's search field), after clicking it."""

    control: Control
    text: str


@dataclass(frozen=True)
class Click:
    control: Control
    then: str | None = None  # text the page shows once the click has done its work


@dataclass(frozen=True)
class Check:
    control: Control
    on: bool = True


@dataclass(frozen=True)
class Select:
    """Choose an option of a native <select>."""

    control: Control
    option: str


@dataclass(frozen=True)
class Read:
    """Read the page and keep the first match of `pattern` as the task's result; `after` is text the
    page shows once the result is there (waited for before reading)."""

    pattern: str
    after: str | None = None


Step = Open | Fill | TypeInto | Click | Check | Select | Read


@dataclass(frozen=True)
class Task:
    app: str
    name: str
    steps: Callable[[str], list[Step]]  # the steps for one run's tag (names made unique per run)
    check: Callable[[App, str, str | None], None]  # the app's own state after the run, and what was read

    def controls(self, tag: str) -> list[Control]:
        """Every control the task needs: the coverage it asks of a snapshot."""
        return [s.control for s in self.steps(tag) if not isinstance(s, Open | Read)]


# ── Driving through the CLI ──────────────────────────────────────────────────────────────────────────

BRACKET = re.compile(r"\[([^\[\]]*?) @(e\d+)\b[^\[\]]*\]")
ROLE_NAME = re.compile(r'^([a-z]+) ("(?:[^"\\]|\\.)*")$')
# Roles the snapshot spells more precisely than ARIA does.
ALIASES = {"textbox": {"textbox", "password", "searchbox"}, "searchbox": {"searchbox", "textbox"}}
LOOK_FOR_S = 10.0
# A bracket holding only one of these is a control without a name, not a link.
ALL_ROLES = {
    "button",
    "combobox",
    "listbox",
    "checkbox",
    "radio",
    "option",
    "textbox",
    "spinbutton",
    "tab",
    "switch",
    "slider",
}


def refs_in(snapshot: str) -> list[tuple[str, str, str]]:
    """(role, name, ref) for every element of a snapshot, in reading order; links print as `[text @eN]`."""
    found = []
    for inner, ref in BRACKET.findall(snapshot):
        match = ROLE_NAME.match(inner)
        role, name = (match.group(1), json.loads(match.group(2))) if match else ("link", inner)
        if inner in ALIASES or inner in ALL_ROLES:
            role, name = inner, ""
        found.append((role, name, f"@{ref}"))
    return found


def ref_of(snapshot: str, control: Control) -> str | None:
    """The ref of the control named so; one the snapshot gives no name is taken as the first nameless
    control of its role after `control.after` (as a reader takes the box beside a label)."""
    roles = ALIASES.get(control.role, {control.role})
    refs = refs_in(snapshot)
    named = next((ref for role, name, ref in refs if role in roles and name == control.name), None)
    if named is not None or control.after is None:
        return named
    anchor = ref_of(snapshot, control.after)
    if anchor is None:
        return None
    start = next(i for i, (_, _, ref) in enumerate(refs) if ref == anchor)
    return next((ref for role, name, ref in refs[start:] if role in roles and name == ""), None)


def unnamed(snapshot: str, control: Control) -> bool:
    """Was the control found only by its place (the snapshot gave it no name)?"""
    roles = ALIASES.get(control.role, {control.role})
    return not any(role in roles and name == control.name for role, name, _ in refs_in(snapshot))


class Driver(Protocol):
    def run_task(self, task: Task, app: App, tag: str) -> str | None: ...


@dataclass
class CliDriver:
    """An agent at the shell: one `tabpilot` command per move, a snapshot when it needs to see again."""

    tp: Tabpilot
    session: tuple[str, ...] = ()
    commands: list[str] = field(default_factory=list)
    snapshots: list[str] = field(default_factory=list)
    # Controls found only by their place, because the snapshot gave them no name.
    by_place: list[Control] = field(default_factory=list)
    _seen: str | None = None
    _new_page: bool = True

    def cli(self, *args: str) -> str:
        self.commands.append(" ".join(args))
        return self.tp.run(*args, *self.session).out

    def act(self, verb: str, control: Control, *args: str) -> None:
        """`tabpilot VERB @ref ARGS`; when the page replaced the element meanwhile (a list that refreshed
        as results came in), look again and act on its new ref, as an agent told `ref_stale` does."""
        for _ in range(3):
            ref = self.ref(control)
            self.commands.append(f"{verb} {ref} {' '.join(args)}".strip())
            done = self.tp.run(verb, ref, *args, *self.session, "--json", check=False)
            if done.code == 0:
                return
            if done.code != 1 or json.loads(done.out)["error"].get("reason") != "ref_stale":
                raise AssertionError(
                    f"tabpilot {verb} {ref} {' '.join(args)} exited {done.code}:\n{done.out}{done.err}"
                )
            self.look()
        raise AssertionError(f"{control} kept being replaced")

    def look(self, main: bool = False) -> str:
        """`snapshot -i`; on a page just opened, of its main landmark first (`--ref main`): the site's
        header, menus and footer are what a person skips too. The rest is read when needed."""
        done = self.tp.run("snapshot", "-i", *(("--ref", "main") if main else ()), *self.session, check=False)
        self.commands.append("snapshot -i" + (" --ref main" if main else ""))
        text = done.out if done.code == 0 else done.err
        self.snapshots.append(text)
        if done.code != 0:
            return self.look()  # no main landmark: the whole page
        self._seen = text
        self._new_page = False
        return text

    def read(self, pattern: str) -> re.Match[str] | None:
        """The page's text (`tabpilot text`: no refs, to read a result), of its main landmark first."""
        for part in (("--ref", "main"), ()):
            done = self.tp.run("text", *part, *self.session, check=False)
            self.commands.append(" ".join(("text", *part)))
            self.snapshots.append(done.out if done.code == 0 else done.err)
            if done.code == 0 and (found := re.search(pattern, done.out)):
                return found
        return None

    def find(self, name: str) -> str:
        """The snapshot lines naming `name`: after a click on a page already read, the agent knows what it
        looks for (the option it opened a menu for, the field a tab shows) and reads only those lines."""
        self.commands.append(f"find {name}")
        done = self.tp.run("find", name, *self.session, check=False)
        # A find that fails is only a look that did not work: the agent reads the page instead.
        text = done.out if done.code == 0 else done.err
        self.snapshots.append(text)
        return text

    def ref(self, control: Control) -> str:
        """The control's ref from the last snapshot, looking again while the page is still changing."""
        deadline = time.monotonic() + LOOK_FOR_S
        text = self._seen
        if text is None and not self._new_page and control.name:
            found = self.find(control.name)
            if ref_of(found, control) is not None:
                text = found
        if text is None:
            text = self.look(main=self._new_page)
        searched = False
        while (ref := ref_of(text, control)) is None:
            if time.monotonic() > deadline:
                raise AssertionError(f'no {control.role} "{control.name}" in the snapshot:\n{text}')
            if control.name and not searched:
                # Not in the part read: the agent looks up what it wants by name.
                searched = True
                found = self.find(control.name)
                if ref_of(found, control) is not None:
                    text = found
                    continue
            # Not there yet (the app still renders): wait for its name to show before reading again.
            if control.name:
                self.commands.append(f"wait --text {control.name}")
                self.tp.run("wait", "--text", control.name, "--timeout", "5s", *self.session, check=False)
            else:
                time.sleep(0.3)
            text = self.look()
        if unnamed(text, control) and control not in self.by_place:
            self.by_place.append(control)
        return ref

    def step(self, step: Step) -> str | None:
        match step:
            case Open(path):
                self.cli("open", path)
                self._seen = None
                self._new_page = True
            case Fill(control, text):
                self.act("fill", control, text)
            case TypeInto(control, text):
                self.act("click", control)
                self.cli("type", text)
                self._seen = None
            case Click(control, then):
                self.act("click", control)
                if then:
                    self.cli("wait", "--text", then)
                self._seen = None
            case Check(control, on):
                self.act("check" if on else "uncheck", control)
            case Select(control, option):
                self.act("select", control, option)
            case Read(pattern, after):
                if after:
                    self.cli("wait", "--text", after)
                deadline = time.monotonic() + LOOK_FOR_S
                while not (found := self.read(pattern)):
                    assert time.monotonic() < deadline, f"{pattern!r} not in:\n{self.snapshots[-1]}"
                    time.sleep(0.3)
                return found.group(0)
        return None

    def run_task(self, task: Task, app: App, tag: str) -> str | None:
        read = None
        for step in task.steps(tag):
            if isinstance(step, Open):
                step = Open(app.url + step.path.lstrip("/"))
            read = self.step(step) or read
        return read


# ── The tasks ────────────────────────────────────────────────────────────────────────────────────────


def button(name: str) -> Control:
    return Control("button", name)


def textbox(name: str) -> Control:
    return Control("textbox", name)


# Django's admin: a server-rendered CRUD site behind a login.


def _log_in(tag: str) -> list[Step]:
    return [
        Open("login/?next=/admin/"),
        Fill(textbox("Username:"), ADMIN_USER),
        Fill(textbox("Password:"), ADMIN_PASSWORD),
        Click(button("Log in"), then="Site administration"),
    ]


def _logged_in(app: App, tag: str, read: str | None) -> None:
    (last_login,) = app.query("SELECT last_login FROM auth_user WHERE username = ?", ADMIN_USER)[0]
    assert last_login is not None
    assert app.query("SELECT count(*) FROM django_session")[0][0] >= 1


def _add_author(tag: str) -> list[Step]:
    return [
        Open("shelf/author/add/"),
        Fill(textbox("Name:"), f"Octavia Butler {tag}"),
        Click(button("Save"), then="was added successfully"),
    ]


def _author_added(app: App, tag: str, read: str | None) -> None:
    assert app.query("SELECT count(*) FROM shelf_author WHERE name = ?", f"Octavia Butler {tag}") == [(1,)]


def _add_book(tag: str) -> list[Step]:
    # The author comes from select2's autocomplete: open it, type, pick the suggestion.
    return [
        Open("shelf/book/add/"),
        Fill(textbox("Title:"), f"Kindred {tag}"),
        TypeInto(Control("combobox", "Author:", after=textbox("Title:")), f"Butler {tag}"),
        Click(Control("option", f"Octavia Butler {tag}")),
        Select(Control("combobox", "Genre:"), "Science"),
        Click(button("Save"), then="was added successfully"),
    ]


def _book_added(app: App, tag: str, read: str | None) -> None:
    rows = app.query(
        "SELECT a.name, b.genre, b.in_stock FROM shelf_book b JOIN shelf_author a ON a.id = b.author_id"
        " WHERE b.title = ?",
        f"Kindred {tag}",
    )
    assert rows == [(f"Octavia Butler {tag}", "science", 1)], rows


def _edit_book(tag: str) -> list[Step]:
    # From the change list: search it, open the book by its title, change it, save.
    return [
        Open("shelf/book/"),
        Fill(Control("textbox", "Search", after=Control("link", "Add book")), f"Kindred {tag}"),
        Click(button("Search")),
        Click(Control("link", f"Kindred {tag}"), then="Change book"),
        Check(Control("checkbox", "In stock"), on=False),
        Click(button("Save"), then="was changed successfully"),
    ]


def _book_edited(app: App, tag: str, read: str | None) -> None:
    assert app.query("SELECT in_stock FROM shelf_book WHERE title = ?", f"Kindred {tag}") == [(0,)]


# Streamlit: a React single-page app over a websocket; menus are BaseWeb popovers.


def _add_expense(tag: str) -> list[Step]:
    return [
        Open("/"),
        Fill(textbox("Description"), f"Paperbacks {tag}"),
        Fill(Control("spinbutton", "Amount"), "12.5"),
        Click(Control("combobox", "Category")),
        Click(Control("option", "Books")),
        Click(button("Add expense"), then=f"Added Paperbacks {tag}"),
    ]


def _expense_added(app: App, tag: str, read: str | None) -> None:
    expenses = app.json_state()["expenses"]
    assert {"description": f"Paperbacks {tag}", "amount": 12.5, "category": "Books"} in expenses, expenses


def _read_total(tag: str) -> list[Step]:
    return [Open("/"), Read(r"Total spent\s+[\d.]+ [A-Z]{3}", after="Total spent")]


def _total_read(app: App, tag: str, read: str | None) -> None:
    state = app.json_state()
    total = sum(e["amount"] for e in state["expenses"])
    assert read is not None and read.split()[-2:] == [f"{total:.2f}", state["settings"]["currency"]], read


def _settings(tag: str) -> list[Step]:
    return [
        Open("/"),
        Click(Control("radio", "Settings"), then="Monthly budget alerts"),
        Click(Control("combobox", "Currency")),
        Click(Control("option", "CHF")),
        Check(Control("checkbox", "Monthly budget alerts")),
        Click(button("Save settings"), then="Settings saved"),
    ]


def _settings_saved(app: App, tag: str, read: str | None) -> None:
    assert app.json_state()["settings"] == {"currency": "CHF", "alerts": True}


# Gradio: a Svelte single-page app; its dropdown is a filterable combobox.


def _create_ticket(tag: str) -> list[Step]:
    return [
        Open("/"),
        Fill(textbox("Title"), f"Printer on fire {tag}"),
        TypeInto(Control("combobox", "Team"), "Net"),
        Click(Control("option", "Networking")),
        Check(Control("radio", "High")),
        Check(Control("checkbox", "Urgent")),
        Click(button("Create ticket")),
        Read(r"Created ticket #\d+"),
    ]


def _ticket_created(app: App, tag: str, read: str | None) -> None:
    tickets = [t for t in app.json_state() if t["title"] == f"Printer on fire {tag}"]
    assert [(t["team"], t["priority"], t["urgent"], t["status"]) for t in tickets] == [
        ("Networking", "High", True, "open")
    ], tickets


def _ticket_number(app: App, tag: str) -> str:
    return str(next(t["id"] for t in app.json_state() if t["title"] == f"Printer on fire {tag}"))


def _look_up(number: str) -> list[Step]:
    return [
        Open("/"),
        Click(Control("tab", "Find ticket")),
        Fill(textbox("Ticket number"), number),
        Click(button("Look up")),
        Read(rf"#{number} [^\"\n]+ — [^\"\n]+"),
    ]


def _looked_up(app: App, number: str, read: str | None) -> None:
    ticket = next(t for t in app.json_state() if str(t["id"]) == number)
    assert read is not None and read.startswith(f"#{number} {ticket['title']} — {ticket['team']}"), read


def _close(number: str) -> list[Step]:
    return [
        Open("/"),
        Click(Control("tab", "Find ticket")),
        Fill(textbox("Ticket number"), number),
        Click(button("Close ticket")),
        Read(f"Closed ticket #{number}"),
    ]


def _closed(app: App, number: str, read: str | None) -> None:
    assert next(t for t in app.json_state() if str(t["id"]) == number)["status"] == "closed"


TASKS: list[Task] = [
    Task("django", "log in", _log_in, _logged_in),
    Task("django", "add an author", _add_author, _author_added),
    Task("django", "add a book (autocomplete)", _add_book, _book_added),
    Task("django", "find and edit a book", _edit_book, _book_edited),
    Task("streamlit", "add an expense (menu)", _add_expense, _expense_added),
    Task("streamlit", "read the total", _read_total, _total_read),
    Task("streamlit", "change settings", _settings, _settings_saved),
    Task("gradio", "create a ticket (autocomplete)", _create_ticket, _ticket_created),
    Task("gradio", "look up a ticket", _look_up, _looked_up),
    Task("gradio", "close a ticket", _close, _closed),
]

# The Gradio look-up and close tasks work on the ticket the run created: their tag is its number.
TAGGED_BY_TICKET = {"look up a ticket", "close a ticket"}


def tag_for(task: Task, app: App, run: int) -> str:
    return _ticket_number(app, f"r{run}") if task.name in TAGGED_BY_TICKET else f"r{run}"


def tasks_of(app: str) -> list[Task]:
    return [t for t in TASKS if t.app == app]


def log_out(app: App) -> None:
    """Before a run of the login task: the site forgets every session (the browser keeps its cookie)."""
    if app.name == "django":
        app.execute("DELETE FROM django_session")
