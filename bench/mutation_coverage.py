"""pytest plugin for bench/mutation.py's coverage map: each test's lines under its node id.

In the pytest process the running Coverage switches its dynamic context to the test's
node id; for the hopsim commands a test starts as subprocesses, the node id travels in
HOPSIM_TEST_ID, which the coverage rc file names as the static context of every child.
Each test's duration goes to HOPSIM_TEST_TIMES (JSON), so that a mutant's tests can run
fastest first.
"""
import json
import os
import time

import coverage
import pytest

_TIMES: dict[str, float] = {}


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    cov = coverage.Coverage.current()
    os.environ["HOPSIM_TEST_ID"] = item.nodeid
    if cov is not None:
        cov.switch_context(item.nodeid)
    start = time.perf_counter()
    yield
    _TIMES[item.nodeid] = round(time.perf_counter() - start, 3)
    if cov is not None:
        cov.switch_context("")
    os.environ.pop("HOPSIM_TEST_ID", None)


def pytest_sessionfinish(session):
    if os.environ.get("HOPSIM_TEST_TIMES"):
        with open(os.environ["HOPSIM_TEST_TIMES"], "w") as f:
            json.dump(_TIMES, f)
