"""``kafka-placement cluster up|status|down``: the embedded rack-labelled Kafka cluster for users.

up            start a cluster (unless the state file names a healthy one) and write the state file;
              the containers keep running after this command exits. stdout gets exactly one line,
              the bootstrap address (``BOOT=$(kafka-placement cluster up)``); the rest goes to stderr.
status        print the state and what describe_cluster reports; exit 1 if not healthy.
down          remove the cluster named in the state file (``--all``: every kafka-placement container).
env           print ``export KAFKA_PLACEMENT_REUSE=1`` / ``KAFKA_BOOTSTRAP_SERVERS=...`` lines for a shell.
start-broker  start broker N again (after a test left it down).

Security of the client listener (``--security``): plaintext (default), ssl, sasl_plaintext, sasl_ssl.
TLS uses a throwaway CA generated at start; SASL uses SCRAM-SHA-512 with users ``admin`` (super user)
and ``alice``, random passwords; ``--acls`` turns the StandardAuthorizer on (alice needs ACLs).
``--client-config FILE`` writes the Java client .properties for ``--user`` (what ``--command-config``
takes); with TLS the CA PEM is written next to it as ``<FILE stem>-ca.pem``.
State file: env ``KAFKA_PLACEMENT_STATE`` or ``~/.cache/kafka-placement/dev-cluster.json``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from kafka_placement.errors import ClusterError, InvalidArgumentError


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "cluster",
        help="run the embedded rack-labelled Kafka cluster (plaintext, TLS, SASL/SCRAM)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    up = sub.add_parser("up", help="start the cluster (idempotent)")
    up.add_argument(
        "--brokers",
        type=int,
        default=None,
        metavar="N",
        help="number of brokers (default 6, or one per --racks entry)",
    )
    up.add_argument(
        "--racks",
        default=None,
        metavar="R1,R2,...",
        help="racks; broker i gets entry i mod count (default rack1,rack3,rack3,rack2,rack2,rack1)",
    )
    up.add_argument(
        "--security",
        default="plaintext",
        help="client listener: plaintext | ssl | sasl_plaintext | sasl_ssl (default plaintext)",
    )
    up.add_argument(
        "--acls",
        action="store_true",
        help="StandardAuthorizer on (SASL only): admin is a super user, others need ACLs",
    )
    up.add_argument(
        "--client-config",
        type=Path,
        default=None,
        metavar="FILE",
        help="write the Java client .properties for --user here (and the CA PEM next to it)",
    )
    up.add_argument("--user", default=None, help="user of --client-config (admin | alice; default admin)")
    up.add_argument("--image", default=None, help="Kafka image (default: KAFKA_IMAGE / ensure-image logic)")
    up.add_argument("--name", default=None, help="container name prefix")
    up.set_defaults(handler=cmd_up)
    down = sub.add_parser("down", help="remove the cluster")
    down.add_argument("--all", action="store_true", help="remove every kafka-placement container")
    down.set_defaults(handler=cmd_down)
    sub.add_parser("status", help="is the cluster healthy?").set_defaults(handler=cmd_status)
    sub.add_parser("env", help="shell exports for the cluster").set_defaults(handler=cmd_env)
    sb = sub.add_parser("start-broker", help="start a stopped/killed broker again")
    sb.add_argument("broker_id", type=int)
    sb.set_defaults(handler=cmd_start_broker)


def _err(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def _first_line(exc: BaseException) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


def _healthy(cluster: Any) -> tuple[bool, str]:
    try:
        seen = cluster.describe(5.0)
    except Exception as exc:
        return False, f"{type(exc).__name__}: {_first_line(exc)}"
    ok = seen == cluster.broker_racks
    return ok, f"describe_cluster: {dict(sorted(seen.items()))}"


def _shape(args: argparse.Namespace) -> tuple[dict[int, str], Any]:
    """Validate every flag before anything starts (typed errors → exit 2)."""
    from kafka_placement.testing.layout import cluster_racks
    from kafka_placement.testing.security import ADMIN_USER, ORDINARY_USER, ClusterSecurity

    racks_list = None if args.racks is None else [r.strip() for r in args.racks.split(",")]
    racks = cluster_racks(args.brokers, racks_list)
    security = ClusterSecurity.create(args.security, acls=args.acls)
    if args.user is not None:
        if not security.sasl:
            raise InvalidArgumentError(f"--user needs a SASL cluster (security {security.protocol!r})")
        if args.user not in (ADMIN_USER, ORDINARY_USER):
            raise InvalidArgumentError(f"--user {args.user!r} is not one of {ADMIN_USER}, {ORDINARY_USER}")
    if args.user is not None and args.client_config is None:
        raise InvalidArgumentError("--user only selects whose settings --client-config writes")
    return racks, security


def _write_client_config(cluster: Any, args: argparse.Namespace) -> None:
    if args.client_config is None:
        return
    path = cluster.write_client_config(args.client_config, args.user)
    _err(f"client config: {path}")
    if cluster.ca_pem is not None:
        _err(f"CA certificate: {path.with_name(path.stem + '-ca.pem')}")


def cmd_up(args: argparse.Namespace) -> int:
    from kafka_placement.testing.cluster import KafkaCluster
    from kafka_placement.testing.engine import docker_client, remove_leftovers
    from kafka_placement.testing.secrets_dir import remove_secrets_dir
    from kafka_placement.testing.state import (
        StateError,
        default_state_path,
        read_state,
        remove_state,
        write_state,
    )

    racks, security = _shape(args)
    try:
        existing = KafkaCluster.attach(read_state(), log=_err)
    except (StateError, ClusterError):
        existing = None
    if existing is not None:
        ok, detail = _healthy(existing)
        if ok:
            same = (
                existing.broker_racks == racks
                and existing.security.protocol == security.protocol
                and existing.security.acls == security.acls
            )
            if not same:
                raise ClusterError(
                    f"cluster {existing.name} is already up with brokers {existing.broker_racks}, security "
                    f"{existing.security.protocol}{' + acls' if existing.security.acls else ''}; "
                    "run `kafka-placement cluster down` first"
                )
            _err(f"cluster {existing.name} already up ({existing.security.kafka_protocol})")
            _write_client_config(existing, args)
            print(existing.bootstrap_servers, flush=True)
            return 0
        _err(f"cluster {existing.name} in the state file is unhealthy ({detail}); replacing it")
        remove_leftovers(docker_client(), existing.name)
        if existing.secrets_dir is not None:
            remove_secrets_dir(existing.secrets_dir)
        remove_state()
    name = args.name or f"kp-dev-{int(time.time())}"
    secrets_dir = default_state_path().parent / f"{name}-secrets" if security.secured else None
    cluster = KafkaCluster(
        image=args.image,
        name=name,
        persistent=True,
        racks=racks,
        security=security,
        secrets_dir=secrets_dir,
        log=_err,
    )
    try:
        cluster.start()
    except ClusterError as exc:
        if secrets_dir is not None:
            remove_secrets_dir(secrets_dir)
        raise ClusterError(f"{_first_line(exc)} (containers' logs: docker logs {name}-broker-0)") from exc
    path = write_state(cluster.state())
    _err(
        f"cluster {cluster.name} up in {cluster.startup_seconds:.1f}s ({security.kafka_protocol}"
        f"{', ACLs' if security.acls else ''}), racks {cluster.broker_racks}"
    )
    if security.sasl:
        _err("SCRAM-SHA-512 users: admin (super user), alice; passwords only in the client config files")
    _err(f"state file: {path}")
    _write_client_config(cluster, args)
    print(cluster.bootstrap_servers, flush=True)
    return 0


def cmd_down(args: argparse.Namespace) -> int:
    from kafka_placement.testing.engine import docker_client, remove_leftovers
    from kafka_placement.testing.secrets_dir import remove_secrets_dir
    from kafka_placement.testing.state import StateError, read_state, remove_state

    client = docker_client()
    try:
        state = read_state()
    except StateError:
        state = None
    if args.all:
        removed = remove_leftovers(client)
    elif state is None:
        raise ClusterError(
            "no cluster state file: nothing to take down (`--all` removes every kafka-placement container)"
        )
    else:
        removed = remove_leftovers(client, state.name)
    if state is not None:
        if state.secrets_dir:
            remove_secrets_dir(Path(state.secrets_dir))
        remove_state()
    what = "every kafka-placement cluster" if args.all else f"cluster {state.name if state else ''}"
    print(f"removed {what} ({len(removed)} containers)")
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    from kafka_placement.testing.cluster import KafkaCluster
    from kafka_placement.testing.state import StateError, default_state_path, read_state

    try:
        state = read_state()
        cluster = KafkaCluster.attach(state, log=_err)
    except (StateError, ClusterError) as exc:
        print(f"no healthy cluster: {_first_line(exc)}")
        return 1
    ok, detail = _healthy(cluster)
    down = cluster.not_running_brokers()
    ok = ok and not down
    age = time.time() - state.started_at
    health = "healthy" if ok else "UNHEALTHY"
    print(f"cluster {state.name} ({health}), image {state.image}, up {age / 60:.0f} min")
    print(f"bootstrap servers: {cluster.bootstrap_servers}")
    sec = cluster.security
    print(
        f"security: {sec.kafka_protocol}"
        + (f", SCRAM-SHA-512 users {', '.join(sorted(sec.users))}" if sec.sasl else "")
        + (", ACLs on" if sec.acls else "")
    )
    if cluster.ca_pem is not None:
        print(f"CA certificate: {cluster.ca_pem}")
    print(f"racks: {cluster.broker_racks}")
    print(detail)
    if down:
        print(
            f"broker containers NOT running: {down} (kafka-placement cluster start-broker N starts one again)"
        )
    print(f"state file: {default_state_path()}")
    return 0 if ok else 1


def cmd_env(args: argparse.Namespace) -> int:
    from kafka_placement.testing.state import default_state_path, read_state

    state = read_state()
    print("export KAFKA_PLACEMENT_REUSE=1")
    print(f"export KAFKA_PLACEMENT_STATE={default_state_path()}")
    print(f"export KAFKA_BOOTSTRAP_SERVERS={state.layout.bootstrap_servers}")
    return 0


def cmd_start_broker(args: argparse.Namespace) -> int:
    from kafka_placement.testing.cluster import KafkaCluster
    from kafka_placement.testing.state import read_state

    cluster = KafkaCluster.attach(read_state(), log=_err)
    if args.broker_id not in cluster.broker_racks:
        raise InvalidArgumentError(f"broker id {args.broker_id} not in {cluster.broker_ids}")
    cluster.start_broker(args.broker_id)
    print(f"broker {args.broker_id} is back: {cluster.broker_address(args.broker_id)}")
    return 0
