"""A fake OpenAI Responses API on loopback, for running the real Codex CLI without a model.

Codex reaches it through a custom model provider (``-c model_providers.fake=…``). Replies are
scripted like fake_anthropic's: ``[[script:NAME]]`` in the person's message names a script, and the
step is how many tool outputs came back since. Every request is recorded.
"""

from __future__ import annotations

import contextlib
import http.server
import json
import threading
from dataclasses import dataclass, field
from typing import Any

from fake_anthropic import MARK, Say, Use


def _texts(item: dict[str, Any]) -> list[str]:
    content = item.get("content")
    if isinstance(content, str):
        return [content]
    return [c.get("text", "") for c in content or [] if isinstance(c, dict)]


def script_position(items: list[dict[str, Any]]) -> tuple[str | None, int]:
    for at in range(len(items) - 1, -1, -1):
        item = items[at]
        if item.get("role") != "user":
            continue
        for text in _texts(item):
            if MARK in text:
                name = text.split(MARK, 1)[1].split("]]", 1)[0]
                outputs = sum(1 for later in items[at + 1 :] if later.get("type") == "function_call_output")
                return name, outputs
    return None, 0


@dataclass
class FakeOpenAI:
    scripts: dict[str, list[Say | Use]]
    requests: list[dict[str, Any]] = field(default_factory=list)
    server: http.server.ThreadingHTTPServer | None = None

    @property
    def base_url(self) -> str:
        assert self.server is not None
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def provider_args(self) -> list[str]:
        """Codex config flags that point it at this server."""
        return [
            "-c",
            f'model_providers.fake={{name="fake", base_url="{self.base_url}", wire_api="responses"}}',
            "-c",
            'model_provider="fake"',
            "-c",
            'model="gpt-5"',
        ]

    def start(self) -> FakeOpenAI:
        fake = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                return

            def do_GET(self) -> None:
                data = json.dumps({"data": [], "models": []}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))) or b"{}")
                fake.requests.append({"path": self.path, "body": body})
                name, step = script_position(body.get("input") or [])
                script = fake.scripts.get(name or "", [])
                reply = script[step] if step < len(script) else Say([f"(no step {step} in {name!r})"])
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    self._stream(reply, len(fake.requests), body.get("tools") or [])

            def _event(self, obj: dict[str, Any]) -> None:
                self.wfile.write(f"event: {obj['type']}\ndata: {json.dumps(obj)}\n\n".encode())
                self.wfile.flush()

            def _stream(self, reply: Say | Use, n: int, tools: list[dict[str, Any]]) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Connection", "close")
                self.end_headers()
                self.close_connection = True
                self._event({"type": "response.created", "response": {"id": f"resp_{n}"}})
                if isinstance(reply, Say):
                    item = {"type": "message", "role": "assistant", "id": f"msg_{n}", "content": []}
                    self._event({"type": "response.output_item.added", "output_index": 0, "item": item})
                    for chunk in reply.chunks:
                        self._event(
                            {
                                "type": "response.output_text.delta",
                                "item_id": item["id"],
                                "output_index": 0,
                                "content_index": 0,
                                "delta": chunk,
                            }
                        )
                    done = {**item, "content": [{"type": "output_text", "text": "".join(reply.chunks)}]}
                    self._event({"type": "response.output_item.done", "output_index": 0, "item": done})
                else:
                    call = {
                        "type": "function_call",
                        "id": f"fc_{n}",
                        "call_id": f"call_{n}",
                        "name": reply.name,
                        "arguments": json.dumps(reply.input),
                    }
                    # Codex offers a few MCP tools in a namespace (`mcp__tabpilot` + `snapshot`),
                    # many as flat functions (`mcp__tabpilot__snapshot`): call them as offered.
                    namespace, _, name = reply.name.rpartition("__")
                    if not any(t.get("name") == reply.name for t in tools) and any(
                        t.get("type") == "namespace" and t.get("name") == namespace for t in tools
                    ):
                        call.update(name=name, namespace=namespace)
                    self._event(
                        {
                            "type": "response.output_item.added",
                            "output_index": 0,
                            "item": {**call, "arguments": ""},
                        }
                    )
                    self._event({"type": "response.output_item.done", "output_index": 0, "item": call})
                usage = {
                    "input_tokens": 10,
                    "input_tokens_details": None,
                    "output_tokens": 5,
                    "output_tokens_details": None,
                    "total_tokens": 15,
                }
                self._event({"type": "response.completed", "response": {"id": f"resp_{n}", "usage": usage}})

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def close(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()
