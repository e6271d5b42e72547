"""``python -m kafka_placement.testing up|down|status`` — the long-lived shared dev cluster.

up      start a cluster (unless the state file names a healthy one) and write the state file;
        the containers keep running after this command exits.
down    remove the cluster named in the state file (``--all``: every kafka-placement container).
status  print the state and what describe_cluster reports; exit 1 if not healthy.
env     print ``export KAFKA_PLACEMENT_REUSE=1`` and ``KAFKA_BOOTSTRAP_SERVERS=…`` lines for a shell.
start-broker N  start broker N of the shared cluster again (after a test left it down).
State file: env ``KAFKA_PLACEMENT_STATE`` or ``~/.cache/kafka-placement/dev-cluster.json``.
"""

from __future__ import annotations

import argparse
import sys
import time

from kafka_placement.testing.cluster import (
    ClusterError,
    KafkaCluster,
    describe_brokers,
    docker_client,
    remove_leftovers,
)
from kafka_placement.testing.state import (
    StateError,
    default_state_path,
    read_state,
    remove_state,
    write_state,
)


def _healthy(cluster: KafkaCluster) -> tuple[bool, str]:
    try:
        seen = describe_brokers(cluster.bootstrap_servers, timeout_s=5.0)
    except Exception as exc:
        return False, f"{type(exc).__name__}: {exc}"
    ok = seen == cluster.broker_racks
    return ok, f"describe_cluster: {dict(sorted(seen.items()))}"


def cmd_up(args: argparse.Namespace) -> int:
    try:
        existing = KafkaCluster.attach(read_state())
    except (StateError, ClusterError):
        existing = None
    if existing is not None:
        ok, detail = _healthy(existing)
        if ok:
            print(f"shared cluster {existing.name} already up: {existing.bootstrap_servers}")
            return 0
        print(f"shared cluster {existing.name} in the state file is unhealthy ({detail}); replacing it",
              file=sys.stderr)
        remove_leftovers(docker_client(), existing.name)
        remove_state()
    cluster = KafkaCluster(image=args.image, name=args.name or f"kp-dev-{int(time.time())}", persistent=True)
    cluster.start()
    path = write_state(cluster.state())
    print(f"shared cluster {cluster.name} up in {cluster.startup_seconds:.1f}s")
    print(f"bootstrap servers: {cluster.bootstrap_servers}")
    print(f"state file: {path}")
    print("use it in tests: KAFKA_PLACEMENT_REUSE=1 .venv/bin/pytest -m integration ...")
    return 0


def cmd_down(args: argparse.Namespace) -> int:
    client = docker_client()
    if args.all:
        removed = remove_leftovers(client)
        remove_state()
        print(f"removed {len(removed)} kafka-placement containers")
        return 0
    try:
        state = read_state()
    except StateError as exc:
        print(str(exc), file=sys.stderr)
        return 1
    removed = remove_leftovers(client, state.name)
    remove_state()
    print(f"removed cluster {state.name} ({len(removed)} containers)")
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    try:
        state = read_state()
        cluster = KafkaCluster.attach(state)
    except (StateError, ClusterError) as exc:
        print(f"no healthy shared cluster: {exc}")
        return 1
    ok, detail = _healthy(cluster)
    down = cluster.not_running_brokers()
    ok = ok and not down
    age = time.time() - state.started_at
    health = "healthy" if ok else "UNHEALTHY"
    print(f"cluster {state.name} ({health}), image {state.image}, up {age / 60:.0f} min")
    print(f"bootstrap servers: {cluster.bootstrap_servers}")
    print(f"racks: {cluster.broker_racks}")
    print(detail)
    if down:
        print(f"broker containers NOT running: {down} "
              "(python -m kafka_placement.testing start-broker N starts one again)")
    print(f"state file: {default_state_path()}")
    return 0 if ok else 1


def cmd_start_broker(args: argparse.Namespace) -> int:
    cluster = KafkaCluster.attach(read_state())
    cluster.start_broker(args.broker_id)
    print(f"broker {args.broker_id} is back: {cluster.broker_address(args.broker_id)}")
    return 0


def cmd_env(args: argparse.Namespace) -> int:
    try:
        state = read_state()
    except StateError as exc:
        print(str(exc), file=sys.stderr)
        return 1
    print("export KAFKA_PLACEMENT_REUSE=1")
    print(f"export KAFKA_PLACEMENT_STATE={default_state_path()}")
    print(f"export KAFKA_BOOTSTRAP_SERVERS={state.layout.bootstrap_servers}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m kafka_placement.testing", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    up = sub.add_parser("up", help="start the shared dev cluster (idempotent)")
    up.add_argument("--image", default=None, help="Kafka image (default: KAFKA_IMAGE / ensure-image logic)")
    up.add_argument("--name", default=None, help="container name prefix")
    up.set_defaults(handler=cmd_up)
    down = sub.add_parser("down", help="remove the shared dev cluster")
    down.add_argument("--all", action="store_true", help="remove every kafka-placement container")
    down.set_defaults(handler=cmd_down)
    sub.add_parser("status", help="is the shared cluster healthy?").set_defaults(handler=cmd_status)
    sub.add_parser("env", help="shell exports for the shared cluster").set_defaults(handler=cmd_env)
    sb = sub.add_parser("start-broker", help="start a stopped/killed broker of the shared cluster again")
    sb.add_argument("broker_id", type=int)
    sb.set_defaults(handler=cmd_start_broker)
    args = parser.parse_args(argv)
    try:
        return int(args.handler(args))
    except (ClusterError, StateError, KeyError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
