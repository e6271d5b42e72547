"""Reading what users write: Java ``.properties`` files, ``key=value`` overrides, ``sasl.jaas.config``
lines, and hiding secrets in everything shown back to them."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from kafka_placement.errors import ConnectionSettingsError

#: A properties file larger than this is refused before parsing.
MAX_PROPERTIES_BYTES = 1024 * 1024
_SECRET = re.compile(r"password|secret|jaas|token|key\.pem|keystore\.key|credentials", re.IGNORECASE)
_JAAS_OPTION = re.compile(r'(\w+)\s*=\s*"((?:[^"\\]|\\.)*)"')


def is_secret(name: str) -> bool:
    """True for settings whose value must never be shown (passwords, JAAS lines, keys, tokens)."""
    return bool(_SECRET.search(name))


def masked(settings: Mapping[str, Any]) -> dict[str, Any]:
    """``settings`` with every secret value replaced by ``***`` (for messages and logs)."""
    return {k: ("***" if is_secret(k) and v not in (None, "") else v) for k, v in settings.items()}


def read_properties(path: str) -> dict[str, str]:
    """A Java ``.properties`` file (escapes, continuations, ``=``/``:``/blank separators, comments)."""
    import javaproperties

    p = Path(path)
    try:
        size = p.stat().st_size
        if not p.is_file():
            raise ConnectionSettingsError(f"--command-config {path!r} is not a file")
        if size > MAX_PROPERTIES_BYTES:
            raise ConnectionSettingsError(
                f"--command-config {path!r} is {size} bytes; a client properties file is at most "
                f"{MAX_PROPERTIES_BYTES} bytes"
            )
        raw = p.read_bytes()
    except OSError as exc:
        raise ConnectionSettingsError(
            f"--command-config {path!r} cannot be read: {exc.strerror or exc}"
        ) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        text = raw.decode("latin-1")  # java.util.Properties.load(InputStream) reads ISO-8859-1
    return dict(javaproperties.loads(text))


def parse_override(item: str) -> tuple[str, str]:
    """``key=value`` (librdkafka's ``-X``); the value may contain ``=``."""
    key, sep, value = item.partition("=")
    if not sep or not key.strip():
        raise ConnectionSettingsError(f"-X expects key=value, got {item.split('=')[0]!r}")
    return key.strip(), value


def parse_jaas(text: str) -> tuple[str, dict[str, str]]:
    """``(login module class, options)`` of a ``sasl.jaas.config`` line (values unescaped)."""
    body = text.strip().rstrip(";").strip()
    module, _, rest = body.partition(" ")
    flag, _, options_text = rest.strip().partition(" ")
    if not module or flag not in ("required", "requisite", "sufficient", "optional"):
        raise ConnectionSettingsError(
            'sasl.jaas.config must look like \'<LoginModule class> required username="…" password="…";\''
        )
    options = {k: re.sub(r"\\(.)", r"\1", v) for k, v in _JAAS_OPTION.findall(options_text)}
    return module, options


def jaas_quote(value: str) -> str:
    """A value inside a JAAS option's double quotes."""
    return value.replace("\\", "\\\\").replace('"', '\\"')
