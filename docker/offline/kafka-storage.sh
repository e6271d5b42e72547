#!/bin/bash
# Minimal stand-in for the distribution's bin/kafka-storage.sh: runs kafka.tools.StorageTool.
exec "$JAVA_HOME/bin/java" ${KAFKA_HEAP_OPTS:--Xmx256m} \
    -Dlog4j2.configurationFile="${KAFKA_HOME}/config/log4j2.properties" \
    -cp "${KAFKA_HOME}/libs/*" kafka.tools.StorageTool "$@"
