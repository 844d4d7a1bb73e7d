"""pytest plugin for bench/mutation.py's coverage map: each test's lines under its node id.

In the pytest process the running Coverage switches its dynamic context to the test's
node id; for the hopsim commands a test starts as subprocesses (coverage's `patch =
subprocess`), the node id travels in HOPSIM_TEST_ID, which the coverage rc file names as
the static context of every child.
"""
import os

import coverage
import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    cov = coverage.Coverage.current()
    os.environ["HOPSIM_TEST_ID"] = item.nodeid
    if cov is not None:
        cov.switch_context(item.nodeid)
    yield
    if cov is not None:
        cov.switch_context("")
    os.environ.pop("HOPSIM_TEST_ID", None)
