"""Build hook only: metadata lives in pyproject.toml. Compiles the optional C accelerators (batch key
hashing and the record router; dealing partitions to members; reading owned partitions and handing
out the sticky result); ``optional=True`` lets an install without
a C compiler succeed (the numpy / pure-Python forms are used then).
``KAFKA_PLACEMENT_PURE=1`` builds without them: the pure-Python wheel (``py3-none-any``)."""

import os
import sys

from setuptools import Extension, setup

PURE = os.environ.get("KAFKA_PLACEMENT_PURE", "") not in ("", "0")
C_ARGS = [] if sys.platform == "win32" else ["-O3", "-std=c99"]

setup(
    ext_modules=[]
    if PURE
    else [
        Extension(
            "kafka_placement.partitioning._native",
            sources=[
                "plugin/kafka_placement/partitioning/_native.c",
                "plugin/kafka_placement/partitioning/_router.c",
                "plugin/kafka_placement/partitioning/_one_key.c",
            ],
            depends=["plugin/kafka_placement/partitioning/_hash_kernels.h"],
            extra_compile_args=C_ARGS,
            optional=True,
        ),
        Extension(
            "kafka_placement.assignment._dealing",
            sources=["plugin/kafka_placement/assignment/_dealing.c"],
            extra_compile_args=C_ARGS,
            optional=True,
        ),
        Extension(
            "kafka_placement.assignment._owned",
            sources=["plugin/kafka_placement/assignment/_owned.c"],
            extra_compile_args=C_ARGS,
            optional=True,
        ),
    ]
)
