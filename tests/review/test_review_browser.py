"""The review page in a real headless browser (Debian's chromium driven by Playwright) against
a real `semrel review serve` process: keyboard review, restart and resume, escaping, speed."""

from __future__ import annotations

import json
import re
import statistics
from pathlib import Path

import pytest
from test_review_processes import query

from helpers import keep_screenshot
from review_helpers import write_judged, write_pool
from review_web_helpers import Client, Server, write_large_pool

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync"]

sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install playwright)")
if not Path(CHROMIUM).exists():
    pytest.skip(f"no browser at {CHROMIUM} (apt-get install chromium)", allow_module_level=True)


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield browser
        browser.close()


def open_review(browser, server: Server, name: str, shading: list | None = None, viewport: tuple[int, int] = (1100, 900)):
    """A fresh browser session signed in as `name`, showing its first task; with `shading`, every chunk is shaded
    with those segments as if the server had computed them (no model needed)."""
    page = browser.new_context(viewport={"width": viewport[0], "height": viewport[1]}).new_page()
    if shading is not None:
        def shaded(route):
            response = route.fetch()
            data = response.json()
            if data.get("task"):
                data["task"]["highlight"] = True
            route.fulfill(response=response, body=json.dumps(data))
        page.route("**/api/task", shaded)
        page.route("**/api/decide", shaded)
        page.route("**/api/highlight/*", lambda route: route.fulfill(json={"segments": shading}))
    page.goto(server.link)
    page.fill("#name", name)
    page.press("#name", "Enter")
    page.wait_for_selector("#chunk[data-task-id]")
    return page


def shown(page) -> tuple[str, str]:
    return page.inner_text("#query-id"), page.inner_text("#chunk-id")


def press(page, key: str) -> None:
    """A key press, returning once the page has shown what the server answered."""
    before = page.evaluate("window.semrelReview.roundTrips.length")
    page.keyboard.press(key)
    page.wait_for_function("n => window.semrelReview.roundTrips.length > n", arg=before)


def decisions(db: str) -> list[tuple]:
    return query(db, "SELECT d.reviewer, d.kind, d.grade, t.query_id, t.chunk_id FROM decisions d"
                     " JOIN tasks t ON t.id = d.task_id ORDER BY d.id")


def test_grade_undo_skip_quit_restart_and_resume(browser, tmp_path):
    pool, db = write_pool(tmp_path / "pool"), str(tmp_path / "reviews.sqlite")
    with Server(db, pool) as server:  # highlights on: the screenshot shows them
        page = open_review(browser, server, "alice")
        page.wait_for_selector("#chunk mark", timeout=120_000)
        assert page.inner_text("#progress") == "0/12 graded (0%) · yours 0 · 0 skipped · flagged 0"
        assert "proposed grade" in page.inner_text("#judge")
        page.screenshot(path=str(tmp_path / "review-web.png"), full_page=True)
        first = shown(page)
        press(page, "1")
        second = shown(page)
        press(page, "n")
        press(page, "u")  # the grade on `second` is taken back: it is shown again
        assert shown(page) == second and "undid your decision" in page.inner_text("#message")
        press(page, "s")
        third = shown(page)
        page.keyboard.press("f")
        page.wait_for_selector("#message:text-is('flagged')")
        page.keyboard.press("m")
        page.keyboard.type("check <b>units</b>")
        page.keyboard.press("Enter")
        page.wait_for_selector("#message:text-is('note saved')")
        assert shown(page) == third
        press(page, "y")
        fourth = shown(page)
        page.keyboard.press("q")
        page.wait_for_selector("#name")
    made = [("alice", "grade", 1) + first, ("alice", "grade", 0) + second, ("alice", "undo", None) + second,
            ("alice", "skip", None) + second, ("alice", "flag", None) + third, ("alice", "note", None) + third,
            ("alice", "grade", 1) + third]
    assert decisions(db) == made
    assert query(db, "SELECT note FROM decisions WHERE kind = 'note'") == [("check <b>units</b>",)]
    keep_screenshot(tmp_path / "review-web.png", "review-web.png")

    with Server(db, None, "--no-highlight") as server:  # restarted; the files are not needed to resume
        page = open_review(browser, server, "alice")
        assert shown(page) == fourth  # held by alice before she quit
        # a skip is no grade: counted apart, as `review stats` counts (it said "3/12 reviewed (25%)")
        assert page.inner_text("#progress") == "2/12 graded (17%) · yours 2 · 1 skipped · flagged 1"
        page.goto(server.base + "/recent")
        rows = page.locator("table.recent tbody tr")
        assert rows.count() == 3 and rows.nth(0).locator("td.grade").inner_text() == "1"
        rows.nth(0).locator("button[value='0']").click()  # change the latest grade
        page.wait_for_load_state()
        assert page.locator("table.recent tbody tr").nth(0).locator("td.grade").inner_text() == "0"
        # the page reloads; it used to leave focus on its body with nothing saying what had changed
        assert page.inner_text("#changed") == f"Changed {third[0]} / {third[1]} to 0."
        assert page.evaluate("document.activeElement.id") == "changed" and page.get_attribute("#changed", "role") == "status"
        assert page.locator("tr.changed").count() == 1 and page.locator("tr.changed td.grade").inner_text() == "0"
        page.goto(server.base + "/recent")  # visited again: nothing is said
        assert page.locator("#changed").count() == 0 and page.locator("tr.changed").count() == 0
    assert decisions(db) == made + [("alice", "undo", None) + third, ("alice", "grade", 0) + third]
    assert query(db, "SELECT count(*) FROM live WHERE reviewer = 'alice'") == [(3,)]


def test_the_progress_line_counts_graded_pairs_as_review_stats_does_and_skips_apart(browser, tmp_path):
    """A grade and a skip read "2/12 reviewed (17%)" where the stats page said 1 of 12 pairs has a human grade."""
    pool, db = write_pool(tmp_path / "pool"), str(tmp_path / "reviews.sqlite")
    with Server(db, pool, "--no-highlight") as server:
        page = open_review(browser, server, "alice")
        press(page, "1")
        with page.expect_response("**/api/decide") as answer:
            press(page, "s")
        assert answer.value.json()["progress"] == {"total": 12, "done": 2, "mine": 1, "flagged": 0, "graded": 1, "skipped": 1}
        assert page.inner_text("#progress") == "1/12 graded (8%) · yours 1 · 1 skipped · flagged 0"
        page.goto(server.base + "/stats")
        assert page.inner_text("#reviewed") == "1 of 12 pairs have a human grade"


@pytest.mark.slow
def test_a_decision_the_stopped_server_never_answered_is_said_maybe_unsaved_and_the_restart_resumes(browser, tmp_path):
    """fetch() failing showed its own words, 'Failed to fetch': nothing said whether the grade was kept or what to do."""
    pool, db = write_pool(tmp_path / "pool"), str(tmp_path / "reviews.sqlite")
    with Server(db, pool, "--no-highlight") as server:
        page = open_review(browser, server, "alice")
        first, port = shown(page), server.base.rsplit(":", 1)[1]
    page.keyboard.press("1")
    page.wait_for_selector("#message:has-text('may not be saved')", timeout=10_000)
    assert "reload the page" in page.inner_text("#message") and shown(page) == first
    assert page.inner_text("#message").startswith("error: ") and "error" in page.get_attribute("#message", "class")
    with Server(db, None, "--no-highlight", "--port", port):  # the same address: the page reconnects on reload
        page.reload()
        page.fill("#name", "alice")
        page.press("#name", "Enter")
        page.wait_for_selector("#chunk[data-task-id]")
        assert shown(page) == first  # not saved: the pair she held is shown again
    assert query(db, "SELECT count(*) FROM decisions") == [(0,)]


def test_a_grade_pressed_after_a_restart_signs_in_again_and_is_stored_once(browser, tmp_path):
    """Sessions live in the server's memory: a grade pressed after a restart, the page not reloaded, was refused ("this
    page is out of date ...: reload it"), to be pressed again after signing in."""
    pool, db = write_pool(tmp_path / "pool"), str(tmp_path / "reviews.sqlite")
    with Server(db, pool, "--no-highlight") as server:
        page = open_review(browser, server, "alice")
        first, port = shown(page), server.base.rsplit(":", 1)[1]
        press(page, "1")
        second = shown(page)
    with Server(db, None, "--no-highlight", "--port", port):  # stopped and started again: every session is gone
        with page.expect_request("**/api/session"):  # it went the way of a restart, not past it
            press(page, "0")
        assert page.inner_text("#message") == "" and shown(page) not in (first, second)
        assert page.inner_text("#progress") == "2/12 graded (17%) · yours 2 · 0 skipped · flagged 0"
        page.keyboard.press("q")  # the sign-out form carries the new session's token too
        page.wait_for_selector("#name")
    assert decisions(db) == [("alice", "grade", 1) + first, ("alice", "grade", 0) + second]


@pytest.mark.slow
def test_a_page_signed_out_in_another_tab_is_not_signed_in_again_and_says_nothing_was_saved(browser, tmp_path):
    """Signing in again is for a restart only: a sign-out (or another name signed in) in another tab of the browser on the
    same server stays, and the grade pressed in the stale tab is said not saved, with what to do."""
    pool, db = write_pool(tmp_path / "pool"), str(tmp_path / "reviews.sqlite")
    with Server(db, pool, "--no-highlight") as server:
        page = open_review(browser, server, "alice")
        other = page.context.new_page()
        other.goto(server.base + "/")
        other.keyboard.press("q")
        other.wait_for_selector("#name")
        page.keyboard.press("1")
        page.wait_for_selector("#message.error")
        assert page.inner_text("#message") == ("error: this grade was not saved (every decision before it was): this page is "
                                               "out of date (the review server restarted, or someone signed in again in this "
                                               "browser): reload it")
        other.reload()
        assert other.locator("#name").count() == 1  # still signed out
    assert decisions(db) == []


def test_after_a_restart_a_page_does_not_sign_in_again_where_its_browser_signed_out_or_in_as_another_name(browser, tmp_path):
    """A restart forgets sessions, sign-outs with them: alice's page, left open while bob signed in in another tab, signed
    in again as alice at its next key after a restart, and bob's grade was stored under her name."""
    pool, db = write_pool(tmp_path / "pool"), str(tmp_path / "reviews.sqlite")
    not_saved = ("error: this grade was not saved (every decision before it was): this page is out of date (the review server "
                 "restarted, or someone signed in again in this browser): reload it")
    answered = "() => document.getElementById('message').textContent !== '' || window.semrelReview.roundTrips.length > 0"
    with Server(db, pool, "--no-highlight") as server:
        page = open_review(browser, server, "alice")
        port = server.base.rsplit(":", 1)[1]
        other = page.context.new_page()
        other.goto(server.base + "/")
        other.keyboard.press("q")
        other.fill("#name", "bob")
        other.press("#name", "Enter")
        other.wait_for_selector("#chunk[data-task-id]")
    with Server(db, None, "--no-highlight", "--port", port) as server:
        page.keyboard.press("1")
        page.wait_for_function(answered)
        assert page.inner_text("#message") == not_saved
        other.reload()  # bob's session is gone too; alice signs in here again, and out (the q key), on the new server
        other.fill("#name", "alice")
        other.press("#name", "Enter")
        other.wait_for_selector("#chunk[data-task-id]")
        other.keyboard.press("q")
        other.wait_for_selector("#name")
        page.evaluate("document.getElementById('message').textContent = ''")
        page.keyboard.press("0")
        page.wait_for_function(answered)
        assert page.inner_text("#message") == not_saved
        other.reload()
        assert other.locator("#name").count() == 1  # still signed out
    assert decisions(db) == []


def test_after_a_restart_with_another_database_a_page_left_open_undoes_nothing_there(browser, tmp_path):
    """An undo names no pair to check: a page of one database, another served since at its address, signed in there and
    took back its reviewer's last decision in that one (a default port serves one review after another)."""
    pool = write_pool(tmp_path / "pool")
    first, second = str(tmp_path / "first.sqlite"), str(tmp_path / "second.sqlite")
    with Server(first, pool, "--no-highlight") as server:
        page = open_review(browser, server, "alice")
        port = server.base.rsplit(":", 1)[1]
    with Server(second, pool, "--no-highlight", "--port", port) as server:
        alice = Client(server.base)  # alice reviewed the second database too, in another browser
        alice.sign_in("alice")
        assert alice.api({"action": "grade", "task_id": alice.task()["task"]["id"], "grade": 1})[0] == 200
        page.keyboard.press("u")
        page.wait_for_function("() => document.getElementById('message').textContent !== ''")
        assert page.inner_text("#message") == (
            "error: this undo was not saved (every decision before it was): this page is out of date (the review server "
            "restarted, or someone signed in again in this browser): reload it")
    assert decisions(second) == [("alice", "grade", 1, "q1", "c1")] and decisions(first) == []


@pytest.mark.slow
def test_after_a_restart_a_page_opened_with_the_token_link_says_to_open_it_again_and_that_nothing_was_saved(browser, tmp_path):
    """With --token the page holds no secret to sign in again with: the grade is refused, said not saved, with what to do."""
    pool, db = write_pool(tmp_path / "pool"), str(tmp_path / "reviews.sqlite")
    token = {"SEMREL_REVIEW_SERVE_TOKEN": "s3cret-token"}
    with Server(db, pool, "--no-highlight", env=token) as server:
        page = open_review(browser, server, "alice")
        first, port = shown(page), server.base.rsplit(":", 1)[1]
    with Server(db, None, "--no-highlight", "--port", port, env=token) as server:
        page.keyboard.press("1")
        page.wait_for_selector("#message.error")
        assert page.inner_text("#message") == (
            "error: this grade was not saved (every decision before it was): this review needs the link with its access token: "
            "open the link you were given again (the review server signs everyone out when it restarts), or ask whoever started it "
            "for the link")
        page.goto(server.link)
        page.fill("#name", "alice")
        page.press("#name", "Enter")
        page.wait_for_selector("#chunk[data-task-id]")
        assert shown(page) == first  # held for her: graded now, once
        press(page, "1")
    assert decisions(db) == [("alice", "grade", 1) + first]


@pytest.mark.slow
def test_a_note_the_stopped_server_never_saved_is_kept_to_send_again_after_the_restart(browser, tmp_path):
    """The note field was hidden at Enter and emptied when opened again: a note sent while the server was down (or
    refused) was gone, to be typed again from memory after the reload."""
    pool, db = write_pool(tmp_path / "pool"), str(tmp_path / "reviews.sqlite")
    with Server(db, pool, "--no-highlight") as server:
        page = open_review(browser, server, "alice")
        first, port = shown(page), server.base.rsplit(":", 1)[1]
        page.keyboard.press("m")
        page.keyboard.type("the tyre is <b>tubeless</b>")
    page.keyboard.press("Enter")
    page.wait_for_selector("#message:has-text('may not be saved')", timeout=10_000)
    assert page.is_visible("#note-text") and page.input_value("#note-text") == "the tyre is <b>tubeless</b>"
    with Server(db, None, "--no-highlight", "--port", port):
        page.reload()  # sessions do not outlive the server: sign in again
        page.fill("#name", "alice")
        page.press("#name", "Enter")
        page.wait_for_selector("#chunk[data-task-id]")
        assert shown(page) == first and page.input_value("#note-text") == "the tyre is <b>tubeless</b>"
        page.keyboard.press("Enter")
        page.wait_for_selector("#message:text-is('note saved')")
        page.keyboard.press("m")  # saved: not offered again
        assert page.input_value("#note-text") == ""
    assert [d[:2] + d[3:] for d in decisions(db)] == [("alice", "note") + first]
    assert query(db, "SELECT note FROM decisions") == [("the tyre is <b>tubeless</b>",)]


@pytest.mark.slow
def test_a_right_to_left_answer_has_its_number_inside_its_panel(browser, tmp_path):
    """The list kept room for numbers at its left only: an Arabic or Hebrew answer, numbered at its right, had its
    number over the panel's border."""
    answer = "مرحبا بالعالم، هذا نص عربي يشرح كيفية إصلاح الإطار المثقوب."
    pool = write_judged(tmp_path / "pool", {"c1": "short", "c2": "short"}, {"q1": (answer, answer)}, {("q1", "c1"): 0.6, ("q1", "c2"): 0.6})
    with Server(str(tmp_path / "r.sqlite"), pool, "--no-highlight") as server:
        page = open_review(browser, server, "alice")
        assert page.evaluate("getComputedStyle(document.querySelector('#answers li')).direction") == "rtl"
        item, panel = page.locator("#answers li").bounding_box(), page.locator("#answers").locator("..").bounding_box()
        assert panel["x"] + panel["width"] - (item["x"] + item["width"]) >= 40  # the number's room, within the panel


@pytest.mark.slow
def test_on_a_phone_long_ids_and_words_wrap_and_every_button_is_large_enough_to_tap(browser, tmp_path):
    """At 390 px a long id, query word or answer word ran off the side (the review page 1492 px wide, recent decisions
    1428 px, its change buttons out of sight), and the grade buttons were 36 px tall, the header's links 19 px."""
    long_id = "doc_" + "a1b2c3d4" * 10
    asked = {"q_" + "Z" * 90: ("What is " + "supercalifragilistic" * 8 + "?", "answer " + "y" * 150)}
    pool = write_judged(tmp_path / "pool", {long_id: "a long chunk id", "c2": "short"}, asked, {(q, c): 0.6 for q in asked
                                                                                               for c in (long_id, "c2")})
    with Server(str(tmp_path / "r.sqlite"), pool, "--no-highlight") as server:
        page = browser.new_context(viewport={"width": 390, "height": 844}, has_touch=True).new_page()
        page.goto(server.link)
        # the sign-in page had no heading, and its name field was 22 px tall
        assert page.get_by_role("heading", level=1).inner_text() == "Sign in to review"
        assert page.locator("#name").bounding_box()["height"] >= 44
        page.fill("#name", "alice")
        page.press("#name", "Enter")
        page.wait_for_selector("#chunk[data-task-id]")
        width = "document.documentElement.scrollWidth"
        assert page.evaluate(width) == 390
        sizes = page.eval_on_selector_all("button, .bar a", "all => all.map(e => [e.offsetWidth, e.offsetHeight])")
        assert len(sizes) == 12 and min(min(size) for size in sizes) >= 44, sizes  # 3 links, sign out, 8 keys
        press(page, "1")
        press(page, "1")
        page.goto(server.base + "/recent")
        assert page.evaluate(width) == 390
        # each "change to" button names the pair it changes: bare digits, tabbed through, said not which row they were of
        first = page.locator("table.recent tbody tr").nth(0).locator("button").all()
        assert [b.get_attribute("aria-label").split(" to ")[1] for b in first] == ["0", "1", "skip"]
        assert first[0].get_attribute("aria-label").startswith("change q") and " / " in first[0].get_attribute("aria-label")
        page.goto(server.base + "/stats")
        assert page.evaluate(width) == 390
        # each row of figures is named by its reviewer where a screen reader reads a cell (it was a plain cell)
        assert page.get_by_role("rowheader").all_inner_texts() == ["alice", "0", "1"]  # and alice vs judge's confusion rows


@pytest.mark.slow
def test_on_a_phone_the_grade_keys_are_in_sight_under_a_long_answer_and_cover_no_text_once_scrolled_to(browser, tmp_path):
    """At 390 x 844 a long reference answer put the grade keys below the fold: each pair needed a scroll to grade."""
    answer = "Remove the wheel, take out the tube, find the hole by pumping it up and listening, then patch it. " * 5
    # the answer scrolls in its own box past 20% of the screen: a long chunk runs the texts past the fold
    chunk = "Lift the tyre off the rim with two levers, then pull the tube out and look for the hole. " * 8
    pool = write_judged(tmp_path / "pool", {"c1": chunk, "c2": "short"}, {"q1": ("How do I repair a puncture?", answer)},
                        {("q1", "c1"): 0.6, ("q1", "c2"): 0.6})
    with Server(str(tmp_path / "r.sqlite"), pool, "--no-highlight") as server:
        page = browser.new_context(viewport={"width": 390, "height": 844}, has_touch=True).new_page()
        page.goto(server.link)
        page.fill("#name", "alice")
        page.press("#name", "Enter")
        page.wait_for_selector("#chunk[data-task-id]")
        keys, judge = page.locator("#keys").bounding_box(), page.locator("#judge").bounding_box()
        assert judge["y"] + judge["height"] > 844 and keys["y"] + keys["height"] <= 844  # the texts run past the fold; the keys do not
        assert page.evaluate("(() => { const b = document.querySelector(\"#keys button[data-key='1']\").getBoundingClientRect();"
                             " return document.elementFromPoint(b.x + b.width / 2, b.y + b.height / 2).dataset.key; })()") == "1"
        # a focused element is scrolled clear of them, and scrolled to its end the page shows every text above them
        assert float(page.evaluate("getComputedStyle(document.documentElement).scrollPaddingBottom")[:-2]) >= keys["height"]
        page.evaluate("window.scrollTo(0, document.body.scrollHeight)")
        keys, judge, chunk = (page.locator(s).bounding_box() for s in ("#keys", "#judge", "#chunk"))
        assert keys["y"] >= judge["y"] + judge["height"] and keys["y"] >= chunk["y"] + chunk["height"]
        assert page.evaluate("document.documentElement.scrollWidth") == 390
        page.keyboard.press(json.loads(page.get_attribute("#review", "data-config"))["notes"][0])  # the note field, typed in
        page.keyboard.type("tube")
        note, dock = page.locator("#note-text").bounding_box(), page.locator(".dock").bounding_box()
        assert note["y"] >= 0 and note["y"] + note["height"] <= 844  # in sight
        assert note["x"] + note["width"] <= dock["x"] + dock["width"]  # within the dock's width: its padding stuck out 8 px
        page.keyboard.press("Escape")
        page.tap("#keys button[data-key='1']")
        page.wait_for_function("n => window.semrelReview.roundTrips.length > n", arg=0)


KEYS_IN_SIGHT = """([width, height]) => [...document.querySelectorAll("#keys button")].every((button) => {
  const b = button.getBoundingClientRect();
  return b.top >= 0 && b.left >= 0 && b.bottom <= height && b.right <= width
    && document.elementFromPoint(b.x + b.width / 2, b.y + b.height / 2) === button;
})"""
MESSAGE_IN_SIGHT = """([width, height]) => { const m = document.getElementById("message").getBoundingClientRect();
  return m.height > 0 && m.top >= 0 && m.bottom <= height
    && document.elementFromPoint(m.x + 2, m.y + m.height / 2) === document.getElementById("message"); }"""


def test_on_a_phone_a_message_naming_a_long_id_scrolls_in_its_box_and_the_keys_stay_in_sight(browser, tmp_path):
    """Ids have no length limit, and messages name them ("undid your decision on ..."): grown whole, a message of 3,000
    characters made the dock 2,100 px tall, its keys above the top of the screen."""
    query_id = "q" + "x" * 3000
    pool = write_judged(tmp_path / "pool", {"c1": "A short chunk.", "c2": "Another."}, {query_id: ("Why?", "Because.")},
                        {(query_id, "c1"): 0.6, (query_id, "c2"): 0.6})
    with Server(str(tmp_path / "r.sqlite"), pool, "--no-highlight") as server:
        page = open_review(browser, server, "alice", viewport=(390, 844))
        press(page, "1")
        press(page, "u")
        assert page.inner_text("#message") == f"undid your decision on {query_id}/c1"
        assert page.evaluate(KEYS_IN_SIGHT, [390, 844])
        assert page.evaluate("(() => { const m = document.getElementById('message'); return m.scrollHeight > m.clientHeight"
                             " && m.getBoundingClientRect().bottom <= 844; })()")  # the rest of it a scroll away


@pytest.mark.parametrize("viewport", [(1280, 800), (1280, 600), (390, 844)], ids=["laptop", "short laptop", "phone"])
def test_a_long_query_and_answer_scroll_in_their_own_boxes_and_the_grade_keys_stay_in_sight(browser, tmp_path, viewport):
    """A 3,000-word query and answer were shown whole: at 1280 x 800 the grade keys were 16,000 px down the page (a long
    chunk under short texts put them past the fold too); on a phone the chunk was 58,000 px down. Capped at a fifth of the
    screen each, they still left the chunk under the keys at 1280 x 600 and on the phone."""
    asked = " ".join(f"query{i}" for i in range(3000)), " ".join(f"answer{i}" for i in range(3000))
    chunks = {"c1": "A short chunk about tubes.", "c2": " ".join(f"chunk{i}" for i in range(3000))}
    pool = write_judged(tmp_path / "pool", chunks, {"q1": asked}, {("q1", c): 0.6 for c in chunks})
    with Server(str(tmp_path / "r.sqlite"), pool, "--no-highlight") as server:
        page = open_review(browser, server, "alice", viewport=viewport)
        for _ in chunks:  # the short chunk and the long one, in the queue's order: the keys in sight under both
            assert page.evaluate(KEYS_IN_SIGHT, list(viewport))
            chunk, dock = page.locator("#chunk").bounding_box(), page.locator(".dock").bounding_box()
            assert dock["y"] - chunk["y"] >= 72  # three lines of the chunk on the first screen, above the keys
            assert page.evaluate("document.documentElement.scrollWidth") == viewport[0]
            # every word is there, in a box of its own that scrolls, by keyboard too: Tab from the pair reaches it, End
            # scrolls it to its last line, and the grade keys still grade from there
            page.focus("#pair")
            for box, text in zip(("query", "answers"), asked):
                assert page.text_content(f"#{box}") == text
                page.keyboard.press("Tab")
                assert page.evaluate("document.activeElement.id") == box
                page.keyboard.press("End")
                page.wait_for_function("id => { const e = document.getElementById(id);"
                                       " return e.scrollTop > 0 && e.scrollTop + e.clientHeight >= e.scrollHeight - 1; }", arg=box)
            # what the page says ("flagged", an error) is in sight too: under the keys it was below a laptop's fold
            page.keyboard.press("f")
            page.wait_for_selector("#message:text-is('flagged')")
            assert page.evaluate(MESSAGE_IN_SIGHT, list(viewport))
            press(page, "1")
        assert page.inner_text("#progress").startswith("2/2 graded")
        # the queue's end: its panel, and no rule left where the keys were docked
        assert page.is_visible("#done") and page.evaluate("getComputedStyle(document.querySelector('.dock')).borderTopStyle") == "none"
    assert [d[:4] for d in decisions(str(tmp_path / "r.sqlite"))] == [("alice", "flag", None, "q1"), ("alice", "grade", 1, "q1")] * 2


TEXT_COLOURS = """() => [...document.querySelectorAll("main *")].filter((e) => e.offsetParent !== null
    && [...e.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim())).map((e) => {
  let back = e;
  while (getComputedStyle(back).backgroundColor === "rgba(0, 0, 0, 0)") back = back.parentElement;
  return [e.id || e.className || e.tagName, getComputedStyle(e).color, getComputedStyle(back).backgroundColor];
})"""


def contrast(fore: str, back: str) -> float:
    """WCAG's contrast ratio of two opaque CSS rgb() colours."""
    def luminance(colour: str) -> float:
        channels = [int(c) / 255 for c in re.findall(r"\d+", colour)[:3]]
        r, g, b = (c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels)
        return 0.2126 * r + 0.7152 * g + 0.0722 * b
    low, high = sorted([luminance(fore), luminance(back)])
    return (high + 0.05) / (low + 0.05)


@pytest.mark.slow
def test_every_text_of_the_review_page_has_aa_contrast(browser, tmp_path):
    """The ids beside the headings were #777 on white: 4.48:1, under WCAG AA's 4.5:1 for text."""
    pool, db = write_pool(tmp_path / "pool"), str(tmp_path / "reviews.sqlite")
    with Server(db, pool, "--no-highlight") as server:
        page = open_review(browser, server, "alice")
        press(page, "1")  # the round trip's line shown too
        texts = page.evaluate(TEXT_COLOURS)
    assert {"query-id", "chunk-id", "judge", "progress", "rtt"} <= {name for name, _, _ in texts}
    assert [(name, round(contrast(fore, back), 2)) for name, fore, back in texts if contrast(fore, back) < 4.5] == []


@pytest.mark.slow
def test_the_shading_is_summed_up_for_a_screen_reader_and_the_closest_matches_are_underlined(browser, tmp_path):
    """The shading said nothing to a screen reader, and its lightest shades are 1.1:1 on white: colour alone told
    which words match the answer (WCAG 1.4.1)."""
    segments = [["To ", 0], ["fix", 0.2], [" a ", 0], ["flat", 0.5], [" ", 0], ["ty", 0.3], ["re", 0.9], [", remove the ", 0],
                ["wheel", 0.7], [" and the ", 0], ["wheel", 1.0], [".", 0]]
    pool, db = write_pool(tmp_path / "pool"), str(tmp_path / "reviews.sqlite")
    with Server(db, pool, "--no-highlight") as server:
        page = open_review(browser, server, "alice", shading=segments)
        page.wait_for_selector("#chunk mark")
        assert page.inner_text("#chunk") == "To fix a flat tyre, remove the wheel and the wheel."
        assert page.text_content("#shading") == ("shading: 5 passages of the chunk match the reference answer; "
                                                 "the closest, underlined: tyre, wheel")
        # read once before the chunk, then the chunk as plain text: no "highlighted" at each word
        assert page.locator("#shading").evaluate("e => e.nextElementSibling.id") == "chunk"
        assert page.locator("#chunk").aria_snapshot() == "- text: To fix a flat tyre, remove the wheel and the wheel."
        lines = page.eval_on_selector_all("#chunk mark", "all => all.map(e => [e.className, getComputedStyle(e).textDecorationLine,"
                                          " getComputedStyle(e).textDecorationColor, getComputedStyle(e).backgroundColor])")
        assert [(name, line) for name, line, _, _ in lines] == [("s1", "none"), ("s3", "none"), ("s2", "none"), ("s5", "underline"),
                                                               ("s4", "underline"), ("s5", "underline")]
        assert min(min(contrast(colour, back), contrast(colour, "rgb(255, 255, 255)"))
                   for _, line, colour, back in lines if line == "underline") >= 3  # WCAG 1.4.11 for what carries meaning
        assert [name for name, fore, back in page.evaluate(TEXT_COLOURS) if contrast(fore, back) < 4.5] == []


def hostile_pool(folder: Path) -> dict:
    """The small pool with markup and script in a chunk, a query and an answer."""
    pool = write_pool(folder)
    script = '<script>alert(1)</script> and <img src=x onerror="alert(2)"> end'
    corpus = [json.loads(line) for line in Path(pool["corpus"]).read_text().splitlines()]
    corpus[0]["text"] = script
    Path(pool["corpus"]).write_text("".join(json.dumps(c) + "\n" for c in corpus))
    golden = [json.loads(line) for line in Path(pool["golden"]).read_text().splitlines()]
    for item in golden:
        item["query"], item["reference_answer"] = "<b onmouseover=alert(3)>bold?</b>", "<svg onload=alert(4)>"
    Path(pool["golden"]).write_text("".join(json.dumps(g) + "\n" for g in golden))
    return pool


def test_markup_in_the_data_is_shown_as_text_and_runs_nothing(browser, tmp_path):
    pool, db = hostile_pool(tmp_path / "pool"), str(tmp_path / "reviews.sqlite")
    with Server(db, pool, "--no-highlight", "--order", "query") as server:  # q1/c1 (the script chunk) first
        page = open_review(browser, server, "alice")
        dialogs, errors = [], []
        page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
        page.on("console", lambda message: message.type == "error" and errors.append(message.text))
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.reload()
        page.wait_for_selector("#chunk[data-task-id]")
        assert shown(page) == ("q1", "c1")
        assert page.inner_text("#chunk") == '<script>alert(1)</script> and <img src=x onerror="alert(2)"> end'
        assert page.inner_text("#query") == "<b onmouseover=alert(3)>bold?</b>"
        assert page.inner_text("#answers") == "<svg onload=alert(4)>"
        assert page.locator("main img, main script, main svg, main b").count() == 0
        page.hover("#query")
        press(page, "0")
        page.goto(server.base + "/recent")  # the same texts in a server-rendered page
        assert "<script>alert(1)</script>" in page.inner_text("table.recent")
        assert page.locator("main img, main script, main svg, main b").count() == 0
    assert dialogs == [] and errors == []


@pytest.mark.slow
def test_enter_or_space_after_clicking_a_grade_button_grades_nothing(browser, tmp_path):
    """A clicked button kept the focus, so Enter or Space (to scroll a long chunk) clicked it
    again: the next pair, just shown, was graded unseen."""
    pool, db = write_pool(tmp_path / "pool"), str(tmp_path / "reviews.sqlite")
    with Server(db, pool, "--no-highlight") as server:
        page = open_review(browser, server, "alice")
        trips = page.evaluate("window.semrelReview.roundTrips.length")
        page.click("#keys button[data-key='1']")
        page.wait_for_function("n => window.semrelReview.roundTrips.length > n", arg=trips)
        second = shown(page)
        page.keyboard.press(" ")
        page.keyboard.press("Enter")
        page.wait_for_timeout(500)
        assert shown(page) == second and page.inner_text("#progress").startswith("1/12 graded")
    assert query(db, "SELECT count(*) FROM decisions") == [(1,)]


@pytest.mark.slow
def test_after_a_grade_button_pressed_with_enter_the_focus_is_on_the_next_pair_and_tab_reaches_the_buttons(browser, tmp_path):
    """Keyboard only (Tab to a button, Enter): the button let go of the focus and it fell to the page's body, so a
    screen reader announced nothing of the next pair and the next Tab began again at the header's links."""
    pool, db = write_pool(tmp_path / "pool"), str(tmp_path / "reviews.sqlite")
    with Server(db, pool, "--no-highlight") as server:
        page = open_review(browser, server, "alice")
        page.focus("#keys button[data-key='0']")
        page.keyboard.press("Tab")  # to the button "1"
        press(page, "Enter")
        assert page.evaluate("document.activeElement.id") == "pair"
        assert page.locator("#pair").get_attribute("aria-labelledby") == "query-heading"
        # what a screen reader names: the grades by their meaning (not bare digits), the note field, the page's heading
        names = [button.get_attribute("aria-label") for button in page.locator("#keys button[aria-label]").all()]
        assert names == ["0: not relevant", "1: relevant", "y: relevant", "n: not relevant"]  # binary labels here
        assert page.get_attribute("#note-text", "aria-label") == "note on this pair"
        assert page.get_by_role("heading", level=1).inner_text() == "Review a pair"
        page.keyboard.press("Tab")
        assert page.evaluate("document.activeElement.dataset.key") == "0"  # the short chunk holds no focus stop of its own
        press(page, "Enter")
    assert [d[:3] for d in decisions(db)] == [("alice", "grade", 1), ("alice", "grade", 0)]


@pytest.mark.slow
def test_a_double_tap_on_a_grade_button_grades_one_pair(browser, tmp_path):
    """A round trip takes less than a double tap: its second tap graded the pair just shown, unseen."""
    pool, db = write_pool(tmp_path / "pool"), str(tmp_path / "reviews.sqlite")
    with Server(db, pool, "--no-highlight") as server:
        page = browser.new_context(viewport={"width": 390, "height": 844}, has_touch=True).new_page()
        page.goto(server.link)
        page.fill("#name", "alice")
        page.press("#name", "Enter")
        page.wait_for_selector("#chunk[data-task-id]")
        page.tap("#keys button[data-key='1']")
        page.wait_for_function("n => window.semrelReview.roundTrips.length > n", arg=0)
        second = shown(page)
        page.tap("#keys button[data-key='1']")  # the second tap: the browser counts it (click.detail 2)
        page.wait_for_timeout(500)
        assert shown(page) == second
    assert query(db, "SELECT count(*) FROM decisions") == [(1,)]


@pytest.mark.slow
def test_a_key_held_down_grades_one_pair_not_each_one_shown_while_it_repeats(browser, tmp_path):
    """A key held down repeats every 30 ms or so, and a round trip takes less: each repeat graded the
    pair just shown, unseen (the terminal drops keys typed before a pair is shown; the page did not)."""
    pool, db = write_pool(tmp_path / "pool"), str(tmp_path / "reviews.sqlite")
    with Server(db, pool, "--no-highlight") as server:
        page = open_review(browser, server, "alice")
        trips = page.evaluate("window.semrelReview.roundTrips.length")
        page.keyboard.down("1")
        page.wait_for_function("n => window.semrelReview.roundTrips.length > n", arg=trips)
        second = shown(page)
        for _ in range(3):
            page.keyboard.down("1")  # the key still down: Playwright sends it as the browser does, with repeat set
            page.wait_for_timeout(150)
        page.keyboard.up("1")
        assert shown(page) == second
    assert query(db, "SELECT count(*) FROM decisions") == [(1,)]


def test_keyboard_review_of_50_items_round_trips(browser, tmp_path, capsys):
    pool = write_large_pool(tmp_path / "pool", queries=10, chunks=6)
    db = str(tmp_path / "reviews.sqlite")
    with Server(db, pool, "--no-highlight") as server:
        page = open_review(browser, server, "alice")
        keys = "10yn" * 13
        for key in keys[:50]:
            press(page, key)
        trips = page.evaluate("window.semrelReview.roundTrips")
    assert len(trips) == 50
    assert query(db, "SELECT count(*), sum(grade) FROM live WHERE reviewer = 'alice'") == [(50, 25)]
    median, p90 = statistics.median(trips), statistics.quantiles(trips, n=10)[-1]
    with capsys.disabled():
        print(f"\nkey press to next item shown, 50 decisions: median {median:.1f} ms, p90 {p90:.1f} ms")


@pytest.mark.slow
def test_a_reviewers_link_signs_in_with_one_key_and_leaves_no_secret_in_the_address_bar(browser, tmp_path):
    pool, db = write_pool(tmp_path / "pool"), str(tmp_path / "r.sqlite")
    with Server(db, pool, "--no-highlight", env={"SEMREL_REVIEW_SERVE_REVIEWERS": "alice,bob"}) as server:
        link = dict(re.findall(r"semrel: (.+)'s link: (http://\S+)", "".join(server.lines)))["alice"]
        page = browser.new_context().new_page()
        page.goto(link)
        assert page.url == server.base + "/" and page.locator("#name").count() == 0  # no name to type: the link's
        page.keyboard.press("Enter")  # the focused button
        page.wait_for_selector("#chunk[data-task-id]")
        assert page.inner_text(".who") == "alice"
        press(page, "1")
    assert [d[:3] for d in decisions(db)] == [("alice", "grade", 1)]
