"""``config/llm.yaml`` and its environment overrides: :class:`LLMConfig` and :func:`load_config`.

The file keeps the original demo's shape::

    llm:
      api_key: ""            # empty -> the deterministic offline model
      model: gpt-4o-mini
      base_url: ""           # empty -> OpenAI; any OpenAI-compatible /v1 endpoint works
      timeout: 60            # optional, seconds per model request
      max_retries: 2         # optional
      turn_timeout: 300      # optional, seconds for a whole turn ($AGENTMEM_TURN_TIMEOUT overrides)

Environment variables win over the file (``AGENTMEM_API_KEY``, ``AGENTMEM_MODEL``, ``AGENTMEM_BASE_URL``,
``AGENTMEM_LLM_TIMEOUT``, ``AGENTMEM_LLM_MAX_RETRIES``; ``AGENTMEM_CONFIG`` names the file). The generic
``OPENAI_API_KEY`` / ``OPENAI_BASE_URL`` / ``OPENAI_MODEL`` only fill values the file leaves empty, and
``OPENAI_API_KEY`` is never sent to a non-OpenAI ``base_url``: a key exported for OpenAI must not leak to whatever
server a config file happens to name.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentmem_nb.errors import ConfigError
from agentmem_nb.redact import redact, register_secret, url_secrets

__all__ = ["LLMConfig", "load_config", "DEFAULT_CONFIG_PATH", "DEFAULT_MODEL"]

DEFAULT_CONFIG_PATH = Path("config") / "llm.yaml"
"""Where :func:`load_config` looks when no path is given (relative to the working directory)."""

DEFAULT_MODEL = "gpt-4o-mini"

_OPENAI_HOSTS = ("api.openai.com",)


@dataclass(frozen=True, slots=True)
class LLMConfig:
    """Which chat model to use. An empty ``api_key`` selects the offline model.

    The repr never shows the key, nor a ``user:password@`` in ``base_url``; creating a config registers both with
    :mod:`agentmem_nb.redact`, so no error text, reply or log line of this process shows them either::

        >>> LLMConfig(api_key="sk-secret")
        LLMConfig(model='gpt-4o-mini', base_url='', api_key=<set>, timeout=60.0, max_retries=2, source='')
        >>> repr(LLMConfig(base_url="http://me:pa55word@proxy.local/v1")).split(", ")[1]
        "base_url='http://<redacted>@proxy.local/v1'"
    """

    api_key: str = ""
    model: str = DEFAULT_MODEL
    base_url: str = ""
    timeout: float = 60.0
    max_retries: int = 2
    source: str = ""
    """Where the values came from (file path and overriding variables), for display."""
    turn_timeout: float = 300.0
    """Seconds a whole turn may take; ``timeout`` bounds each read, which a server sending keep-alives never hits."""

    def __post_init__(self) -> None:
        for secret in self.secrets:
            register_secret(secret)

    @property
    def secrets(self) -> tuple[str, ...]:
        """The values that must never be shown: the key and the credentials in ``base_url``."""
        key = self.api_key if isinstance(self.api_key, str) else ""
        url = self.base_url if isinstance(self.base_url, str) else ""
        return tuple(s for s in (key, key.strip(), *url_secrets(url)) if s)

    @property
    def offline(self) -> bool:
        """True when no API key is configured, so the offline model is used."""
        return not self.api_key.strip()

    def __repr__(self) -> str:
        key = "<set>" if self.api_key else "<empty>"
        base_url = redact(self.base_url, secrets=self.secrets)  # a password or a ?key= in the URL is a secret too
        return (f"LLMConfig(model={self.model!r}, base_url={base_url!r}, api_key={key}, "
                f"timeout={self.timeout!r}, max_retries={self.max_retries!r}, source={self.source!r})")

    __str__ = __repr__


def load_config(
    path: str | os.PathLike[str] | None = None,
    *,
    environ: Mapping[str, str] | None = None,
) -> LLMConfig:
    """Read ``config/llm.yaml`` (or ``path``), then apply environment overrides.

    Args:
        path: the YAML file. ``None`` means ``$AGENTMEM_CONFIG`` or ``config/llm.yaml``; a missing default file
            simply gives the defaults (offline), while a missing explicit file is an error.
        environ: the variables to read (default ``os.environ``; tests pass a dict).

    Raises:
        ConfigError: the file is not valid YAML, not of the documented shape, or a value has the wrong type.

    >>> load_config(environ={}).offline   # no file, no key
    True
    """
    env = os.environ if environ is None else environ
    explicit = path is not None or bool(env.get("AGENTMEM_CONFIG"))
    file_path = Path(path if path is not None else env.get("AGENTMEM_CONFIG") or DEFAULT_CONFIG_PATH)
    values = _read_file(file_path, required=explicit)
    sources = [str(file_path)] if values is not None else []
    values = values or {}

    overridden: list[str] = []
    for key, var in (("api_key", "AGENTMEM_API_KEY"), ("model", "AGENTMEM_MODEL"), ("base_url", "AGENTMEM_BASE_URL"),
                     ("timeout", "AGENTMEM_LLM_TIMEOUT"), ("max_retries", "AGENTMEM_LLM_MAX_RETRIES"),
                     ("turn_timeout", "AGENTMEM_TURN_TIMEOUT")):
        if env.get(var, "").strip():
            values[key] = env[var].strip()
            overridden.append(var)
    for key, var in (("base_url", "OPENAI_BASE_URL"), ("model", "OPENAI_MODEL")):
        if not str(values.get(key) or "").strip() and env.get(var, "").strip():
            values[key] = env[var].strip()
            overridden.append(var)
    if (not str(values.get("api_key") or "").strip() and env.get("OPENAI_API_KEY", "").strip()
            and _is_openai(str(values.get("base_url") or ""))):
        values["api_key"] = env["OPENAI_API_KEY"].strip()
        overridden.append("OPENAI_API_KEY")
    sources += [f"${name}" for name in overridden]

    origin = " + ".join(sources) or "defaults"
    return LLMConfig(
        api_key=_text(values, "api_key", "", origin),
        model=_text(values, "model", DEFAULT_MODEL, origin) or DEFAULT_MODEL,
        base_url=_text(values, "base_url", "", origin).rstrip("/"),
        timeout=_number(values, "timeout", 60.0, origin),
        max_retries=_count(values, "max_retries", 2, origin),
        source=origin,
        turn_timeout=_number(values, "turn_timeout", 300.0, origin),
    )


def _read_file(path: Path, *, required: bool) -> dict[str, Any] | None:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        if required:
            raise ConfigError(f"config file {str(path)!r} does not exist: create it (see config/llm.yaml in the "
                              "repository for the format) or unset AGENTMEM_CONFIG") from None
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read config file {str(path)!r}: {exc}") from None
    import yaml  # only needed when a file exists

    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        where = getattr(exc, "problem_mark", None)
        at = f" at line {where.line + 1}, column {where.column + 1}" if where is not None else ""
        # Only the problem, never str(exc): that quotes the offending line, which may be the key's. The problem
        # itself may quote a token of that line too ("found undefined alias 'Xy9…'" for an unquoted *Xy9… key), so
        # quoted tokens are left out: line and column say where to look.
        problem = re.sub(r"'[^']*'|\"[^\"]*\"", "(…)", str(getattr(exc, "problem", None) or type(exc).__name__))
        raise ConfigError(f"config file {str(path)!r} is not valid YAML{at}: "
                          f"{redact(problem)} (quote the value if it is a key). Expected:\n"
                          "llm:\n  api_key: \"\"\n  model: gpt-4o-mini\n  base_url: \"\"") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"config file {str(path)!r} must hold a mapping with an 'llm:' section, "
                          f"not a YAML {type(data).__name__}")
    section = data.get("llm", {})
    if section is None:
        return {}
    if not isinstance(section, dict):
        raise ConfigError(f"'llm' in {str(path)!r} must be a mapping (api_key, model, base_url), "
                          f"got a YAML {type(section).__name__}")  # its value is not shown: it may be a key
    unknown = sorted(set(section) - {"api_key", "model", "base_url", "timeout", "max_retries", "turn_timeout"})
    if unknown:
        raise ConfigError(f"unknown key(s) {redact(unknown)} under 'llm' in {str(path)!r}: "
                          "allowed are api_key, model, base_url, timeout, max_retries, turn_timeout")
    return dict(section)


def _is_openai(base_url: str) -> bool:
    if not base_url:
        return True
    rest = base_url.split("://", 1)[-1]
    host = rest.split("/", 1)[0].split(":", 1)[0].lower()
    return host in _OPENAI_HOSTS


def _text(values: Mapping[str, Any], key: str, default: str, origin: str) -> str:
    value = values.get(key, default)
    if value is None:
        return default
    if not isinstance(value, str):
        if key == "api_key":  # a key YAML read as a number: saying which number would print the secret
            raise ConfigError(f"llm.api_key from {origin} must be text, got a YAML {type(value).__name__} (not "
                              "shown: it is a secret); quote it in YAML (api_key: \"...\") so that every character "
                              "is kept as written (a number loses leading zeros, 0x/0o prefixes and underscores)")
        raise ConfigError(f"llm.{key} from {origin} must be text, got {type(value).__name__} "
                          f"{redact(repr(value)):.40}; quote it in YAML")
    return value.strip()


def _number(values: Mapping[str, Any], key: str, default: float, origin: str) -> float:
    value = values.get(key, default)
    if value is None:
        return default
    try:
        number = float(value) if not isinstance(value, bool) else math.nan
    except (TypeError, ValueError):
        number = math.nan
    if not math.isfinite(number) or number <= 0:
        raise ConfigError(f"llm.{key} from {origin} must be a positive number of seconds, got {value!r:.40}")
    return number


def _count(values: Mapping[str, Any], key: str, default: int, origin: str) -> int:
    value = values.get(key, default)
    if value is None:
        return default
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value.strip())
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ConfigError(f"llm.{key} from {origin} must be a whole number >= 0, got {value!r:.40}")
    return value
