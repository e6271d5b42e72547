"""The Kafka version a broker plugin (or the client-side assignor) is built for: checked before any download
or compile."""

from __future__ import annotations

import re

from kafka_placement.errors import InvalidArgumentError

#: The consumer group protocol (and its assignor API as a stable interface) is GA from Kafka 4.0.
MIN_MAJOR = 4
#: A bound on what we accept as a version component (a typo's cost stays one line).
_VERSION = re.compile(r"(\d{1,4})\.(\d{1,4})\.(\d{1,4})")


def check_kafka_version(text: object, *, needs: str = "the broker plugin needs") -> str:
    """``text`` if it is a Kafka release ``MAJOR.MINOR.PATCH`` with MAJOR >= 4, else a typed error (``needs``
    names who refuses it)."""
    if not isinstance(text, str) or _VERSION.fullmatch(text) is None:
        raise InvalidArgumentError(
            f"Kafka version must look like 4.4.0 (MAJOR.MINOR.PATCH, 4.0.0 or newer), got {text!r}"
        )
    major = int(text.split(".", 1)[0])
    if major < MIN_MAJOR:
        raise InvalidArgumentError(
            f"Kafka version {text} has no GA consumer group protocol; {needs} 4.0.0 or newer"
        )
    return text
