"""A fake Anthropic Messages API on loopback, for running the real Claude Code CLI without a model.

Replies are scripted: the person's message names a script with ``[[script:NAME]]``, and the step
is how many tool results came back since that message. Every request is recorded for assertions.
"""

from __future__ import annotations

import contextlib
import http.server
import json
import threading
import time
from dataclasses import dataclass, field
from typing import Any

MARK = "[[script:"


@dataclass
class Say:
    chunks: list[str]
    delay_s: float = 0.0


@dataclass
class Use:
    name: str
    input: dict[str, Any]
    text: str = ""


@dataclass
class Fail:
    """The API fails this step with an HTTP error, every time it is asked."""

    status: int = 500
    message: str = "Internal server error"


Reply = Say | Use | Fail


@dataclass
class FakeAnthropic:
    scripts: dict[str, list[Reply]]
    requests: list[dict[str, Any]] = field(default_factory=list)
    server: http.server.ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        assert self.server is not None
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def start(self) -> FakeAnthropic:
        fake = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                return

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))) or b"{}")
                fake.requests.append({"path": self.path, "body": body})
                if "count_tokens" in self.path:
                    return self._json({"input_tokens": 10})
                if not body.get("stream"):
                    return self._json(_message([{"type": "text", "text": "Chat"}], "end_turn"))
                reply = fake.reply_for(body.get("messages") or [])
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    if isinstance(reply, Fail):
                        error = {"type": "api_error", "message": reply.message}
                        return self._json({"type": "error", "error": error}, reply.status)
                    self._stream(reply)

            def _json(self, obj: dict[str, Any], status: int = 200) -> None:
                data = json.dumps(obj).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _event(self, name: str, obj: dict[str, Any]) -> None:
                self.wfile.write(f"event: {name}\ndata: {json.dumps(obj)}\n\n".encode())
                self.wfile.flush()

            def _stream(self, reply: Say | Use) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Connection", "close")
                self.end_headers()
                self.close_connection = True
                self._event("message_start", {"type": "message_start", "message": _message([], None)})
                index = 0
                text = reply.chunks if isinstance(reply, Say) else ([reply.text] if reply.text else [])
                if text:
                    self._event(
                        "content_block_start",
                        {
                            "type": "content_block_start",
                            "index": 0,
                            "content_block": {"type": "text", "text": ""},
                        },
                    )
                    for chunk in text:
                        if isinstance(reply, Say) and reply.delay_s:
                            time.sleep(reply.delay_s)
                        self._event(
                            "content_block_delta",
                            {
                                "type": "content_block_delta",
                                "index": 0,
                                "delta": {"type": "text_delta", "text": chunk},
                            },
                        )
                    self._event("content_block_stop", {"type": "content_block_stop", "index": 0})
                    index = 1
                if isinstance(reply, Use):
                    tool_id = f"toolu_{len(fake.requests)}"
                    self._event(
                        "content_block_start",
                        {
                            "type": "content_block_start",
                            "index": index,
                            "content_block": {
                                "type": "tool_use",
                                "id": tool_id,
                                "name": reply.name,
                                "input": {},
                            },
                        },
                    )
                    self._event(
                        "content_block_delta",
                        {
                            "type": "content_block_delta",
                            "index": index,
                            "delta": {"type": "input_json_delta", "partial_json": json.dumps(reply.input)},
                        },
                    )
                    self._event("content_block_stop", {"type": "content_block_stop", "index": index})
                stop = "tool_use" if isinstance(reply, Use) else "end_turn"
                self._event(
                    "message_delta",
                    {
                        "type": "message_delta",
                        "delta": {"stop_reason": stop, "stop_sequence": None},
                        "usage": {"output_tokens": 5},
                    },
                )
                self._event("message_stop", {"type": "message_stop"})

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def reply_for(self, messages: list[dict[str, Any]]) -> Reply:
        name, step = script_position(messages)
        script = self.scripts.get(name or "", [])
        if step < len(script):
            return script[step]
        return Say([f"(no step {step} in script {name!r})"])

    def claude_env(self, home: str) -> dict[str, str]:
        """What Claude Code needs to talk to this fake and to nothing else: a private HOME, no telemetry."""
        return {
            "HOME": home,
            "ANTHROPIC_BASE_URL": self.url,
            "ANTHROPIC_API_KEY": "sk-test",
            "DISABLE_TELEMETRY": "1",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        }

    def main_requests(self) -> list[dict[str, Any]]:
        return [r["body"] for r in self.requests if r["body"].get("stream")]

    def close(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()


def _texts(message: dict[str, Any]) -> list[str]:
    content = message.get("content")
    if isinstance(content, str):
        return [content]
    return [b.get("text", "") for b in content or [] if isinstance(b, dict) and b.get("type") == "text"]


def script_position(messages: list[dict[str, Any]]) -> tuple[str | None, int]:
    """The script the latest marked user message names, and how many tool results followed it."""
    for at in range(len(messages) - 1, -1, -1):
        message = messages[at]
        if message.get("role") != "user":
            continue
        for text in _texts(message):
            if MARK in text:
                name = text.split(MARK, 1)[1].split("]]", 1)[0]
                later = messages[at + 1 :]
                results = sum(
                    1
                    for m in later
                    for b in (m.get("content") if isinstance(m.get("content"), list) else [])
                    if isinstance(b, dict) and b.get("type") == "tool_result"
                )
                return name, results
    return None, 0


def _message(content: list[dict[str, Any]], stop: str | None) -> dict[str, Any]:
    return {
        "id": f"msg_fake{time.monotonic_ns()}",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5",
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 1},
    }
