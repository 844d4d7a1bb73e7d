"""report.html as a reader sees it: rendered by a real headless browser (Debian's
chromium, bootstrap.sh installs it).

The page itself carries no script (and a Content-Security-Policy that forbids any fetch
but data: images), so the checks run on a copy with a probe script appended: after the
load event it writes into the DOM what the browser decoded (every <img>'s natural size)
and every resource the page fetched (the Resource Timing list, which names every network
request a page makes), and --dump-dom prints that DOM. A screenshot shows the page drawn.
"""
from __future__ import annotations

import json
import re
import shutil
import subprocess

import pytest

from hopsim import cli

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed "
                                "(bootstrap.sh's apt_packages installs Debian's chromium)")

_PROBE = """
<script>
window.addEventListener("load", () => {
  const imgs = [...document.images].map(i => ({complete: i.complete, w: i.naturalWidth,
                                              h: i.naturalHeight}));
  const fetched = performance.getEntriesByType("resource").map(e => e.name);
  const out = document.createElement("pre");
  out.id = "probe";
  out.textContent = JSON.stringify({imgs, fetched, title: document.title,
                                    text: document.body.innerText});
  document.body.appendChild(out);
});
</script>
"""


def _chromium(*args, cwd):
    # --no-sandbox: the tests may run as root, where chromium's sandbox refuses to start.
    cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
           "--disable-extensions", "--disable-background-networking", "--disable-sync",
           "--disable-component-update", "--disable-default-apps",
           f"--user-data-dir={cwd / 'profile'}", "--virtual-time-budget=10000", *args]
    p = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=180)
    assert p.returncode == 0, p.stderr[-2000:]
    return p.stdout


def _probe(page, tmp_path) -> dict:
    html = page.read_text(encoding="utf-8")
    html = re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", html)
    probed = tmp_path / "probed.html"
    probed.write_text(html.replace("</body>", _PROBE + "</body>"), encoding="utf-8")
    dom = _chromium("--dump-dom", probed.as_uri(), cwd=tmp_path)
    m = re.search(r'<pre id="probe">(.*?)</pre>', dom, re.S)
    assert m, dom[-2000:]
    import html as h
    return json.loads(h.unescape(m.group(1)))


@pytest.fixture(scope="module")
def gce_report(tmp_path_factory):
    out = tmp_path_factory.mktemp("gce")
    assert cli.main(["run", "gce", "--quick", "--out", str(out / "r")]) == 0
    return out / "r" / "report.html"


def test_a_reader_sees_the_title_tables_and_decoded_figures(gce_report, tmp_path):
    seen = _probe(gce_report, tmp_path)
    assert seen["title"].startswith("Google Compute Engine 2013")
    # A table cell as printed: the published first trial of n1-standard-1 (platforms.md).
    assert "183.12" in seen["text"] and "n1-highmem-4" in seen["text"]
    assert "published trial 1 us" in seen["text"]
    assert "network.latency_us" in seen["text"]            # provenance is shown
    assert "hopsim run gce --seed 1 --quick" in seen["text"]  # the command to rerun it
    assert seen["imgs"], "no figure in the page"
    for img in seen["imgs"]:
        assert img["complete"] and img["w"] > 0 and img["h"] > 0, img
    assert seen["fetched"] == []                           # nothing loaded from anywhere


def test_the_azure_report_shows_its_published_table_and_figure(tmp_path):
    assert cli.main(["run", "azure-econome", "--quick", "--out", str(tmp_path / "r")]) == 0
    seen = _probe(tmp_path / "r" / "report.html", tmp_path)
    assert seen["title"].startswith("Azure G5 vs Grid'5000 econome 2016")
    assert "Azure G5 (cloud)" in seen["text"] and "azure-g5, eager only" in seen["text"]
    assert "host.eager_threshold_bytes" in seen["text"]
    assert len(seen["imgs"]) == 1 and seen["imgs"][0]["w"] == 1000   # 10 in x 100 dpi
    assert seen["fetched"] == []


def test_the_page_as_shipped_makes_no_request_and_draws(gce_report, tmp_path):
    html = gce_report.read_text(encoding="utf-8")
    # Every address in the page is a data: image; the CSP forbids any other fetch.
    for attr in re.findall(r'(?:src|href)="([^"]*)"', html):
        assert attr.startswith("data:image/png;base64,"), attr[:80]
    assert "default-src 'none'" in html
    shot = tmp_path / "shot.png"
    _chromium(f"--screenshot={shot}", "--window-size=1200,2400", gce_report.as_uri(),
              cwd=tmp_path)
    import matplotlib.image as mpimg
    pixels = mpimg.imread(shot)
    assert pixels.shape[0] == 2400 and pixels.shape[1] == 1200
    # A blank or failed render is one colour; text, tables and a figure are many.
    colours = {tuple(p) for p in pixels[::7, ::7].reshape(-1, pixels.shape[2]).tolist()}
    assert len(colours) > 20
