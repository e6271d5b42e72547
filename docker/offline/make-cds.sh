#!/bin/bash
# Build-time step (docker build, network none): record class-data-sharing archives for the storage
# tool and the broker by running each once — a single-node broker until it reports "started", then
# SIGTERM. The launchers use the archives when present; the JVM silently ignores one that does not fit.
set -euo pipefail
work=/tmp/cds
mkdir -p "$work"
sed "s#^log.dirs=.*#log.dirs=$work/logs#" /etc/kafka/docker/server.properties > "$work/server.properties"
export KAFKA_HEAP_OPTS="-Xmx256m -Xms128m"
KAFKA_OPTS="-XX:ArchiveClassesAtExit=${KAFKA_HOME}/storage.jsa" \
    "${KAFKA_HOME}/bin/kafka-storage.sh" format --cluster-id 5L6g3nShT-eMCtK--X86sw --config "$work/server.properties"
KAFKA_OPTS="-XX:ArchiveClassesAtExit=${KAFKA_HOME}/kafka.jsa" \
    "${KAFKA_HOME}/bin/kafka-server-start.sh" "$work/server.properties" > "$work/server.log" 2>&1 &
pid=$!
for _ in $(seq 240); do
    grep -q "Kafka Server started" "$work/server.log" && break
    kill -0 "$pid" 2>/dev/null || { tail -n 40 "$work/server.log"; exit 1; }
    sleep 0.5
done
grep -q "Kafka Server started" "$work/server.log" || { tail -n 40 "$work/server.log"; exit 1; }
kill -TERM "$pid"
wait "$pid" || true
ls -la "${KAFKA_HOME}"/storage.jsa "${KAFKA_HOME}"/kafka.jsa
rm -rf "$work"
