#!/usr/bin/env bash
# Decide which Apache Kafka image the cluster harness runs, building the offline one if needed.
# The image tag is printed on the LAST line of stdout; progress and timings go to stderr.
#
#   1. env KAFKA_IMAGE set              -> that image (used as is).
#   2. apache/kafka:<KAFKA_VERSION> present in the engine -> the official image.
#   3. kafka-placement/kafka:<KAFKA_VERSION> already built from the current recipe -> reuse it.
#   4. otherwise build it (docker/offline/): debootstrap a Debian bookworm rootfs with
#      openjdk-17-jre-headless from the Debian mirror apt uses here, `docker import` it, resolve the
#      official Kafka jars from Maven Central with Maven (cached in ~/.m2), `docker build` on top.
#
# The Kafka version comes from plugin/kafka_placement/versions.py unless KAFKA_PLACEMENT_KAFKA_VERSION names
# another 4.x release (the harness sets it for KafkaCluster(kafka_version=...)).
# Env: KAFKA_IMAGE, KAFKA_PLACEMENT_KAFKA_VERSION, DEBIAN_MIRROR, KAFKA_PLACEMENT_BUILD_DIR (default ~/.cache/kafka-placement/offline-image),
#      KAFKA_PLACEMENT_REBUILD_IMAGE=1 (force a rebuild of the Kafka layer).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
recipe="$root/docker/offline"
t_start=$(date +%s)
say() { echo "ensure-image: $*" >&2; }
die() { say "ERROR: $*"; exit 1; }

# KAFKA_IMAGE names the pinned version's image (the dev cluster's env sets it): not for another version.
if [[ -n "${KAFKA_IMAGE:-}" && -z "${KAFKA_PLACEMENT_KAFKA_VERSION:-}" ]]; then
    say "using KAFKA_IMAGE=$KAFKA_IMAGE from the environment"
    echo "$KAFKA_IMAGE"
    exit 0
fi

py=python3
[[ -x "$root/.venv/bin/python" ]] && py="$root/.venv/bin/python"
versions=$(PYTHONPATH="$root/plugin" "$py" -m kafka_placement.versions) || die "cannot read versions.py"
kafka_version=$(sed -n 's/^KAFKA_VERSION=//p' <<<"$versions")
# Another Kafka 4.x than the pin (the version matrix, KafkaCluster(kafka_version=...)): checked here too,
# since the value names an image tag and a Maven version.
if [[ -n "${KAFKA_PLACEMENT_KAFKA_VERSION:-}" ]]; then
    [[ "$KAFKA_PLACEMENT_KAFKA_VERSION" =~ ^4\.[0-9]{1,4}\.[0-9]{1,4}$ ]] \
        || die "KAFKA_PLACEMENT_KAFKA_VERSION=$KAFKA_PLACEMENT_KAFKA_VERSION is not a Kafka 4.x release (MAJOR.MINOR.PATCH, 4.0.0 or newer)"
    kafka_version=$KAFKA_PLACEMENT_KAFKA_VERSION
fi
scala_version=$(sed -n 's/^SCALA_BINARY_VERSION=//p' <<<"$versions")
[[ -n "$kafka_version" && -n "$scala_version" ]] || die "versions.py printed no KAFKA_VERSION/SCALA_BINARY_VERSION"

docker info >/dev/null 2>&1 || die "no docker engine answers (run scripts/ensure-engine.sh first)"

official="apache/kafka:$kafka_version"
if docker image inspect "$official" >/dev/null 2>&1; then
    say "official image $official is present"
    echo "$official"
    exit 0
fi

# Base layer: Debian bookworm + JRE 17. Its identity is the package list below.
base_packages="openjdk-17-jre-headless"
base_tag="kafka-placement/jre:bookworm-17"
base_recipe_id=$(printf 'bookworm minbase %s v1' "$base_packages" | sha256sum | cut -c1-16)
# Kafka layer: identity = version + every file of the recipe.
recipe_id=$( (echo "$kafka_version $scala_version $base_recipe_id"; cd "$recipe" && cat Dockerfile pom.xml run \
    server.properties log4j2.properties kafka-storage.sh kafka-server-start.sh make-cds.sh) | sha256sum | cut -c1-16)
tag="kafka-placement/kafka:$kafka_version"

label_of() { docker image inspect --format "{{ index .Config.Labels \"kafka-placement.recipe\" }}" "$1" 2>/dev/null || true; }

if [[ "${KAFKA_PLACEMENT_REBUILD_IMAGE:-0}" != 1 && "$(label_of "$tag")" == "$recipe_id" ]]; then
    say "reusing offline image $tag (recipe $recipe_id)"
    echo "$tag"
    exit 0
fi

work=${KAFKA_PLACEMENT_BUILD_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/kafka-placement/offline-image}
mkdir -p "$work"

debian_mirror() {
    if [[ -n "${DEBIAN_MIRROR:-}" ]]; then echo "$DEBIAN_MIRROR"; return; fi
    local m=""
    # deb822 sources first (URIs: of the stanza listing the plain "bookworm" suite), then one-line.
    for f in /etc/apt/sources.list.d/*.sources; do
        [[ -f "$f" ]] || continue
        m=$(awk 'BEGIN{RS=""} /Suites:[^\n]*[[:space:]]bookworm([[:space:]]|$)/ {
                 if (match($0, /URIs:[[:space:]]*[^[:space:]]+/)) { s=substr($0,RSTART,RLENGTH); sub(/URIs:[[:space:]]*/,"",s); print s; exit } }' "$f")
        [[ -n "$m" ]] && break
    done
    if [[ -z "$m" ]]; then
        m=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null \
            | awk '$1=="deb" && $0 ~ / bookworm / { for (i=2;i<=NF;i++) if ($i ~ /^https?:/) { print $i; exit } }')
    fi
    echo "${m:-http://deb.debian.org/debian}"
}

if [[ "$(label_of "$base_tag")" != "$base_recipe_id" ]]; then
    command -v debootstrap >/dev/null 2>&1 || die "debootstrap is missing (scripts/ensure-engine.sh installs it; or apt-get install debootstrap)"
    [[ $(id -u) -eq 0 ]] || die "building the offline base image needs root (debootstrap)"
    mirror=$(debian_mirror)
    say "building base image $base_tag: debootstrap bookworm + $base_packages from $mirror"
    t0=$(date +%s)
    rootfs="$work/rootfs"
    rm -rf "$rootfs"
    debootstrap --variant=minbase --include="$base_packages" bookworm "$rootfs" "$mirror" \
        >"$work/debootstrap.log" 2>&1 || { tail -n 30 "$work/debootstrap.log" >&2; die "debootstrap failed (log: $work/debootstrap.log)"; }
    # Trim what a JRE container never needs.
    rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/* \
        "$rootfs"/usr/share/doc/* "$rootfs"/usr/share/man/* "$rootfs"/usr/share/locale/* "$rootfs"/tmp/*
    t1=$(date +%s)
    say "debootstrap done in $((t1 - t0))s ($(du -sh "$rootfs" | cut -f1))"
    tar -C "$rootfs" -c . | docker import \
        --change "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" \
        --change "ENV JAVA_HOME=/usr/lib/jvm/java-17-openjdk-amd64" \
        --change "LABEL kafka-placement.recipe=$base_recipe_id" \
        - "$base_tag" >/dev/null || die "docker import of the rootfs failed"
    rm -rf "$rootfs"
    say "base image $base_tag imported in $(( $(date +%s) - t1 ))s"
else
    say "reusing base image $base_tag"
fi

command -v mvn >/dev/null 2>&1 || {
    [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null 2>&1 || die "Maven (mvn) is missing"
    say "installing maven"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends maven >/dev/null \
        || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends maven >/dev/null; } \
        || die "apt-get install maven failed"
}

ctx="$work/context-$kafka_version"  # per version: the matrix may build two at once
rm -rf "$ctx"
mkdir -p "$ctx/libs"
say "resolving org.apache.kafka:kafka_$scala_version:$kafka_version + runtime deps from Maven Central"
t0=$(date +%s)
mvn -q -B -f "$recipe/pom.xml" -Dkafka.version="$kafka_version" -Dscala.binary.version="$scala_version" \
    dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$ctx/libs" >"$work/maven-$kafka_version.log" 2>&1 \
    || { tail -n 30 "$work/maven-$kafka_version.log" >&2; die "maven could not resolve the Kafka jars (log: $work/maven-$kafka_version.log)"; }
[[ -f "$ctx/libs/kafka_$scala_version-$kafka_version.jar" ]] || die "kafka_$scala_version-$kafka_version.jar not resolved"
say "jars resolved in $(( $(date +%s) - t0 ))s ($(ls "$ctx/libs" | wc -l) jars, $(du -sh "$ctx/libs" | cut -f1))"

cp "$recipe"/{Dockerfile,run,server.properties,log4j2.properties,kafka-storage.sh,kafka-server-start.sh,make-cds.sh} "$ctx/"
t0=$(date +%s)
# --network none: the build-time CDS run binds localhost ports in a private network namespace.
docker build -q --network none --build-arg BASE_IMAGE="$base_tag" --build-arg KAFKA_VERSION="$kafka_version" \
    --label "kafka-placement.recipe=$recipe_id" -t "$tag" "$ctx" >"$work/build-$kafka_version.log" 2>&1 \
    || { tail -n 30 "$work/build-$kafka_version.log" >&2; die "docker build failed (log: $work/build-$kafka_version.log)"; }
say "docker build done in $(( $(date +%s) - t0 ))s"
say "offline image $tag built in $(( $(date +%s) - t_start ))s total"
echo "$tag"
