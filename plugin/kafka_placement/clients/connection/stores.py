"""Key and trust stores as the Python clients need them: PEM files.

Java clients read PKCS12 (and JKS) stores; kafka-python and aiokafka (Python's ``ssl`` module) read PEM
files only, and librdkafka reads a PEM CA file or a PKCS12 keystore. A PKCS12 store is read with the
``cryptography`` library and written out as PEM into a private temporary directory (mode 0700, files
0600) that lives as long as the process. JKS is a Java-only format: it is refused with the ``keytool``
command that converts it.
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
from functools import cache
from pathlib import Path

from kafka_placement.errors import ConnectionSettingsError

#: A store larger than this is not a key store (bounded read before parsing).
MAX_STORE_BYTES = 4 * 1024 * 1024


def _read(path: str, what: str) -> bytes:
    p = Path(path)
    try:
        size = p.stat().st_size
    except OSError as exc:
        raise ConnectionSettingsError(f"{what} {path!r} cannot be read: {exc.strerror or exc}") from None
    if not p.is_file():
        raise ConnectionSettingsError(f"{what} {path!r} is not a file")
    if size > MAX_STORE_BYTES:
        raise ConnectionSettingsError(
            f"{what} {path!r} is {size} bytes; a key or trust store is at most {MAX_STORE_BYTES} bytes"
        )
    try:
        return p.read_bytes()
    except OSError as exc:
        raise ConnectionSettingsError(f"{what} {path!r} cannot be read: {exc.strerror or exc}") from None


@cache
def _private_dir() -> Path:
    directory = Path(tempfile.mkdtemp(prefix="kafka-placement-tls-"))
    directory.chmod(0o700)
    atexit.register(shutil.rmtree, directory, True)
    return directory


def _write_private(name: str, data: bytes) -> str:
    path = _private_dir() / name
    path.touch(mode=0o600)
    path.write_bytes(data)
    return str(path)


def jks_refusal(setting: str, path: str) -> ConnectionSettingsError:
    return ConnectionSettingsError(
        f"{setting}={path} is a JKS store, which only Java clients read; convert it once with "
        f"'keytool -importkeystore -srckeystore {path} -destkeystore store.p12 -deststoretype PKCS12' "
        f"and point {setting} at store.p12 with the matching .type=PKCS12"
    )


def _store_type(setting: str, path: str, declared: str | None) -> str:
    kind = (declared or "").strip().upper()
    if not kind:
        suffix = Path(path).suffix.lower()
        kind = {".p12": "PKCS12", ".pfx": "PKCS12", ".jks": "JKS", ".pem": "PEM", ".crt": "PEM"}.get(
            suffix, "JKS"
        )
    if kind not in ("PEM", "PKCS12", "JKS"):
        raise ConnectionSettingsError(
            f"{setting.replace('location', 'type')} must be PEM, PKCS12 or JKS, got {kind!r}"
        )
    return kind


def _load_pkcs12(setting: str, path: str, password: str | None) -> tuple[object, object, list[object]]:
    from cryptography.hazmat.primitives.serialization import pkcs12

    data = _read(path, setting)
    try:
        key, cert, extra = pkcs12.load_key_and_certificates(data, password.encode() if password else None)
    except ValueError:
        raise ConnectionSettingsError(
            f"{setting}={path} cannot be opened as PKCS12 (wrong password in the matching .password "
            "setting, or not a PKCS12 file)"
        ) from None
    return key, cert, list(extra)


def truststore_pem(
    location: str, store_type: str | None, password: str | None, setting: str = "ssl.truststore.location"
) -> str:
    """A PEM file of the trusted certificates in a PEM, PKCS12 (converted) or JKS (refused) trust store."""
    from cryptography.hazmat.primitives.serialization import Encoding

    kind = _store_type(setting, location, store_type)
    if kind == "JKS":
        raise jks_refusal(setting, location)
    if kind == "PEM":
        _read(location, setting)  # exists, readable, bounded
        return location
    _, cert, extra = _load_pkcs12(setting, location, password)
    certs = [c for c in [cert, *extra] if c is not None]
    if not certs:
        raise ConnectionSettingsError(f"{setting}={location} holds no certificate")
    pem = b"".join(c.public_bytes(Encoding.PEM) for c in certs)  # type: ignore[attr-defined]
    return _write_private("truststore.pem", pem)


def keystore_pem(
    location: str, store_type: str | None, password: str | None, setting: str = "ssl.keystore.location"
) -> tuple[str, str]:
    """``(certificate chain PEM, private key PEM)`` files of a client key store (PKCS12 or PEM)."""
    from cryptography.hazmat.primitives.serialization import (
        BestAvailableEncryption,
        Encoding,
        NoEncryption,
        PrivateFormat,
    )

    kind = _store_type(setting, location, store_type)
    if kind == "JKS":
        raise jks_refusal(setting, location)
    if kind == "PEM":
        _read(location, setting)
        return location, location  # one PEM file with the key and the chain (KIP-651 layout)
    key, cert, extra = _load_pkcs12(setting, location, password)
    if key is None or cert is None:
        raise ConnectionSettingsError(f"{setting}={location} must hold a private key and its certificate")
    chain = b"".join(c.public_bytes(Encoding.PEM) for c in [cert, *extra])  # type: ignore[attr-defined]
    encryption = BestAvailableEncryption(password.encode()) if password else NoEncryption()
    key_pem = key.private_bytes(Encoding.PEM, PrivateFormat.PKCS8, encryption)  # type: ignore[attr-defined]
    return _write_private("client-chain.pem", chain), _write_private("client-key.pem", key_pem)
