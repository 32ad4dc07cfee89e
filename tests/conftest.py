"""Settings for the whole suite.

Hypothesis's per-example deadline (200 ms by default) is a timing assertion: on a loaded machine a
correct example can exceed it, and the suite must not fail for the machine's speed. It is switched
off here; tests that guard against slow paths check complexity instead (see
``tests/test_yaml_constructs.py``), and performance is measured by ``tests/benchmarks/``.
"""

from __future__ import annotations

from hypothesis import HealthCheck, settings

settings.register_profile(
    "suite", deadline=None, suppress_health_check=[HealthCheck.too_slow], print_blob=True
)
settings.load_profile("suite")
