"""The report opened in headless Chromium: the plots render, nothing errs, a screenshot shows them.

Needs Debian's chromium and the Playwright client (scripts/install-browser.sh installs both);
skips, saying which is missing, when they are not there.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
from matplotlib.image import imread

from helpers import keep_screenshot
from report_helpers import realistic_files, report_args, report_files

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync"]


@pytest.fixture(scope="module")
def browser():
    if not Path(CHROMIUM).exists():
        pytest.skip("no chromium: run scripts/install-browser.sh (apt-get install chromium)")
    sync_api = pytest.importorskip("playwright.sync_api", reason="no playwright: run scripts/install-browser.sh")
    with sync_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield launched
        launched.close()


@pytest.mark.slow
def test_plots_render_without_console_errors(browser, cli, tmp_path):
    files = report_files(tmp_path)
    output = tmp_path / "report.html"
    assert cli("report", *report_args(files), "-o", str(output)).exit_code == 0
    page = browser.new_page(viewport={"width": 1100, "height": 900})
    problems: list[str] = []
    page.on("console", lambda message: problems.append(message.text) if message.type == "error" else None)
    page.on("pageerror", lambda error: problems.append(str(error)))
    page.on("dialog", lambda dialog: problems.append(f"dialog: {dialog.message}"))  # an unescaped alert(1)
    page.goto(output.as_uri())
    plots = page.query_selector_all("figure.plot svg")
    boxes = [plot.bounding_box() for plot in plots]
    assert len(boxes) == 3
    assert all(box and box["width"] > 200 and box["height"] > 100 for box in boxes)
    assert page.title() == "semrel report"
    assert page.inner_text("#metrics td:has(sup)").startswith("0.9375")
    screenshot = tmp_path / "report.png"
    page.screenshot(path=str(screenshot), full_page=True)
    page.close()
    assert problems == []
    pixels = imread(str(screenshot))[..., :3]
    for box in boxes:  # each plot's area holds ink, not a blank square
        top, left = int(box["y"]), int(box["x"])
        area = pixels[top:top + int(box["height"]), left:left + int(box["width"])]
        assert area.size and (area < 0.5).any(axis=-1).mean() > 0.01
        assert len(np.unique(area.reshape(-1, 3), axis=0)) > 5  # several colours: bars, lines, text


def test_a_realistic_report_reads_well_and_is_the_docs_screenshot(browser, cli, tmp_path):
    """Four runs over 40 queries: metrics on derived labels and gold chunks side by side, agreement as
    tables, a full-width sensitivity plot labelled at the lines' ends. The screenshot is docs/report.png."""
    args = realistic_files(tmp_path, cli)
    output = tmp_path / "report.html"
    assert cli("report", *args, "-o", str(output)).exit_code == 0
    page = browser.new_page(viewport={"width": 1100, "height": 900})
    problems: list[str] = []
    page.on("console", lambda message: problems.append(message.text) if message.type == "error" else None)
    page.on("pageerror", lambda error: problems.append(str(error)))
    page.goto(output.as_uri())
    assert page.inner_text("#metrics thead tr:nth-child(2)").split() == ["derived", "gold"] * 4
    assert len(page.query_selector_all("#metrics table.metrics > tbody > tr")) == 4
    confusion = page.inner_text("#agreement table.confusion")
    assert "gold chunks: 1 (relevant)" in confusion and "derived labels" in confusion
    assert page.inner_text("#agreement h2") == "Agreement of the derived labels with the gold chunks"
    plot = page.query_selector("#sensitivity svg").bounding_box()
    assert plot and plot["width"] > 900 and plot["height"] > 250  # the full width of the page, not a thumbnail
    page.screenshot(path=str(tmp_path / "report.png"), full_page=True)
    page.close()
    assert problems == []
    keep_screenshot(tmp_path / "report.png", "report.png")


@pytest.mark.slow
def test_a_long_id_wraps_within_the_page(browser, cli, tmp_path):
    """A 300-character query id in the gained/lost table made the page three times the window's width."""
    long_id = "x" * 300
    (tmp_path / "q.qrels").write_text(f"{long_id} 0 a 1\nq2 0 a 1\n")
    (tmp_path / "base.run").write_text(f"{long_id} Q0 b 1 2 s\n{long_id} Q0 a 2 1 s\nq2 Q0 a 1 2 s\nq2 Q0 b 2 1 s\n")
    (tmp_path / "rr.run").write_text(f"{long_id} Q0 a 1 2 s\n{long_id} Q0 b 2 1 s\nq2 Q0 a 1 2 s\nq2 Q0 b 2 1 s\n")
    output = tmp_path / "report.html"
    result = cli("report", str(tmp_path / "q.qrels"), str(tmp_path / "base.run"), "--base", str(tmp_path / "base.run"),
                 "--reranked", str(tmp_path / "rr.run"), "-o", str(output))
    assert result.exit_code == 0, result.stderr
    page = browser.new_page(viewport={"width": 1100, "height": 900})
    page.goto(output.as_uri())
    width = page.evaluate("document.documentElement.scrollWidth")
    page.close()
    assert width <= 1100


@pytest.mark.slow
def test_a_phone_wide_window_scrolls_wide_tables_not_the_page(browser, cli, tmp_path):
    """At 390px (a phone) the golden-set lengths, lift and paired-tests tables, the confusion matrix, the rankings and the
    lift's run paths stuck out of the page, which scrolled sideways as a whole (2.6 times the window's width)."""
    args = realistic_files(tmp_path, cli)
    output = tmp_path / "report.html"
    assert cli("report", *args, "-o", str(output)).exit_code == 0
    page = browser.new_page(viewport={"width": 390, "height": 800})
    page.goto(output.as_uri())
    width = page.evaluate("document.documentElement.scrollWidth")
    page.close()
    assert width == 390
