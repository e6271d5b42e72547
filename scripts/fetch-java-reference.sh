#!/usr/bin/env bash
# Resolves the official Apache Kafka jars that the conformance suite drives through JPype
# (kafka-clients, kafka-server-common, kafka-metadata and their runtime dependencies) from Maven
# Central, for the ONE pinned version in plugin/kafka_placement/versions.py.
#
# org.apache.kafka.admin.AdminUtils (assignReplicasToBrokers) was deleted from Kafka after 4.0
# (it served the ZooKeeper-era topic commands); its last release is kafka-server-common 4.0.x,
# which is resolved on its own (no dependencies) and loaded in a child class loader, so every
# other class still comes from the pinned version.
#
# Output: <cache>/lib/*.jar, <cache>/adminutils/*.jar and <cache>/READY, where <cache> is
# $KAFKA_PLACEMENT_JAVA_CACHE or ${XDG_CACHE_HOME:-~/.cache}/kafka-placement/java/<version>. Idempotent: a second run
# with the jars in place returns at once. Prints the cache directory as its last line.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
python=${PYTHON:-"$root/.venv/bin/python"}
[ -x "$python" ] || python=python3
export PYTHONPATH="$root/plugin${PYTHONPATH:+:$PYTHONPATH}"

eval "$("$python" -m kafka_placement.versions)"              # KAFKA_VERSION, SCALA_BINARY_VERSION
eval "$("$python" -m kafka_placement.conformance.jars --env)"  # ADMIN_UTILS_KAFKA_VERSION, JAVA_CACHE
cache=$JAVA_CACHE
pom="$root/plugin/kafka_placement/conformance/pom.xml"
stamp="$cache/READY"
want="kafka=$KAFKA_VERSION adminutils=$ADMIN_UTILS_KAFKA_VERSION pom=$(sha256sum "$pom" | cut -c1-16)"

if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  echo "[java-reference] cached: $(ls "$cache/lib" | wc -l) jars for Kafka $KAFKA_VERSION"
  echo "$cache"
  exit 0
fi

need_apt=()
command -v javac >/dev/null 2>&1 || need_apt+=(openjdk-17-jdk-headless)
command -v mvn >/dev/null 2>&1 || need_apt+=(maven)
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "[java-reference] installing ${need_apt[*]} (Debian packages)"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${need_apt[@]}" >/dev/null
fi

echo "[java-reference] resolving Kafka $KAFKA_VERSION reference jars from Maven Central into $cache"
tmp="$cache.tmp.$$"
rm -rf "$tmp"
mkdir -p "$tmp/lib" "$tmp/adminutils"
trap 'rm -rf "$tmp"' EXIT
log="$tmp/maven.log"
maven() {
  if ! mvn -B -q -Dstyle.color=never -f "$pom" "$@" >"$log" 2>&1; then
    cat "$log" >&2
    echo "[java-reference] Maven failed: mvn $*" >&2
    exit 1
  fi
}
maven -Dkafka.version="$KAFKA_VERSION" \
  dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$tmp/lib"
maven dependency:copy -Dartifact="org.apache.kafka:kafka-server-common:$ADMIN_UTILS_KAFKA_VERSION" \
  -DoutputDirectory="$tmp/adminutils"
for jar in "kafka-clients-$KAFKA_VERSION.jar" "kafka-server-common-$KAFKA_VERSION.jar" \
           "kafka-metadata-$KAFKA_VERSION.jar"; do
  [ -f "$tmp/lib/$jar" ] || { echo "[java-reference] missing $jar after resolution" >&2; exit 1; }
done
rm -rf "$cache/lib" "$cache/adminutils"
mkdir -p "$cache"
mv "$tmp/lib" "$tmp/adminutils" "$cache/"
echo "$want" > "$stamp"
echo "[java-reference] ready: $(ls "$cache/lib" | wc -l) jars"
echo "$cache"
