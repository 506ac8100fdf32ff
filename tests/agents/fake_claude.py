"""A stdlib stand-in for the Claude Code CLI, speaking the stream-json protocol as 2.1.328 does.

For fast unit tests and for what the real CLI cannot be made to do on cue (ignore SIGTERM, leave a
child behind). Its script is the person's message: ``STUB: say Hel | say lo | sleep 0.2 | hang``.
Steps: ``say TEXT``, ``sleep S``, ``hang`` (until interrupted), ``ignore-term`` (SIGTERM and
interrupts are ignored from then on), ``child`` (a sleeping process in its group), ``ask TOOL JSON``
(a can_use_tool request), ``fail TEXT``, ``exit N``. It writes ``record-<pid>.json`` (argv, env,
stdin lines, signals seen) into its working folder.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import uuid

RECORD: dict = {
    "started": time.time(),
    "pid": os.getpid(),
    "argv": sys.argv,
    "env": dict(os.environ),
    "cwd": os.getcwd(),
    "stdin": [],
    "signals": [],
    "children": [],
}
LOCK = threading.Lock()
SESSION = str(uuid.uuid4())
interrupted = threading.Event()
stdin_closed = threading.Event()
answers: dict[str, dict] = {}
answered = threading.Condition()
ignore_interrupts = False


def save() -> None:
    with LOCK:
        path = os.path.join(os.getcwd(), f"record-{os.getpid()}.json")
        with open(f"{path}.tmp", "w") as handle:
            json.dump(RECORD, handle)
        os.replace(f"{path}.tmp", path)


def emit(obj: dict) -> None:
    with LOCK:
        sys.stdout.write(json.dumps(obj) + "\n")
        sys.stdout.flush()


def stream(event: dict) -> None:
    emit(
        {
            "type": "stream_event",
            "event": event,
            "session_id": SESSION,
            "parent_tool_use_id": None,
            "uuid": str(uuid.uuid4()),
        }
    )


def on_term(signum: int, frame: object) -> None:
    RECORD["signals"].append(signum)
    save()
    sys.exit(143)


def read_stdin(messages: list, got_user: threading.Event) -> None:
    for line in sys.stdin:
        RECORD["stdin"].append(line.rstrip("\n"))
        save()
        obj = json.loads(line)
        if obj.get("type") == "control_request":
            subtype = obj["request"].get("subtype")
            if subtype == "interrupt" and not ignore_interrupts:
                emit(
                    {
                        "type": "control_response",
                        "response": {
                            "subtype": "success",
                            "request_id": obj["request_id"],
                            "response": {"still_queued": []},
                        },
                    }
                )
                interrupted.set()
            elif subtype == "initialize":
                emit(
                    {
                        "type": "control_response",
                        "response": {
                            "subtype": "success",
                            "request_id": obj["request_id"],
                            "response": {"commands": []},
                        },
                    }
                )
        elif obj.get("type") == "control_response":
            with answered:
                answers[obj["response"]["request_id"]] = obj["response"]["response"]
                answered.notify_all()
        elif obj.get("type") == "user":
            messages.append(obj["message"]["content"])
            got_user.set()
    stdin_closed.set()


def main() -> int:
    global SESSION, ignore_interrupts
    args = sys.argv[1:]
    if args == ["--version"]:
        print("2.1.328 (Claude Code)")
        return 0
    if "--output-format=stream-json" in args and "--verbose" not in args:
        print("Error: When using --print, --output-format=stream-json requires --verbose", file=sys.stderr)
        return 1
    for arg in args:
        if arg.startswith(("--session-id=", "--resume=")):
            SESSION = arg.split("=", 1)[1]
    signal.signal(signal.SIGTERM, on_term)
    save()
    messages: list = []
    got_user = threading.Event()
    threading.Thread(target=read_stdin, args=(messages, got_user), daemon=True).start()
    got_user.wait()
    emit(
        {
            "type": "system",
            "subtype": "init",
            "cwd": os.getcwd(),
            "session_id": SESSION,
            "tools": [],
            "mcp_servers": [],
            "model": "claude-sonnet-4-5",
            "permissionMode": "default",
        }
    )
    text = messages[0] if isinstance(messages[0], str) else ""
    script = text.split("STUB:", 1)[1] if "STUB:" in text else "say ok"
    stream({"type": "message_start", "message": {"id": "msg_stub", "role": "assistant", "content": []}})
    stream({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}})
    said = ""
    for step in (s.strip() for s in script.split("|")):
        word, _, rest = step.partition(" ")
        if interrupted.is_set():
            break
        if word == "say":
            said += rest
            stream({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": rest}})
        elif word == "sleep":
            interrupted.wait(float(rest))
        elif word == "hang":
            interrupted.wait()
        elif word == "ignore-term":
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            ignore_interrupts = True
        elif word == "child":
            child = subprocess.Popen(["sleep", "600"])
            RECORD["children"].append(child.pid)
            save()
        elif word == "ask":
            tool, _, raw = rest.partition(" ")
            request_id = str(uuid.uuid4())
            emit(
                {
                    "type": "control_request",
                    "request_id": request_id,
                    "request": {
                        "subtype": "can_use_tool",
                        "tool_name": tool,
                        "input": json.loads(raw or "{}"),
                    },
                }
            )
            with answered:
                answered.wait_for(lambda wanted=request_id: wanted in answers or interrupted.is_set())
            RECORD.setdefault("answers", []).append(answers.get(request_id))
            save()
        elif word == "fail":
            emit(
                {
                    "type": "result",
                    "subtype": "error_during_execution",
                    "is_error": True,
                    "result": rest,
                    "session_id": SESSION,
                    "num_turns": 1,
                }
            )
            stdin_closed.wait()
            return 1
        elif word == "exit":
            return int(rest)
    if ignore_interrupts:
        while True:
            time.sleep(1)
    emit(
        {
            "type": "assistant",
            "message": {"role": "assistant", "content": [{"type": "text", "text": said}]},
            "parent_tool_use_id": None,
            "session_id": SESSION,
        }
    )
    if interrupted.is_set():
        emit(
            {
                "type": "user",
                "message": {
                    "role": "user",
                    "content": [{"type": "text", "text": "[Request interrupted by user]"}],
                },
                "parent_tool_use_id": None,
                "session_id": SESSION,
            }
        )
        emit(
            {
                "type": "result",
                "subtype": "error_during_execution",
                "is_error": True,
                "session_id": SESSION,
                "num_turns": 1,
                "terminal_reason": "aborted_streaming",
            }
        )
        stdin_closed.wait()
        return 1
    stream({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 1}})
    stream({"type": "message_stop"})
    emit(
        {
            "type": "result",
            "subtype": "success",
            "is_error": False,
            "result": said,
            "session_id": SESSION,
            "num_turns": 1,
            "stop_reason": "end_turn",
            "usage": {},
        }
    )
    stdin_closed.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
