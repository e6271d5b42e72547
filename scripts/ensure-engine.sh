#!/usr/bin/env bash
# Make sure a Docker engine answers `docker info`.
#
# If one already answers: done. Otherwise (root on Debian) install Debian's docker.io engine and
# start `dockerd --bridge=none --iptables=false` in the background: loopback traffic only, no
# bridge network is ever created (containers run with network_mode=host). Idempotent.
#
# Env: KAFKA_PLACEMENT_DOCKERD_LOG (default /var/log/kafka-placement-dockerd.log),
#      KAFKA_PLACEMENT_ENGINE_TIMEOUT (seconds to wait for the engine, default 60).
set -euo pipefail

log=${KAFKA_PLACEMENT_DOCKERD_LOG:-/var/log/kafka-placement-dockerd.log}
timeout=${KAFKA_PLACEMENT_ENGINE_TIMEOUT:-60}
started=$(date +%s)

engine_answers() { docker info >/dev/null 2>&1; }

fail() {
    echo "ensure-engine: ERROR: $*" >&2
    if [[ -f "$log" ]]; then
        echo "ensure-engine: last lines of $log:" >&2
        tail -n 30 "$log" >&2 || true
    fi
    exit 1
}

if command -v docker >/dev/null 2>&1 && engine_answers; then
    echo "ensure-engine: docker engine already answers ($(docker version --format '{{.Server.Version}}' 2>/dev/null))"
    exit 0
fi

if [[ $(id -u) -ne 0 ]]; then
    fail "no docker engine answers and I am not root, so I cannot install/start one. Start a Docker engine (or set DOCKER_HOST) and retry."
fi

# Packages: the engine (docker.io pulls containerd + runc), iptables (dockerd links against it even
# with --iptables=false), debootstrap (for the offline Kafka image).
need=()
command -v dockerd >/dev/null 2>&1 || need+=(docker.io containerd runc)
command -v iptables >/dev/null 2>&1 || need+=(iptables)
command -v debootstrap >/dev/null 2>&1 || need+=(debootstrap)
if ((${#need[@]})); then
    command -v apt-get >/dev/null 2>&1 || fail "no docker engine and no apt-get to install Debian's docker.io"
    echo "ensure-engine: installing ${need[*]} from the configured Debian mirror"
    t0=$(date +%s)
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq || fail "apt-get update failed"
    apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null \
        || fail "apt-get install ${need[*]} failed"
    echo "ensure-engine: installed in $(( $(date +%s) - t0 ))s"
fi
command -v dockerd >/dev/null 2>&1 || fail "dockerd still missing after installing docker.io"

# A client-only docker may sit earlier on PATH (/usr/local/bin/docker); that is fine, it talks to
# the socket. DOCKER_HOST=unix:///some/path.sock (not the default socket) gets a separate engine
# instance with its own data/exec roots next to the socket (used to verify the chain from scratch
# without touching the machine's main engine).
args=(--bridge=none --iptables=false --ip6tables=false)
pidfile=/var/run/docker.pid
host=${DOCKER_HOST:-unix:///var/run/docker.sock}
if [[ "$host" != "unix:///var/run/docker.sock" ]]; then
    [[ "$host" == unix://* ]] || fail "DOCKER_HOST=$host does not answer and is not a unix socket I can start an engine on"
    sock=${host#unix://}
    root_dir="$(dirname "$sock")/engine"
    mkdir -p "$root_dir"
    pidfile="$root_dir/dockerd.pid"
    args+=(-H "$host" --data-root "$root_dir/data" --exec-root "$root_dir/exec" --pidfile "$pidfile")
fi
dockerd_alive() { [[ -f "$pidfile" ]] && kill -0 "$(cat "$pidfile")" 2>/dev/null; }
# Start dockerd unless this instance is already running but still booting.
if ! dockerd_alive; then
    mkdir -p "$(dirname "$log")"
    echo "ensure-engine: starting dockerd ${args[*]} (log: $log)"
    # containerd is started by dockerd itself when no system containerd is running.
    nohup dockerd "${args[@]}" >>"$log" 2>&1 </dev/null &
    launch_pid=$!
    disown || true
fi

deadline=$(( $(date +%s) + timeout ))
until engine_answers; do
    if (( $(date +%s) >= deadline )); then
        fail "dockerd did not answer 'docker info' within ${timeout}s"
    fi
    if ! dockerd_alive && ! { [[ -n "${launch_pid:-}" ]] && kill -0 "$launch_pid" 2>/dev/null; }; then
        fail "dockerd exited while starting"
    fi
    sleep 0.5
done
echo "ensure-engine: docker engine $(docker version --format '{{.Server.Version}}' 2>/dev/null) answers after $(( $(date +%s) - started ))s"
