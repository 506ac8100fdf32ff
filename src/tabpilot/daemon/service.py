"""The daemon's brain: routes client requests to browsers through sessions; no sockets here.

``server.py`` moves bytes and calls into this object; unit tests drive it with fake peers.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import os
import time
from collections.abc import Awaitable, Callable
from typing import Any

from tabpilot import __version__, paths, protocol
from tabpilot.agents import reach
from tabpilot.agents.panel import SESSION_READY_S, ChatService
from tabpilot.agents.store import Meta
from tabpilot.daemon import uploads
from tabpilot.daemon.browsers import Browser, BrowserRegistry
from tabpilot.daemon.config import DaemonConfig
from tabpilot.daemon.methods import PUBLIC_TOOLS
from tabpilot.daemon.pairing import PairingCode, PairingCodes, SecretStore
from tabpilot.daemon.peers import PeerAuthenticator
from tabpilot.daemon.rpc import client_gone
from tabpilot.daemon.sessions import (
    DEFAULT_SESSION,
    Session,
    SessionRegistry,
    check_session_name,
    stopped_by_person,
)
from tabpilot.protocol import RpcError

log = logging.getLogger("tabpilot.daemon")

SESSION_START_TIMEOUT_S = 15.0
# Methods that take --browser only to be told it names no connected browser (session.start and the
# tools pick their browser by it, and say so themselves).
BROWSER_CHECKED = frozenset(
    {"session.list", "session.stop", "session.resume", "browser.list", "daemon.status"}
)
# Set by server.py for each client request: sends that client a progress line (its call still runs:
# the person is being asked), so it keeps waiting past the call's own timeout.
CLIENT_PROGRESS: contextvars.ContextVar[Callable[[dict[str, Any]], None] | None] = contextvars.ContextVar(
    "client_progress", default=None
)
# After a restart, how long a command for an unknown session waits for a reconnecting browser to
# bring it back (they reconnect within a second or so); later, unknown is unknown at once.
ADOPTION_WAIT_S = 2.0


class Daemon:
    def __init__(
        self,
        home: str,
        port: int,
        config: DaemonConfig | None = None,
        managed_gone: Callable[[str], bool] | None = None,
    ) -> None:
        """``managed_gone(launch_token)``: whether the managed browser started with that token no longer runs."""
        self.home = home
        self.port = port
        self.config = config or DaemonConfig()
        self.secrets = SecretStore(paths.paired_path(home))
        self.codes = PairingCodes()
        self.browsers = BrowserRegistry()
        self.sessions = SessionRegistry()
        self.started = time.monotonic()
        self.idle_since: float | None = time.monotonic()
        self.stop_requested = asyncio.Event()
        self._changed = asyncio.Event()
        self._background: set[asyncio.Task[Any]] = set()
        self._managed_gone = managed_gone or (lambda _token: False)
        # Managed browsers that went away, by instance id: their launch token tells whether their process did.
        self._away_tokens: dict[str, str] = {}
        self._handlers: dict[str, Callable[[dict[str, Any], asyncio.Event], Awaitable[Any]]] = {
            "daemon.status": self._status,
            "daemon.stop": self._stop,
            "pair.create": self._pair_create,
            "pair.wait": self._pair_wait,
            "browser.list": self._browser_list,
            "browser.wait": self._browser_wait,
            "session.start": self._session_start,
            "session.stop": self._session_stop,
            "session.list": self._session_list,
            "session.resume": self._session_resume,
        }
        self.chats = ChatService(
            home, self._post, self._ensure_panel_session, self._end_panel_session, self._interrupt_session
        )
        self.chats.recover()

    # ----- change notification -------------------------------------------------------------

    def _notify(self) -> None:
        """Wake everyone waiting for a browser, a pairing or a session to change."""
        self._changed.set()
        self._changed = asyncio.Event()
        self._update_idle()

    async def _wait_until(
        self, predicate: Callable[[], Any], timeout_s: float, abandon: asyncio.Event
    ) -> Any:
        """Wait for ``predicate()`` to become truthy; returns its value, or None on timeout."""
        deadline = time.monotonic() + timeout_s
        while True:
            value = predicate()
            if value:
                return value
            remaining = deadline - time.monotonic()
            if remaining <= 0 or abandon.is_set():
                return None
            changed = asyncio.ensure_future(self._changed.wait())
            gone = asyncio.ensure_future(abandon.wait())
            try:
                await asyncio.wait({changed, gone}, timeout=remaining, return_when=asyncio.FIRST_COMPLETED)
            finally:
                changed.cancel()
                gone.cancel()

    def _update_idle(self) -> None:
        busy = len(self.browsers) > 0 or len(self.sessions) > 0 or self.chats.busy
        if busy:
            self.idle_since = None
        elif self.idle_since is None:
            self.idle_since = time.monotonic()

    # ----- extension peers ------------------------------------------------------------------

    def new_authenticator(self) -> PeerAuthenticator:
        return PeerAuthenticator(self.secrets, self.codes)

    async def browser_connected(self, browser: Browser, paired_with: PairingCode | None) -> None:
        previous = self.browsers.add(browser)
        if previous is not None:
            previous.channel.close(
                RpcError("no_browser_connected", "the browser reconnected", "browser_disconnected")
            )
            if previous.close is not None:
                await previous.close()
        hello = browser.hello
        self._away_tokens.pop(browser.instance_id, None)
        log.info("browser connected: %s (paired now: %s)", browser.describe(), paired_with is not None)
        # Panel sessions are the chat service's: it brings them back when their next turn starts.
        listed = {s for s in hello.session_ids if not s.startswith(protocol.PANEL_SESSION_PREFIX)}
        for session_id in listed:
            session = self.sessions.get(session_id)
            if session is None:
                self.sessions.add(Session(session_id, browser.instance_id))
                log.info("adopted session %s from browser %s", session_id, browser.instance_id)
            elif session.browser_id == browser.instance_id:
                session.offline_since = None
        for session in self.sessions.of_browser(browser.instance_id):
            if session.session_id not in listed and session.offline_since is not None:
                self._forget_session(session, "its Agent Window is gone after the browser reconnected")
        # A panel session the browser holds with no live turn was left claimed by a daemon that died
        # mid-turn: released, or the person's tab stays bound to it for every new chat.
        for session_id in set(hello.session_ids) - listed:
            if not self.chats.live(session_id):
                log.info("released panel session %s: its conversation has no live turn", session_id)
                self._spawn_background(self._release_leftover(browser, session_id))
        self._notify()

    async def _release_leftover(self, browser: Browser, session_id: str) -> None:
        if not self.chats.live(session_id):
            await self._tell_session_stop(browser, session_id)

    def browser_disconnected(self, browser: Browser, why: str) -> None:
        if not self.browsers.remove(browser):
            return
        browser.channel.close(
            RpcError(
                "no_browser_connected",
                f"browser {browser.describe()} disconnected ({why})",
                "browser_disconnected",
                hint="wait a moment and retry; `tabpilot browser list` shows connected browsers",
            )
        )
        if browser.hello.launch_token is not None:
            self._away_tokens[browser.instance_id] = browser.hello.launch_token
        now = time.monotonic()
        for session in self.sessions.of_browser(browser.instance_id):
            session.offline_since = now
        self.chats.browser_gone(browser.instance_id)
        log.info("browser disconnected: %s (%s)", browser.describe(), why)
        self._notify()

    def browser_event(self, browser: Browser, name: str, payload: dict[str, Any]) -> None:
        if name == "session.window_closed":
            session = self.sessions.get(str(payload.get("session_id")))
            if session is not None and session.browser_id == browser.instance_id:
                self._forget_session(session, "the person closed its Agent Window")
        elif name in ("session.user_interrupt", "session.user_resume"):
            session = self.sessions.get(str(payload.get("session_id")))
            if session is None or session.browser_id != browser.instance_id:
                return
            if name == "session.user_interrupt":
                log.info("session %s: the person pressed Stop", session.session_id)
                session.interrupt()
                if session.kind == "panel":
                    # Stop in the page ends the side-panel turn that was acting there.
                    self._spawn_background(self.chats.stop_session(session.session_id))
            elif session.resume():
                log.info("session %s: the person resumed it", session.session_id)
        elif name == "chat.tab_closed":
            self._spawn_background(self.chats.tab_closed(browser.instance_id, payload))
        elif name == "chat.approval":
            self.chats.approval(browser.instance_id, payload)
        elif name == "browser.label_changed":
            label = payload.get("label")
            if isinstance(label, str):
                browser.hello.label = label
        else:
            log.info("event %s from %s: %s", name, browser.instance_id, payload)

    def _spawn_background(self, coro: Any) -> None:
        task = asyncio.ensure_future(coro)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    def silent_browsers(self) -> list[Browser]:
        """Browsers that have not sent a frame within the peer timeout."""
        limit = time.monotonic() - self.config.peer_timeout_s
        return [b for b in self.browsers.all() if b.last_seen < limit]

    # ----- housekeeping ---------------------------------------------------------------------

    async def housekeeping(self) -> None:
        """Expire idle sessions, end sessions whose browser stayed away, stop when idle."""
        now = time.monotonic()
        for session in self.sessions:
            if session.kind == "panel":
                continue
            if session.offline_since is not None:
                if now - session.offline_since > self.config.reconnect_grace_s:
                    self._forget_session(session, "its browser did not come back")
            elif (
                session.idle_s() > self.config.session_idle_s
                and not session.queue.locked()
                and not session.waiting
            ):
                log.info("session %s idle for %.0f s: stopping it", session.session_id, session.idle_s())
                await self._stop_one(session)
        self._update_idle()
        if self.idle_since is not None and now - self.idle_since > self.config.daemon_idle_s:
            log.info("no browser and no session for %.0f s: exiting", now - self.idle_since)
            self.stop_requested.set()

    async def shutdown(self) -> None:
        """Stop every running agent turn; what they wrote so far is kept, marked interrupted."""
        await self.chats.shutdown()

    def _forget_session(self, session: Session, why: str) -> None:
        if self.sessions.remove(session.session_id) is not None:
            log.info("session %s ended: %s", session.session_id, why)
            self._notify()

    # ----- client requests ------------------------------------------------------------------

    async def handle_client(self, frame: Any, abandon: asyncio.Event) -> dict[str, Any]:
        """Answer one request from a CLI/MCP client. ``abandon`` is set when the client leaves."""
        if protocol.classify(frame) != "request":
            frame_id = (
                frame.get("id") if isinstance(frame, dict) and isinstance(frame.get("id"), str) else None
            )
            return protocol.error_response(
                frame_id, RpcError("protocol_error", "not a request frame", "bad_frame")
            )
        frame_id = frame["id"]
        method = frame["method"]
        try:
            handler = self._handlers.get(method)
            if frame.get("run") is not None and not method.startswith("tool."):
                # A side-panel agent drives its panel session's tabs and nothing else.
                raise RpcError(
                    "permission_denied",
                    f"{method} is not for a side-panel agent",
                    "session_inactive",
                    hint="act on the panel's tab with the page verbs",
                )
            query = frame.get("browser")
            if method in BROWSER_CHECKED and isinstance(query, str) and query and self.browsers.all():
                self.browsers.select(query)
            if handler is not None:
                result = await handler(frame, abandon)
            elif method in PUBLIC_TOOLS:
                result = await self._call_tool(frame, abandon)
            else:
                # Internal tools (tool.session_stop…) included: only the daemon may send those.
                raise RpcError("unknown_method", f"the daemon does not know {method!r}")
            return protocol.response(frame_id, result)
        except RpcError as err:
            return protocol.error_response(frame_id, err)
        except Exception as exc:
            log.exception("request %s failed", method)
            return protocol.error_response(frame_id, RpcError("protocol_error", f"daemon error: {exc}"))

    @staticmethod
    def _params(frame: dict[str, Any]) -> dict[str, Any]:
        return dict(frame.get("params") or {})

    @staticmethod
    def _timeout_s(params: dict[str, Any], default_s: float) -> float:
        raw = params.get("timeout_ms")
        if raw is None:
            return default_s
        if not isinstance(raw, int | float) or isinstance(raw, bool) or raw < 0:
            raise RpcError("invalid_params", f"timeout_ms must be a non-negative number, not {raw!r}")
        return raw / 1000.0

    async def _status(self, frame: dict[str, Any], abandon: asyncio.Event) -> dict[str, Any]:
        return {
            "version": __version__,
            "protocol_version": protocol.PROTOCOL_VERSION,
            "pid": os.getpid(),
            "port": self.port,
            "home": self.home,
            "uptime_s": round(time.monotonic() - self.started, 1),
            "browsers": (await self._browser_list(frame, abandon))["browsers"],
            "sessions": [s.to_json() for s in self.sessions if s.kind != "panel"],
            "paired": len(self.secrets.all()),
        }

    async def _stop(self, frame: dict[str, Any], abandon: asyncio.Event) -> dict[str, Any]:
        self.stop_requested.set()
        return {"stopping": True}

    async def _pair_create(self, frame: dict[str, Any], abandon: asyncio.Event) -> dict[str, Any]:
        params = self._params(frame)
        ttl = params.get("ttl_s", 300)
        if not isinstance(ttl, int | float) or not 10 <= ttl <= 3600:
            raise RpcError("invalid_params", "ttl_s must be between 10 and 3600 seconds")
        entry = self.codes.create(float(ttl), launch=params.get("launch") is True)
        result: dict[str, Any] = {"code": entry.display, "expires_in_s": ttl, "port": self.port}
        throttled = self.codes.retry_after()
        if throttled > 0 and not entry.launch:
            result["throttled_for_s"] = round(throttled, 1)
        return result

    async def _pair_wait(self, frame: dict[str, Any], abandon: asyncio.Event) -> dict[str, Any]:
        params = self._params(frame)
        code = params.get("code")
        entry = self.codes.get(code) if isinstance(code, str) else None
        if entry is None:
            raise RpcError(
                "not_found",
                "unknown or expired pairing code",
                "pairing_expired",
                hint="run `tabpilot pair` again for a fresh code",
            )
        timeout_s = min(self._timeout_s(params, 300.0), max(0.0, entry.expires_at - self.codes.clock()))
        used_by = await self._wait_until(lambda: entry.used_by, timeout_s, abandon)
        if not used_by:
            throttled = self.codes.retry_after()
            note = (
                f" (pairing is throttled after wrong codes: the next try is accepted in {throttled:.0f} s)"
                if throttled > 0
                else ""
            )
            raise RpcError(
                "timeout",
                f"the pairing code expired before a browser used it{note}",
                "pairing_expired",
                hint="run `tabpilot pair` again and type the code into the extension's popup",
            )
        browser = self.browsers.get(used_by)
        label = browser.label if browser else ""
        name = browser.hello.browser_name if browser else ""
        return {"instance_id": used_by, "label": label, "browser": name}

    async def _browser_list(self, frame: dict[str, Any], abandon: asyncio.Event) -> dict[str, Any]:
        return {
            "browsers": [
                b.to_json([s.session_id for s in self.sessions.of_browser(b.instance_id)])
                for b in self.browsers.all()
            ]
        }

    async def _browser_wait(self, frame: dict[str, Any], abandon: asyncio.Event) -> dict[str, Any]:
        params = self._params(frame)
        token = params.get("launch_token")
        if not isinstance(token, str) or not token:
            raise RpcError("invalid_params", "browser.wait needs a launch_token")
        timeout_s = self._timeout_s(params, 30.0)
        browser = await self._wait_until(lambda: self.browsers.by_launch_token(token), timeout_s, abandon)
        if browser is None:
            raise RpcError(
                "timeout", f"the launched browser did not connect within {timeout_s:.0f} s", "rpc_timeout"
            )
        return browser.to_json([s.session_id for s in self.sessions.of_browser(browser.instance_id)])

    async def _select_browser(self, query: str | None, abandon: asyncio.Event) -> Browser:
        """Pick a browser; just after start-up, give paired browsers a moment to (re)connect."""
        try:
            return self.browsers.select(query)
        except RpcError as err:
            waited = time.monotonic() - self.started
            if err.code not in ("no_browser_connected", "not_found") or not self.secrets.all():
                raise
            remaining = self.config.startup_wait_s - waited
            if remaining <= 0:
                raise

            def pick() -> Browser | None:
                try:
                    return self.browsers.select(query)
                except RpcError:
                    return None

            browser = await self._wait_until(pick, remaining, abandon)
            if browser is None:
                raise
            return browser

    async def _session_start(self, frame: dict[str, Any], abandon: asyncio.Event) -> dict[str, Any]:
        params = self._params(frame)
        name = params.get("name")
        if name is not None and not isinstance(name, str):
            raise RpcError("invalid_params", "session name must be a string")
        session_id = check_session_name(name) if name else self.sessions.new_id()
        if self.sessions.get(session_id) is not None:
            raise RpcError(
                "invalid_params",
                f"session {session_id!r} already exists",
                "session_exists",
                hint="pick another name, or use it with --session",
            )
        session = await self._open_session(session_id, frame.get("browser"), abandon)
        return {
            "session_id": session.session_id,
            "browser": session.browser_id,
            "window_id": session.window_id,
        }

    async def _open_session(
        self, session_id: str, browser_query: Any, abandon: asyncio.Event, reuse: bool = False
    ) -> Session:
        """Open an Agent Window for a new session. With ``reuse``, a session that appeared while we
        waited for a browser (a reconnecting browser brought it back) is used as it is."""
        browser = await self._select_browser(
            browser_query if isinstance(browser_query, str) else None, abandon
        )
        existing = self.sessions.get(session_id)
        if existing is not None and reuse:
            return existing
        session = self.sessions.add(Session(session_id, browser.instance_id))
        self._notify()
        # Hold the queue while the window opens, so calls racing in wait for a usable session.
        async with session.queue:
            try:
                result = await browser.channel.call(
                    "tool.session_start",
                    {"session_id": session_id, "timeout_ms": int(SESSION_START_TIMEOUT_S * 1000)},
                    SESSION_START_TIMEOUT_S,
                    stop_on=((abandon, client_gone),),
                )
            except RpcError:
                self._forget_session(session, "its Agent Window could not be opened")
                raise
            session.window_id = result.get("window_id") if isinstance(result, dict) else None
            session.touch()
        log.info("session %s started in %s", session_id, browser.describe())
        return session

    async def _session_stop(self, frame: dict[str, Any], abandon: asyncio.Event) -> dict[str, Any]:
        params = self._params(frame)
        if params.get("all"):
            targets = [s for s in self.sessions if s.kind != "panel"]
        else:
            session_id = params.get("session_id") or frame.get("session")
            if not isinstance(session_id, str) or not session_id:
                raise RpcError(
                    "invalid_params",
                    "session.stop needs a session_id or all",
                    hint="`tabpilot session stop ID` or `tabpilot session stop --all`",
                )
            if session_id.startswith(protocol.PANEL_SESSION_PREFIX):
                raise RpcError(
                    "permission_denied",
                    f"session {session_id!r} belongs to a side-panel conversation",
                    "session_inactive",
                    hint="the person ends it from the panel",
                )
            targets = [self.sessions.require(session_id)]
        stopped = []
        for session in targets:
            await self._stop_one(session)
            stopped.append(session.session_id)
        return {"stopped": stopped}

    async def _stop_one(self, session: Session) -> None:
        """Forget the session at once, then ask its browser to close the Agent Window."""
        self._forget_session(session, "stopped")
        browser = self.browsers.get(session.browser_id)
        if browser is None:
            return
        try:
            await browser.channel.call(
                "tool.session_stop", {"session_id": session.session_id, "timeout_ms": 10000}, 10.0
            )
        except RpcError as err:
            if err.reason != "unknown_session":
                log.warning("session %s: the browser could not close its window: %s", session.session_id, err)

    async def _session_list(self, frame: dict[str, Any], abandon: asyncio.Event) -> dict[str, Any]:
        return {"sessions": [s.to_json() for s in self.sessions if s.kind != "panel"]}

    async def _session_resume(self, frame: dict[str, Any], abandon: asyncio.Event) -> dict[str, Any]:
        """The agent acknowledges the person's Stop and carries on."""
        session_id = self._params(frame).get("session_id") or frame.get("session") or DEFAULT_SESSION
        session = self.sessions.require(str(session_id))
        resumed = session.resume()
        if resumed:
            log.info("session %s resumed by the agent", session.session_id)
        return {"session_id": session.session_id, "resumed": resumed}

    # ----- tool calls -----------------------------------------------------------------------

    async def _call_tool(self, frame: dict[str, Any], abandon: asyncio.Event) -> Any:
        method = frame["method"]
        params = self._params(frame)
        params.pop("session_id", None)
        timeout_s = self._timeout_s(params, self.config.default_tool_timeout_s)
        params["timeout_ms"] = int(timeout_s * 1000)
        session_id = frame.get("session") or DEFAULT_SESSION
        if not isinstance(session_id, str):
            raise RpcError("invalid_params", "session must be a string")
        if session_id.startswith(protocol.PANEL_SESSION_PREFIX):
            return await self._call_panel_tool(frame, session_id, method, params, timeout_s, abandon)
        if method == "tool.upload":
            # The files are read here: a missing one fails before anything reaches the page.
            params = await asyncio.to_thread(uploads.prepare, params)
        for attempt in range(2):
            session = self.sessions.get(session_id) or await self._adopted(session_id, abandon)
            if session is None:
                if session_id != DEFAULT_SESSION:
                    self.sessions.require(session_id)
                session = await self._open_session(session_id, frame.get("browser"), abandon, reuse=True)
            self._check_browser_of(session, frame.get("browser"))
            try:
                return await self._run_in_session(session, method, params, timeout_s, abandon)
            except RpcError as err:
                # The browser no longer knows the session (it restarted): the default session is
                # recreated once; a named one is reported gone.
                if err.reason == "unknown_session" and self.sessions.get(session_id) is session:
                    self._forget_session(session, "the browser no longer knows it")
                    if session_id == DEFAULT_SESSION and attempt == 0:
                        continue
                raise
        raise AssertionError("unreachable")

    async def _call_panel_tool(
        self,
        frame: dict[str, Any],
        session_id: str,
        method: str,
        params: dict[str, Any],
        timeout_s: float,
        abandon: asyncio.Event,
    ) -> Any:
        """A call of a side-panel agent: only during its live turn, with the turn's run token."""
        turn = self.chats.authorize(session_id, frame.get("run"))
        deadline = time.monotonic() + SESSION_READY_S
        while not turn.ready.is_set() and turn.refused is None and time.monotonic() < deadline:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(turn.ready.wait(), 0.05)
        if turn.refused is not None:
            raise turn.refused
        session = self.sessions.get(session_id)
        if not turn.ready.is_set() or session is None:
            raise RpcError(
                "no_browser_connected",
                "the browser does not know this panel session yet",
                "browser_disconnected",
                hint="the panel's browser is not connected; retry in a moment",
            )
        if method == "tool.session_stop":
            raise RpcError(
                "permission_denied",
                "a panel session is ended by the person, in the panel",
                "session_inactive",
            )
        refused = reach.refusal(method, params)
        if refused is not None:
            raise refused
        if method == "tool.upload":
            params = await asyncio.to_thread(uploads.prepare, params)
        call_id = self.chats.tool_started(turn, method, params)
        started = time.monotonic()
        asked = False
        relay = CLIENT_PROGRESS.get()

        def on_progress(payload: dict[str, Any]) -> None:
            nonlocal asked
            asked = asked or payload.get("waiting") == "approval"
            if relay is not None:
                relay(payload)

        try:
            result = await self._run_in_session(session, method, params, timeout_s, abandon, on_progress)
        except RpcError as err:
            if asked and err.reason == "browser_disconnected":
                # The extension went away while the person was asked: nobody can answer now, so no.
                err = RpcError(
                    "permission_denied",
                    f"{method} was not allowed: the browser's extension restarted before the person answered",
                    "approval_timeout",
                    hint="no answer is a no; ask the person in your reply instead of trying again",
                )
                self.chats.approvals_ended(turn, "stopped", via="the extension restarted")
            self.chats.tool_finished(turn, call_id, None, err, (time.monotonic() - started) * 1000)
            raise err from None
        self.chats.tool_finished(turn, call_id, result, None, (time.monotonic() - started) * 1000)
        return result

    # ----- the side panel -------------------------------------------------------------------

    async def browser_request(self, browser: Browser, frame: dict[str, Any]) -> None:
        """Answer a request from an authenticated extension (its side panel); the reply is posted in
        order with the chat events that browser receives."""
        method = frame["method"]
        handler = self.chats.handlers.get(method)
        try:
            if handler is None:
                raise RpcError("unknown_method", f"the daemon serves no {method!r} to browsers")
            reply = protocol.response(
                frame["id"], await handler(browser.instance_id, dict(frame.get("params") or {}))
            )
        except RpcError as err:
            reply = protocol.error_response(frame["id"], err)
        except Exception as exc:
            log.exception("browser request %s failed", method)
            reply = protocol.error_response(frame["id"], RpcError("protocol_error", f"daemon error: {exc}"))
        browser.channel.post(reply)
        self._update_idle()

    def _post(self, browser_id: str, frame: dict[str, Any]) -> None:
        browser = self.browsers.get(browser_id)
        if browser is not None:
            browser.channel.post(frame)

    async def _ensure_panel_session(self, meta: Meta) -> None:
        """Make the conversation's browser (and our table) know its panel session, bound to its tab."""
        browser = self.browsers.get(meta.browser)
        if browser is None:
            raise RpcError(
                "no_browser_connected", "the panel's browser is not connected", "browser_disconnected"
            )
        session = self.sessions.get(meta.session_id)
        if session is None or session.browser_id != meta.browser:
            self.sessions.remove(meta.session_id)
            session = self.sessions.add(Session(meta.session_id, meta.browser, kind="panel"))
        session.resume()
        result = await browser.channel.call(
            "tool.session_start",
            {
                "session_id": meta.session_id,
                "kind": "panel",
                "tab_id": meta.tab_id,
                "window_id": meta.window_id,
                "timeout_ms": 10000,
            },
            10.0,
        )
        if isinstance(result, dict) and isinstance(result.get("window_id"), int):
            session.window_id = result["window_id"]
        session.touch()
        self._notify()

    def _end_panel_session(self, session_id: str) -> None:
        session = self.sessions.remove(session_id)
        if session is None:
            return
        self._notify()
        browser = self.browsers.get(session.browser_id)
        if browser is not None:
            self._spawn_background(self._tell_session_stop(browser, session_id))

    @staticmethod
    async def _tell_session_stop(browser: Browser, session_id: str) -> None:
        with contextlib.suppress(RpcError):
            await browser.channel.call(
                "tool.session_stop", {"session_id": session_id, "timeout_ms": 5000}, 5.0
            )

    def _interrupt_session(self, session_id: str) -> None:
        session = self.sessions.get(session_id)
        if session is not None:
            session.interrupt()

    def _check_browser_of(self, session: Session, query: Any) -> None:
        """``--browser`` names a connected browser, and the one the session lives in."""
        if not isinstance(query, str) or not query or not self.browsers.all():
            return
        browser = self.browsers.select(query)
        if browser.instance_id != session.browser_id:
            raise RpcError(
                "invalid_params",
                f"session {session.session_id!r} lives in browser {session.browser_id}, not in "
                f"{browser.describe()}",
                hint="drop --browser, or start a session in that browser: "
                "`tabpilot --browser ID session start NAME`",
            )

    async def _adopted(self, session_id: str, abandon: asyncio.Event) -> Session | None:
        """Just after start-up, wait for a paired browser to reconnect and bring ``session_id`` back."""
        remaining = min(ADOPTION_WAIT_S, self.config.startup_wait_s) - (time.monotonic() - self.started)
        if remaining <= 0 or not self.secrets.all():
            return None
        paired = {p.instance_id for p in self.secrets.all()}

        def back_or_all_here() -> Session | bool | None:
            # Once every paired browser is back, a session none of them brought is really unknown.
            return self.sessions.get(session_id) or paired <= {b.instance_id for b in self.browsers.all()}

        found = await self._wait_until(back_or_all_here, remaining, abandon)
        return found if isinstance(found, Session) else None

    async def _run_in_session(
        self,
        session: Session,
        method: str,
        params: dict[str, Any],
        timeout_s: float,
        abandon: asyncio.Event,
        on_progress: Callable[[dict[str, Any]], None] | None = None,
    ) -> Any:
        if session.paused:
            raise RpcError(
                "user_aborted",
                f"session {session.session_id!r} is paused: the person pressed Stop",
                "session_paused",
                hint="ask the person before continuing; then run `tabpilot session resume`",
            )
        interrupted = session.interrupted
        session.waiting += 1
        try:
            outcome = await self._acquire(session, timeout_s + 5.0, abandon, interrupted)
        finally:
            session.waiting -= 1
        if outcome == "abandoned":
            raise RpcError(
                "cancelled", f"{method} cancelled before it ran: the client went away", "client_disconnected"
            )
        if outcome == "interrupted":
            raise stopped_by_person(method)
        if outcome == "timeout":
            raise RpcError(
                "timeout",
                f"session {session.session_id!r} stayed busy; {method} did not start",
                "rpc_timeout",
                hint="wait for the session's other command, or use another session",
            )
        try:
            if self.sessions.get(session.session_id) is not session:
                raise RpcError(
                    "not_found",
                    f"session {session.session_id!r} was stopped",
                    "session_stopped",
                    hint=f"start it again with `tabpilot session start {session.session_id}`",
                )
            browser = await self._browser_of(session, timeout_s, abandon)
            session.touch()
            try:
                result = await browser.channel.call(
                    method,
                    {**params, "session_id": session.session_id},
                    timeout_s,
                    stop_on=((abandon, client_gone), (interrupted, stopped_by_person)),
                    on_progress=on_progress or CLIENT_PROGRESS.get(),
                )
            except RpcError as err:
                # An error may quote the page (a cover's text, an option's label): fenced like a result.
                err.data["page_nonce"] = session.page_nonce
                raise
            session.touch()
            if isinstance(result, dict):
                result["page_nonce"] = session.page_nonce
            return result
        finally:
            session.queue.release()

    async def _acquire(
        self, session: Session, timeout_s: float, abandon: asyncio.Event, interrupted: asyncio.Event
    ) -> str:
        """Wait for the session's turn: "ok" (the lock is held), "abandoned", "interrupted" or "timeout"."""
        acquire = asyncio.ensure_future(session.queue.acquire())
        gone = asyncio.ensure_future(abandon.wait())
        stop = asyncio.ensure_future(interrupted.wait())
        try:
            await asyncio.wait({acquire, gone, stop}, timeout=timeout_s, return_when=asyncio.FIRST_COMPLETED)
        finally:
            gone.cancel()
            stop.cancel()
        if not acquire.done():
            acquire.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await acquire
        held = acquire.done() and not acquire.cancelled()
        reason = "abandoned" if abandon.is_set() else "interrupted" if interrupted.is_set() else "ok"
        if not held:
            return reason if reason != "ok" else "timeout"
        if reason != "ok":
            session.queue.release()
        return reason

    async def _browser_of(self, session: Session, timeout_s: float, abandon: asyncio.Event) -> Browser:
        browser = self.browsers.get(session.browser_id)
        if browser is not None:
            return browser
        token = self._away_tokens.get(session.browser_id)
        if token is not None and self._managed_gone(token):
            # A browser whose process is gone does not come back: waiting out the grace would help nobody.
            raise RpcError(
                "no_browser_connected",
                f"the browser of session {session.session_id!r} ({session.browser_id}) is no longer running",
                "browser_disconnected",
                hint="start it again with `tabpilot browser launch`, then retry",
            )
        wait_s = min(timeout_s, self.config.reconnect_grace_s)
        browser = await self._wait_until(lambda: self.browsers.get(session.browser_id), wait_s, abandon)
        if browser is None:
            raise RpcError(
                "no_browser_connected",
                f"the browser of session {session.session_id!r} ({session.browser_id}) is not connected",
                "browser_disconnected",
                hint="reopen that browser (or `tabpilot browser launch`), then retry",
            )
        return browser
