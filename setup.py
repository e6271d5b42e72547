"""Build hook only: metadata lives in pyproject.toml. Compiles the optional C accelerator for batch key
hashing; ``optional=True`` lets an install without a C compiler succeed (numpy fallback is used then)."""

import sys

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "kafka_placement.partitioning._native",
            sources=["plugin/kafka_placement/partitioning/_native.c"],
            extra_compile_args=[] if sys.platform == "win32" else ["-O3", "-std=c99"],
            optional=True,
        )
    ]
)
