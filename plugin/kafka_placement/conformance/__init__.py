"""Differential conformance against Apache Kafka's own Java classes.

The official jars of the pinned Kafka version (``scripts/fetch-java-reference.sh``, Maven Central)
are loaded into this Python process with JPype; random, seeded scenarios are fed to both Kafka's
classes and ours, and every difference is reported. Nothing here is imported by the core
algorithms: this package is the proof, not the product.

- :mod:`.jars`       where the jars live, which versions, the class path
- :mod:`.bridge`     the JVM (started once) and typed wrappers over the Java entry points
- :mod:`.generators`  what the scenario generators share (seeded streams, Unicode names); the
  generators by area: :mod:`.key_scenarios`, :mod:`.group_scenarios`, :mod:`.placement_scenarios`
- :mod:`.kafka_python_sticky`  kafka-python's sticky assignor: a non-Java reference for properties and speed
- :mod:`.checks`     validity, KIP-54 balance score and movement of an assignment
- :mod:`.runner`     one differential check per algorithm, counting mismatches
"""
