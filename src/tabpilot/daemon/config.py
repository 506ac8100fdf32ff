"""The daemon's timings, from the environment (tests shrink them)."""

from __future__ import annotations

from dataclasses import dataclass

from tabpilot.paths import env_seconds


@dataclass(frozen=True)
class DaemonConfig:
    heartbeat_s: float = 20.0
    peer_timeout_s: float = 60.0
    session_idle_s: float = 600.0
    daemon_idle_s: float = 600.0
    reconnect_grace_s: float = 30.0
    startup_wait_s: float = 10.0
    handshake_timeout_s: float = 10.0
    default_tool_timeout_s: float = 30.0

    @classmethod
    def from_env(cls) -> DaemonConfig:
        base = cls()
        return cls(
            heartbeat_s=env_seconds("TABPILOT_HEARTBEAT_S", base.heartbeat_s),
            peer_timeout_s=env_seconds("TABPILOT_PEER_TIMEOUT_S", base.peer_timeout_s),
            session_idle_s=env_seconds("TABPILOT_SESSION_IDLE_S", base.session_idle_s),
            daemon_idle_s=env_seconds("TABPILOT_DAEMON_IDLE_S", base.daemon_idle_s),
            reconnect_grace_s=env_seconds("TABPILOT_RECONNECT_GRACE_S", base.reconnect_grace_s),
            startup_wait_s=env_seconds("TABPILOT_STARTUP_WAIT_S", base.startup_wait_s),
            handshake_timeout_s=env_seconds("TABPILOT_HANDSHAKE_TIMEOUT_S", base.handshake_timeout_s),
        )
