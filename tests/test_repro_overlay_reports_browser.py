"""The ray-routing and whatif-4096 reports as a reader sees them in Debian's chromium
(the probe of test_report_browser.py: the DOM's text, every image decoded, nothing
fetched)."""
from __future__ import annotations

import pytest
from test_report_browser import CHROMIUM, _probe

from hopsim import cli

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed "
                                "(bootstrap.sh's apt_packages installs Debian's chromium)")


def _report(tmp_path, name):
    assert cli.main(["run", name, "--quick", "--out", str(tmp_path / "r")]) == 0
    return tmp_path / "r" / "report.html"


def test_ray_routing_report(tmp_path):
    seen = _probe(_report(tmp_path, "ray-routing"), tmp_path)
    assert seen["title"].startswith("Ray's network test 2011-2012")
    text = seen["text"]
    # The published QLogic figures beside hopsim's, and the columns a reader compares.
    assert "published AverageForAllRanks us" in text and "average error %" in text
    assert "de Bruijn B(2, 6)" in text and "Kautz K(7, 2)" in text
    assert "host.pass_us" in text                          # qdr-ib's provenance is shown
    assert "Relay load and the spread over ranks" in text
    assert len(seen["imgs"]) == 1
    assert all(i["complete"] and i["w"] > 0 and i["h"] > 0 for i in seen["imgs"])
    assert seen["fetched"] == []


def test_whatif_4096_report(tmp_path):
    seen = _probe(_report(tmp_path, "whatif-4096"), tmp_path)
    assert seen["title"].startswith("What if 4096 ranks")
    text = seen["text"]
    assert "runner-up" in text and "us per hop" in text and "gce-n1-standard-1" in text
    assert "Why: connections, relay passes, per-message cost." in text
    assert len(seen["imgs"]) == 1
    assert all(i["complete"] and i["w"] > 0 and i["h"] > 0 for i in seen["imgs"])
    assert seen["fetched"] == []
