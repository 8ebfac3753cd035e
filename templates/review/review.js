// The review page: one key per decision. A decision is POSTed with fetch() and the answer is
// the next task as JSON, put into the page as text nodes (never as HTML), so nothing in the
// data can run. Shading of matched tokens is fetched after the texts are shown.
"use strict";

(() => {
  const changed = document.getElementById("changed");  // recent decisions after a change: say which, where focus lands
  if (changed) changed.focus();
  // who was signed in last in this browser, for every tab (reopen): a restart forgets sessions, so a sign-out or another
  // name signed in since this page was shown would otherwise be undone by the page signing in again under its own name
  const SIGNED_IN = "semrel-review-signed-in";
  const remember = (name) => { try { localStorage.setItem(SIGNED_IN, name); } catch { /* no storage: reopen declines */ } };
  const logout = document.getElementById("logout");
  if (logout) logout.addEventListener("submit", () => remember(""));
  const root = document.getElementById("review");
  if (!root) return;
  const config = JSON.parse(root.dataset.config);
  remember(config.reviewer);  // the page is rendered for the session's reviewer: the name last signed in here
  let csrf = document.querySelector('meta[name="csrf-token"]').content;
  const $ = (id) => document.getElementById(id);
  const roundTrips = [];
  window.semrelReview = { roundTrips };
  let current = null;
  let shownAt = performance.now();
  let busy = false;

  async function call(method, url, body) {
    let response;
    try {
      response = await fetch(url, {
        method,
        headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf },
        body: body === undefined ? undefined : JSON.stringify(body),
        credentials: "same-origin",
      });
    } catch {  // no answer at all ("Failed to fetch"): whether a decision sent reached the database is unknown
      throw new Error(`the server did not answer (stopped, or the network is down)${method === "POST"
        ? ": this decision may not be saved. Once the server is back, reload the page: it shows the pair you hold"
          + " (sign in again if it restarted), and recent decisions lists what was saved" : "; reload the page once it is back"}`);
    }
    if (response.status === 401) { window.location.assign("/"); throw new Error("signed out"); }
    const data = await response.json().catch(() => ({ error: `the server answered ${response.status}` }));
    if (!response.ok) {  // its status goes with it: a 403 is a refusal before anything was written (send)
      throw Object.assign(new Error(data.error || `the server answered ${response.status}`), { status: response.status });
    }
    return data;
  }

  // Sessions live in the server's memory: after a restart this page's session is gone, and a decision is refused (403)
  // before anything is written. Where the page opens without a link's secret, it signs in again under its name, as a
  // person would, and the decision is sent again: it carries its pair's ids, which the server checks, so it lands on the
  // pair shown or nowhere. A session ended (a sign-out, another name signed in here) stays ended, before the restart too.
  async function reopen() {
    try {
      let now = await call("GET", "/api/session");
      if (now.boot === config.boot || now.review !== config.review) return false;  // not restarted, or serving another database
      if (now.reviewer !== null && now.reviewer !== config.reviewer) return false;
      if (now.reviewer === null) {  // not signed in again by another tab of this browser yet
        let last = null;
        try { last = localStorage.getItem(SIGNED_IN); } catch { /* no storage: not known who is signed in here, so not signed in */ }
        if (last !== config.reviewer) return false;  // signed out, or in as another name, in this browser since
        const body = new URLSearchParams({ name: config.reviewer });
        const headers = { "X-CSRF-Token": now.csrf };
        await fetch("/login", { method: "POST", headers, body, redirect: "manual", credentials: "same-origin" });
        now = await call("GET", "/api/session");
        if (now.reviewer !== config.reviewer) return false;
      }
      csrf = now.csrf;
      config.boot = now.boot;
      $("logout").elements.csrf_token.value = csrf;
      return true;
    } catch { return false; }
  }

  async function send(body) {
    try {
      return await call("POST", "/api/decide", body);
    } catch (error) {
      if (error.status !== 403) throw error;
      if (await reopen()) return call("POST", "/api/decide", body);
      error.message = `this ${body.action} was not saved (every decision before it was): ${error.message}`;
      throw error;
    }
  }

  function show(message, error = false) {  // an error reads "error: ..." to a screen reader too, not only in another colour
    $("message").textContent = message ? `${error ? "error: " : ""}${message}` : "";
    $("message").classList.toggle("error", Boolean(message) && error);
  }

  function render(state) {
    const p = state.progress;
    // pairs with a human grade, as `semrel review stats` counts them; a skipped pair keeps its derived label, so it is told apart
    const share = p.total ? Math.round((100 * p.graded) / p.total) : 100;
    $("progress").textContent = `${p.graded}/${p.total} graded (${share}%) · yours ${p.mine} · ${p.skipped} skipped`
      + ` · flagged ${p.flagged}`;
    show(state.message);
    current = state.task;
    $("done").hidden = current !== null;
    for (const node of root.querySelectorAll("section, #keys, #judge")) node.hidden = current === null;
    if (current === null) {
      $("done").textContent = `${state.end.charAt(0).toUpperCase()}${state.end.slice(1)}. Thank you.`;
      return;
    }
    $("query-id").textContent = current.query_id;
    $("query").textContent = current.query;
    $("answers").replaceChildren(...current.answers.map((a) => {
      const item = document.createElement("li");
      item.dir = "auto";
      item.textContent = a;
      return item;
    }));
    $("chunk-id").textContent = current.chunk_id;
    $("chunk").textContent = current.chunk;
    $("shading").textContent = "";
    $("chunk").dataset.taskId = String(current.id);
    const j = current.judge;
    $("judge").textContent = j ? j.line : "";
    $("shared").hidden = !current.shared;
    shownAt = performance.now();
    if (current.highlight) shade(current.id);
  }

  async function shade(taskId) {
    try {
      const data = await call("GET", `/api/highlight/${taskId}`);
      if (!current || current.id !== taskId) return;
      $("chunk").replaceChildren(...data.segments.map(([text, strength]) => {
        if (!strength) return document.createTextNode(text);
        const mark = document.createElement("mark");
        mark.className = `s${Math.max(1, Math.ceil(strength * 5))}`;
        mark.setAttribute("role", "none");  // a screen reader would say "highlighted" at each word: the summary before the chunk tells it once
        mark.textContent = text;
        return mark;
      }));
      $("shading").textContent = summary(data.segments);
    } catch (error) { show(`no highlights: ${error.message}`, true); }
  }

  function summary(segments) {  // what the shading shows, in words: how many passages match, and the closest (underlined) ones
    const runs = [];  // adjacent shaded pieces (the tokens of one word) as one passage, at its strongest piece's strength
    let last = -1;
    segments.forEach(([text, strength], i) => {
      if (!strength) return;
      if (last === i - 1 && runs.length) { runs.at(-1).text += text; runs.at(-1).strength = Math.max(runs.at(-1).strength, strength); }
      else runs.push({ text, strength });
      last = i;
    });
    if (!runs.length) return "shading: nothing in the chunk matches the reference answer closely";
    const close = [...new Set(runs.filter((r) => r.strength > 0.6).map((r) => r.text.trim()))];
    const shown = close.slice(0, 10).join(", ") + (close.length > 10 ? ` and ${close.length - 10} more` : "");
    return `shading: ${runs.length} ${runs.length === 1 ? "passage" : "passages"} of the chunk match the reference answer`
      + (close.length ? `; the closest, underlined: ${shown}` : "");
  }

  async function decide(action, extra, pressedAt) {  // true once the server has saved it
    if (busy || (current === null && action !== "undo")) return false;
    busy = true;
    try {
      const body = { action, task_id: current && current.id, pair: current && [current.query_id, current.chunk_id],
        shown: current && current.shown, seconds: (performance.now() - shownAt) / 1000, ...extra };
      render(await send(body));
      // a clicked button let go of the focus (below): it goes to the pair shown, where a screen reader reads it and Tab goes on
      if (document.activeElement === document.body) (current === null ? $("done") : $("pair")).focus();
      if (pressedAt !== undefined) {
        requestAnimationFrame(() => {
          const ms = performance.now() - pressedAt;
          roundTrips.push(ms);
          $("rtt").textContent = `last round trip ${ms.toFixed(0)} ms`;
        });
      }
      return true;
    } catch (error) { show(error.message, true); return false; } finally { busy = false; }
  }

  // a note the server did not save (no answer, busy) is kept in this tab, with its reviewer and pair, until it is: typed
  // once, it is shown again to send, after a reload too, and never on another pair
  const NOTE_KEPT = "semrel-review-note";
  const noteOwner = () => `${document.querySelector(".who").textContent}\n${current && current.id}`;
  function keptNote() {
    const kept = JSON.parse(sessionStorage.getItem(NOTE_KEPT) || "null");
    return kept && current && kept.owner === noteOwner() ? kept.text : null;
  }

  function openNote() {
    $("note").hidden = false;
    $("note-text").value = keptNote() || "";
    $("note-text").focus();
  }

  $("note").addEventListener("submit", async (event) => {
    event.preventDefault();
    const text = $("note-text").value;
    sessionStorage.setItem(NOTE_KEPT, JSON.stringify({ owner: noteOwner(), text }));
    $("note").hidden = true;
    if (await decide("note", { text })) sessionStorage.removeItem(NOTE_KEPT);
    else { $("note").hidden = false; $("note-text").focus(); }  // its text still in the field: Enter sends it again
  });
  $("note-text").addEventListener("keydown", (event) => {
    if (event.key === "Escape") { $("note").hidden = true; sessionStorage.removeItem(NOTE_KEPT); event.stopPropagation(); }
  });

  function press(key, pressedAt) {
    if (Object.hasOwn(config.grades, key)) decide("grade", { grade: config.grades[key] }, pressedAt);
    else if (key === "s") decide("skip", {}, pressedAt);
    else if (key === "u") decide("undo", {}, pressedAt);
    else if (key === "f") decide("flag", {});
    else if (config.notes.includes(key)) openNote();
    else if (key === "q") $("logout").requestSubmit();  // as the button: its submit event says signed out (remember)
    else return false;
    return true;
  }

  document.addEventListener("keydown", (event) => {
    if (event.target.closest("input, textarea") || event.ctrlKey || event.metaKey || event.altKey) return;
    if (event.repeat) return;  // a key held down: its repeats would decide each pair as it is shown, unseen
    if (press(event.key, event.timeStamp)) event.preventDefault();
  });
  for (const button of root.querySelectorAll("#keys button")) {
    button.addEventListener("click", (event) => {
      if (event.detail > 1) return;  // the second tap of a double tap would decide the pair just shown, unseen
      button.blur();  // kept focused, Enter or Space (scrolling) would click it again on the next pair, unseen
      press(button.dataset.key, event.timeStamp);
    });
  }

  call("GET", "/api/task").then((state) => {
    render(state);
    if (keptNote()) openNote();  // a note on this pair not saved before a reload (the server had stopped): shown to send again
  }, (error) => show(error.message, true));
})();
