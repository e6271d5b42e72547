"""Planning without Spark: scenarios, the one-pass key reduction, loads, skew, the report.

The Spark pipeline (:mod:`kafka_placement.spark.pipeline`) and the single-process path
(:mod:`kafka_placement.planning.local`) both feed batches of distinct keys to
:class:`~kafka_placement.planning.key_loads.KeyLoadReducer` and build the same
:class:`~kafka_placement.planning.result.PlanResult` from the merged partials.

Imports no Kafka client and no Spark (pyarrow, numpy, pandas only); no I/O but the report's files.
"""
