"""Deny-by-shape environment sealing: the agent CLI keeps its own keys, never the person's others."""

from __future__ import annotations

# A name holding one of these words looks like a credential.
SECRET_WORDS = (
    "KEY",
    "TOKEN",
    "SECRET",
    "PASSWORD",
    "PASSWD",
    "PASS",
    "AUTH",
    "SESSION",
    "COOKIE",
    "CREDENTIAL",
    "PRIVATE",
    "SIGNATURE",
)
# Whole namespaces of cloud and service credentials.
SECRET_NAMESPACES = (
    "AWS_",
    "AZURE_",
    "ARM_",
    "GCP_",
    "GCLOUD_",
    "GOOGLE_APPLICATION",
    "CLOUDSDK_",
    "GITHUB_",
    "GH_",
    "GITLAB_",
    "BITBUCKET_",
    "DOCKER_",
    "NPM_",
    "PYPI_",
    "TWINE_",
    "HEROKU_",
    "DIGITALOCEAN_",
    "CLOUDFLARE_",
    "VAULT_",
    "KUBE",
    "SSH_",
    "GPG_",
    "OP_",
    "SLACK_",
    "STRIPE_",
    "TWILIO_",
    "SENTRY_",
    "DATABASE_",
    "PG",
    "MYSQL_",
    "REDIS_",
    "HF_",
    "HUGGING",
)
# Never passed on: they change what code runs, or who the child thinks it is.
ALWAYS_DROP = frozenset(
    {
        "CLAUDECODE",
        "CLAUDE_CODE_ENTRYPOINT",
        "LD_PRELOAD",
        "LD_LIBRARY_PATH",
        "LD_AUDIT",
        "DYLD_INSERT_LIBRARIES",
        "NODE_OPTIONS",
        "BASH_ENV",
        "ENV",
        "PROMPT_COMMAND",
        "PYTHONSTARTUP",
        "PYTHONPATH",
        "PYTHONHOME",
        "TABPILOT_SESSION",
        "TABPILOT_RUN",
        "TABPILOT_BROWSER",
    }
)
# What tabpilot itself adds for the run: where its daemon is, and the turn's session and run token.
INJECTED = frozenset({"TABPILOT_HOME", "TABPILOT_PORT", "TABPILOT_SESSION", "TABPILOT_RUN"})


def looks_secret(name: str) -> bool:
    upper = name.upper()
    return upper.startswith(SECRET_NAMESPACES) or any(word in upper for word in SECRET_WORDS)


def seal(env: dict[str, str], keep_prefixes: tuple[str, ...]) -> dict[str, str]:
    """The variables of ``env`` an agent CLI may see; names under its own prefixes are kept."""
    sealed = {}
    for name, value in env.items():
        if name in ALWAYS_DROP:
            continue
        if looks_secret(name) and not name.upper().startswith(keep_prefixes):
            continue
        sealed[name] = value
    return sealed


def unsealed(env: dict[str, str], keep_prefixes: tuple[str, ...]) -> list[str]:
    """Names in ``env`` that sealing would have dropped (tabpilot's own additions excepted)."""
    return sorted(
        name
        for name in env
        if name not in INJECTED
        and (name in ALWAYS_DROP or (looks_secret(name) and not name.upper().startswith(keep_prefixes)))
    )
