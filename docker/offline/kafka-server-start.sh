#!/bin/bash
# Minimal stand-in for the distribution's bin/kafka-server-start.sh: runs kafka.Kafka <config>.
# Class-data-sharing archive recorded at image build time (make-cds.sh): faster JVM start.
cds=()
[[ -f "${KAFKA_HOME}/kafka.jsa" ]] && cds=(-XX:SharedArchiveFile="${KAFKA_HOME}/kafka.jsa")
exec "$JAVA_HOME/bin/java" ${KAFKA_HEAP_OPTS:--Xmx1G -Xms1G} "${cds[@]}" \
    ${KAFKA_JVM_PERFORMANCE_OPTS:--server -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:InitiatingHeapOccupancyPercent=35 -XX:+ExplicitGCInvokesConcurrent -Djava.awt.headless=true} \
    ${KAFKA_LOG4J_OPTS:--Dlog4j2.configurationFile=${KAFKA_HOME}/config/log4j2.properties} \
    ${KAFKA_OPTS:-} \
    -cp "${KAFKA_HOME}/libs/*" kafka.Kafka "$@"
