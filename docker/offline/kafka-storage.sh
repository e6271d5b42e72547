#!/bin/bash
# Minimal stand-in for the distribution's bin/kafka-storage.sh: runs kafka.tools.StorageTool.
cds=()
[[ -f "${KAFKA_HOME}/storage.jsa" && -z "${KAFKA_OPTS:-}" ]] && cds=(-XX:SharedArchiveFile="${KAFKA_HOME}/storage.jsa")
exec "$JAVA_HOME/bin/java" ${KAFKA_HEAP_OPTS:--Xmx256m} "${cds[@]}" ${KAFKA_OPTS:-} \
    -Dlog4j2.configurationFile="${KAFKA_HOME}/config/log4j2.properties" \
    -cp "${KAFKA_HOME}/libs/*" kafka.tools.StorageTool "$@"
