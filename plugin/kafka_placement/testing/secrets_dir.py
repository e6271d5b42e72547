"""The secured cluster's secrets directory, mounted read-only at ``/etc/kafka/secrets`` in every node.

Contents (only what the protocol needs):
- ``ca.pem`` — the throwaway CA (brokers' truststore, clients' CA file);
- ``broker.keystore.p12`` + ``keystore.credentials`` / ``key.credentials`` — the broker keystore and its
  password, in the official image's contract (``KAFKA_SSL_KEYSTORE_FILENAME`` / ``*_CREDENTIALS``);
- ``kafka_server_jaas.conf`` — the brokers' own SCRAM login (``admin``) for inter-broker traffic;
- ``scram-users`` + ``controller.properties`` — SCRAM users the controller's storage is formatted with;
- ``kp-start.sh`` — runs before the image's entry point: formats the controller's storage with
  ``--add-scram`` (neither the official image's entry point nor ours passes format options; both then
  tolerate the already formatted storage) and exports the keystore password the offline image needs
  as ``KAFKA_SSL_*_PASSWORD`` (the official image reads the credential files itself).

The directory is world-readable (the official image runs as a non-root user): these are throwaway
credentials of a loopback-only test cluster, removed with it.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from kafka_placement.errors import ClusterError
from kafka_placement.testing.layout import (
    CONTROLLER_PROPERTIES_FILE,
    ENTRY_SCRIPT,
    JAAS_FILE,
    KEY_CREDENTIALS,
    KEYSTORE_CREDENTIALS,
    SCRAM_USERS_FILE,
    SECRETS_MOUNT,
    ClusterLayout,
)
from kafka_placement.testing.security import (
    ADMIN_USER,
    CA_PEM,
    KEYSTORE_P12,
    SASL_MECHANISM,
    ClusterSecurity,
    new_password,
    render_properties,
)
from kafka_placement.testing.state import ClusterState
from kafka_placement.testing.tls import TlsMaterial, generate_tls_material, write_private

#: Written into the directory so a later process (``cluster status``/``down``) can tell it is ours.
MARKER = ".kafka-placement-secrets"

ENTRY_SCRIPT_TEXT = f"""#!/bin/bash
# kafka-placement secured test cluster: runs before the image's own entry point.
set -euo pipefail
secrets={SECRETS_MOUNT}
if [[ -f "$secrets/{KEYSTORE_CREDENTIALS}" ]]; then
    KAFKA_SSL_KEYSTORE_PASSWORD=$(<"$secrets/{KEYSTORE_CREDENTIALS}")
    KAFKA_SSL_KEY_PASSWORD=$(<"$secrets/{KEY_CREDENTIALS}")
    export KAFKA_SSL_KEYSTORE_PASSWORD KAFKA_SSL_KEY_PASSWORD
fi
if [[ "${{KAFKA_PROCESS_ROLES:-}}" == controller && -f "$secrets/{SCRAM_USERS_FILE}" ]]; then
    scram=()
    while read -r user password; do
        scram+=(--add-scram "{SASL_MECHANISM}=[name=$user,password=$password]")
    done < "$secrets/{SCRAM_USERS_FILE}"
    echo "===> kafka-placement: formatting the controller's storage with ${{#scram[@]}} SCRAM argument(s)"
    /opt/kafka/bin/kafka-storage.sh format --ignore-formatted --cluster-id "$CLUSTER_ID" \\
        --config "$secrets/{CONTROLLER_PROPERTIES_FILE}" "${{scram[@]}}" >/dev/null
fi
exec /etc/kafka/docker/run "$@"
"""


def prepare_secrets_dir(
    directory: Path, layout: ClusterLayout, security: ClusterSecurity, cluster_name: str
) -> TlsMaterial | None:
    """Fill ``directory`` for ``layout``/``security``; returns the TLS material (None without TLS)."""
    directory.mkdir(parents=True, exist_ok=True)
    directory.chmod(0o755)
    (directory / MARKER).write_text(cluster_name + "\n")
    material: TlsMaterial | None = None
    if security.tls:
        material = generate_tls_material(cluster_name)
        write_private(directory / CA_PEM, material.ca_pem)
        store_password = new_password()
        write_private(directory / KEYSTORE_P12, material.broker_pkcs12(store_password))
        write_private(directory / KEYSTORE_CREDENTIALS, store_password.encode("ascii"))
        write_private(directory / KEY_CREDENTIALS, store_password.encode("ascii"))
    if security.sasl:
        admin = security.jaas_config(ADMIN_USER)
        write_private(directory / JAAS_FILE, f"KafkaServer {{\n    {admin}\n}};\n".encode("ascii"))
        users = "".join(f"{name} {password}\n" for name, password in sorted(security.users.items()))
        write_private(directory / SCRAM_USERS_FILE, users.encode("ascii"))
        write_private(
            directory / CONTROLLER_PROPERTIES_FILE,
            render_properties(layout.controller_properties()).encode("utf-8"),
        )
    script = directory / ENTRY_SCRIPT
    script.write_text(ENTRY_SCRIPT_TEXT)
    script.chmod(0o755)
    return material


def read_scram_users(directory: Path) -> dict[str, str]:
    """User → password from a secrets directory (how ``cluster status`` reconnects to a SASL cluster)."""
    path = directory / SCRAM_USERS_FILE
    users: dict[str, str] = {}
    for line in path.read_text(encoding="ascii").splitlines():
        name, _, password = line.partition(" ")
        if name:
            users[name] = password
    return users


def security_of(state: ClusterState) -> tuple[ClusterSecurity, Path | None]:
    """The security of a running cluster from its state file (SCRAM users read back from its secrets)."""
    secrets_dir = Path(state.secrets_dir) if state.secrets_dir else None
    users: dict[str, str] = {}
    if state.security.startswith("sasl"):
        if secrets_dir is None:
            raise ClusterError(f"cluster {state.name} is {state.security} but its state names no secrets")
        try:
            users = read_scram_users(secrets_dir)
        except OSError as exc:
            raise ClusterError(f"cannot read the SCRAM users of cluster {state.name}: {exc}") from exc
    return ClusterSecurity(protocol=state.security, users=users, acls=state.acls), secrets_dir


def remove_secrets_dir(directory: Path) -> bool:
    """Remove a directory :func:`prepare_secrets_dir` filled (refuses any other directory)."""
    if not (directory / MARKER).is_file():
        return False
    shutil.rmtree(directory, ignore_errors=True)
    return True
