// The console page: plain HTML, one stylesheet and one script, served as they are (no build
// step). The script builds every element with textContent, never innerHTML, so nothing the
// store holds (arguments, reasons, messages) is read as markup.

/** The page. */
export const CONSOLE_HTML: string = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>hookscope console</title>
<link rel="stylesheet" href="/console.css">
<script src="/console.js" defer></script>
</head>
<body>
<header>
  <h1>hookscope console</h1>
  <form id="auth" autocomplete="off">
    <label for="token">Answer token</label>
    <input id="token" type="password" autocomplete="off">
    <button type="submit">Use token</button>
    <span id="who" role="status"></span>
  </form>
</header>
<main>
  <section aria-labelledby="pending-title">
    <h2 id="pending-title">Waiting for a person</h2>
    <p id="pending-empty">Loading…</p>
    <ul id="pending" class="cards"></ul>
  </section>
  <section aria-labelledby="sessions-title">
    <h2 id="sessions-title">Sessions</h2>
    <ul id="sessions"></ul>
  </section>
  <section aria-labelledby="timeline-title">
    <h2 id="timeline-title">Timeline</h2>
    <p id="timeline-help">Pick a session.</p>
    <p id="timeline-status" class="meta" role="status"></p>
    <section id="undo" aria-labelledby="undo-title" hidden>
      <h3 id="undo-title">Changes that can be undone</h3>
      <ul id="checkpoints" class="cards"></ul>
      <p id="undo-status" role="status"></p>
    </section>
    <ol id="timeline"></ol>
  </section>
</main>
<p id="error" role="alert"></p>
</body>
</html>
`;

/** The stylesheet. */
export const CONSOLE_CSS: string = `
body { font: 15px/1.4 system-ui, sans-serif; margin: 0; color: #1b1b1b; background: #f6f6f4; }
header { display: flex; flex-wrap: wrap; gap: 1rem; align-items: center; padding: .6rem 1rem; background: #20252b; color: #fff; }
header h1 { font-size: 1.1rem; margin: 0; }
header form { display: flex; gap: .4rem; align-items: center; flex-wrap: wrap; }
main { display: grid; grid-template-columns: minmax(18rem, 1fr) minmax(12rem, 16rem) minmax(20rem, 2fr); gap: 1rem; padding: 1rem; }
main > section { min-width: 0; overflow-wrap: anywhere; }
@media (max-width: 60rem) { main { grid-template-columns: 1fr; } }
h2 { font-size: 1rem; margin: 0 0 .5rem; }
ul, ol { list-style: none; margin: 0; padding: 0; }
.cards > li { background: #fff; border: 1px solid #d0d0c8; border-left: 4px solid #c77d00; border-radius: 4px; padding: .6rem; margin-bottom: .8rem; }
.cards > li.answered { border-left-color: #2a7a2a; }
.cards > li.interrupted { border-left-color: #b00020; }
pre { white-space: pre-wrap; word-break: break-word; background: #f0f0ea; padding: .4rem; margin: .3rem 0; font-size: 13px; max-height: 24rem; overflow: auto; }
.meta { color: #555; font-size: 13px; }
.hash { word-break: break-all; }
.actions { display: flex; flex-wrap: wrap; gap: .4rem; align-items: center; margin-top: .4rem; }
.reject-group { display: flex; gap: .4rem; align-items: center; flex: 1 1 14rem; }
.reject-group input { flex: 1 1 4rem; min-width: 0; }
button { font: inherit; padding: .3rem .7rem; border-radius: 4px; border: 1px solid #888; background: #fff; cursor: pointer; }
button.approve { background: #2a7a2a; color: #fff; border-color: #2a7a2a; }
button.reject { background: #b00020; color: #fff; border-color: #b00020; }
button:focus-visible, input:focus-visible, textarea:focus-visible, a:focus-visible { outline: 3px solid #3b82f6; outline-offset: 1px; }
textarea { width: 100%; min-height: 6rem; font: 13px monospace; box-sizing: border-box; }
#sessions a { display: block; padding: .3rem .4rem; border-radius: 4px; color: #0b4f9c; }
#sessions a[aria-current="true"] { background: #dde8f6; }
#timeline > li { border-bottom: 1px solid #e2e2dc; padding: .25rem 0; font-size: 13px; }
#timeline .kind { font-weight: 600; margin-right: .4rem; }
#timeline .hook { color: #7a4a00; margin-left: .4rem; }
#timeline .msg { color: #0b4f9c; }
.diff-del { color: #b00020; } .diff-add { color: #2a7a2a; }
#error { color: #b00020; padding: 0 1rem; }
h3 { font-size: .95rem; margin: .6rem 0 .4rem; }
#checkpoints > li { border-left-color: #3b6fb0; }
#checkpoints > li.undone { border-left-color: #888; }
#undo-status.failed { color: #b00020; }
.refusal { border-top: 1px solid #e2e2dc; margin-top: .5rem; }
.confirm { background: #fbeaea; border-radius: 4px; padding: .2rem .5rem; }
`;

/** The script. */
export const CONSOLE_JS: string = String.raw`"use strict";
(() => {
  const $ = (id) => document.getElementById(id);
  const state = { token: sessionStorage.getItem("hookscope-token") || "", session: null, afterSeq: 0, messagesFrom: 0, messageIds: new Set(), painted: false, busy: false };
  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === undefined || v === null || v === false) continue;
      if (k === "class") node.className = v; else if (k.startsWith("data-")) node.setAttribute(k, String(v)); else node.setAttribute(k, String(v));
    }
    for (const child of children) {
      if (child === null || child === undefined) continue;
      node.append(typeof child === "string" ? document.createTextNode(child) : child);
    }
    return node;
  }
  const time = (ms) => (typeof ms === "number" ? new Date(ms).toLocaleString() : "-");
  const pretty = (value) => JSON.stringify(value, null, 2);
  function showError(text) { $("error").textContent = text || ""; }
  async function api(path, init) {
    const headers = Object.assign({}, (init && init.headers) || {});
    if (state.token) headers.authorization = "Bearer " + state.token;
    const response = await fetch(path, Object.assign({}, init, { headers }));
    const body = await response.json().catch(() => ({}));
    if (!response.ok) { const e = new Error(body.error || ("HTTP " + response.status)); e.status = response.status; e.body = body; throw e; }
    return body;
  }
  async function answer(row, fields) {
    try {
      const result = await api("/api/answer", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(Object.assign({ runId: row.runId, callId: row.callId, argsHash: row.argsHash }, row.effects ? { effectsHash: row.effects.hash } : {}, fields)),
      });
      showError("");
      return result;
    } catch (error) {
      showError(error.message);
    } finally {
      await refreshPending().catch(() => {});
    }
  }
  function argsDiff(before, after) {
    const list = el("pre", { class: "diff" });
    const keys = [...new Set([...Object.keys(before || {}), ...Object.keys(after || {})])].sort();
    for (const key of keys) {
      const a = JSON.stringify((before || {})[key]);
      const b = JSON.stringify((after || {})[key]);
      if (a === b) { list.append(el("div", null, "  " + key + ": " + a)); continue; }
      if (a !== undefined) list.append(el("div", { class: "diff-del" }, "- " + key + ": " + a));
      if (b !== undefined) list.append(el("div", { class: "diff-add" }, "+ " + key + ": " + b));
    }
    return list;
  }
  function pendingCard(row) {
    const id = "c-" + row.runId + "-" + row.callId;
    const li = el("li", { class: row.answer ? "answered" : row.interrupted ? "interrupted" : "", "data-call": row.callId, "data-run": row.runId });
    li.append(el("h3", null, row.toolName + " ", el("span", { class: "meta" }, "call " + row.callId)));
    if (row.interrupted) li.append(el("p", { class: "meta" }, "Interrupted: a resume started this call and its process went away. It may have run; it runs again only if approved again."));
    li.append(el("p", null, "Reason: ", el("span", { class: "reason" }, row.reason || "-")));
    li.append(el("p", { class: "meta" }, "Asked " + time(row.requestedAt) + (row.policy ? " by " + row.policy : "") + " · run " + row.runId + " · session " + (row.sessionId || "-")));
    const expired = typeof row.expiresAt === "number" && row.expiresAt <= Date.now();
    li.append(el("p", { class: "meta terms" }, "Who may answer: " + (row.answerableBy ? row.answerableBy.join(", ") : "anyone with a token") + " · expires: " + (row.expiresAt ? time(row.expiresAt) + (expired ? " (expired)" : "") : "never")));
    li.append(el("pre", { class: "args", "aria-label": "arguments" }, pretty(row.args)));
    li.append(el("p", { class: "meta hash" }, "sha256 " + row.argsHash));
    if (row.effects) {
      // A change-set approval: the command ran in a staged copy; approving commits exactly this.
      li.append(el("p", null, "Change set (" + row.effects.count + " entries): the command has run in a staged copy of the workspace; approving commits exactly these changes, it does not run again."));
      const list = el("ul", { class: "changes", "aria-label": "change set" });
      for (const c of row.effects.changes) {
        list.append(el("li", null, c.kind + " " + c.path + (c.target ? " -> " + c.target : "") + (typeof c.bytesBefore === "number" || typeof c.bytesAfter === "number" ? " (" + [c.bytesBefore, c.bytesAfter].filter((b) => typeof b === "number").join(" B → ") + " B)" : "")));
      }
      if (row.effects.count > row.effects.changes.length) list.append(el("li", null, "… " + (row.effects.count - row.effects.changes.length) + " more"));
      li.append(list);
      li.append(el("p", { class: "meta hash" }, "change set sha256 " + row.effects.hash));
    }
    if (row.answer) {
      const a = row.answer;
      li.append(el("p", { class: "answer" }, (a.approve ? "Approved" : "Rejected") + (a.by ? " by " + a.by : "") + " at " + time(a.answeredAt) + (a.reason ? " — " + a.reason : "")));
      if (a.updatedArgs) li.append(argsDiff(row.args, a.updatedArgs));
      // An answer is stored, not acted on: the stopped run goes on only when someone resumes it.
      li.append(el("p", { class: "meta next" }, "The run goes on when it is resumed, once every call of it is answered: hookscope resume DB " + row.runId + " (or session.resume() where the agent runs)."));
      return li;
    }
    if (expired) {
      li.className = "interrupted";
      li.append(el("p", { class: "answer" }, "Expired without an answer: it resolves as rejected (\"expired\") when the run is resumed."));
      return li;
    }
    if (row.answerableBy && state.me && !row.answerableBy.includes(state.me)) {
      li.append(el("p", { class: "answer" }, "Only " + row.answerableBy.join(", ") + " may answer this; you are " + state.me + "."));
      return li;
    }
    const actions = el("div", { class: "actions" });
    const approve = el("button", { type: "button", class: "approve" }, "Approve");
    approve.addEventListener("click", () => answer(row, { approve: true }));
    const reasonId = id + "-reason";
    const reason = el("input", { id: reasonId, type: "text", placeholder: "why not" });
    const reject = el("button", { type: "button", class: "reject" }, "Reject");
    reject.addEventListener("click", () => answer(row, { approve: false, reason: reason.value || undefined }));
    const edit = el("button", { type: "button" }, "Edit, then approve");
    edit.addEventListener("click", () => {
      const areaId = id + "-edit";
      const area = el("textarea", { id: areaId });
      area.value = pretty(row.args);
      const go = el("button", { type: "button", class: "approve" }, "Approve edited arguments");
      go.addEventListener("click", () => {
        let parsed;
        try { parsed = JSON.parse(area.value); } catch (error) { showError("The edited arguments are not JSON: " + error.message); return; }
        answer(row, { approve: true, updatedArgs: parsed });
      });
      edit.replaceWith(el("div", { class: "editor" }, el("label", { for: areaId }, "Arguments to run instead (checked again by the guards)"), area, go));
      area.focus();
    });
    // The reason belongs to the rejection: its label, field and button stay together.
    const rejecting = el("span", { class: "reject-group" }, el("label", { for: reasonId }, "Reason"), reason, reject);
    // A change set cannot be edited: the command has run already.
    if (row.effects) actions.append(approve, rejecting);
    else actions.append(approve, edit, rejecting);
    li.append(actions);
    return li;
  }
  let lastPending = "";
  let expiryTimer = null;
  function showPending(rows) {
    state.pendingRows = rows;
    // A card whose approval expires while the page is open is drawn again then.
    const next = Math.min(...rows.map((r) => (typeof r.expiresAt === "number" && r.expiresAt > Date.now() ? r.expiresAt : Infinity)));
    clearTimeout(expiryTimer);
    if (next !== Infinity) expiryTimer = setTimeout(() => { lastPending = ""; showPending(state.pendingRows); }, Math.min(next - Date.now() + 50, 2147483647));
    // The tab's title counts what waits for a person, so a background tab shows it.
    const waiting = rows.filter((r) => !r.answer && !(typeof r.expiresAt === "number" && r.expiresAt <= Date.now())).length;
    document.title = (waiting > 0 ? "(" + waiting + " waiting) " : "") + "hookscope console";
    const key = JSON.stringify(rows);
    if (key === lastPending) return;
    const list = $("pending");
    const focusedId = document.activeElement && document.activeElement.id;
    const typing = document.activeElement && (document.activeElement.tagName === "TEXTAREA" || document.activeElement.tagName === "INPUT") && list.contains(document.activeElement);
    // Never rebuild a card under someone typing a reason or editing arguments: shown on blur.
    if (typing) { state.heldPending = rows; return; }
    lastPending = key;
    list.replaceChildren(...rows.map(pendingCard));
    $("pending-empty").textContent = "Nothing waits.";
    $("pending-empty").hidden = rows.length > 0;
    if (focusedId && $(focusedId)) $(focusedId).focus();
  }
  document.addEventListener("focusout", () => setTimeout(() => {
    if (state.heldPending) { const rows = state.heldPending; state.heldPending = null; showPending(rows); }
  }, 0));
  async function refreshPending() { showPending(await api("/api/pending")); }
  let lastSessions = "";
  function showSessions(sessions) {
    const key = JSON.stringify(sessions) + state.session;
    if (key === lastSessions) return;
    lastSessions = key;
    state.sessions = sessions;
    $("sessions").replaceChildren(...sessions.map((s) => {
      const link = el("a", { href: "#/s/" + encodeURIComponent(s.id), "aria-current": s.id === state.session ? "true" : null }, s.id + " (" + s.status + (s.pending ? ", " + s.pending + " waiting" : "") + ")");
      return el("li", null, link);
    }));
  }
  function signalRow(row) {
    // A signal's fields may sit at the top, under data (signals) or under payload (hook points).
    const top = row.payload || {};
    const p = Object.assign({}, top.payload && typeof top.payload === "object" ? top.payload : {}, top.data && typeof top.data === "object" ? top.data : {}, top);
    const li = el("li", { "data-seq": row.seq, "data-kind": row.kind, "data-point": typeof p.point === "string" ? p.point : null });
    li.append(el("span", { class: "meta" }, new Date(row.ts).toLocaleTimeString() + " "), el("span", { class: "kind" }, row.kind));
    if (row.kind === "MessageAdded" && p.messageRef) {
      // A message that is not (yet) among the session's stored messages: its role at least.
      li.append(el("span", { class: "msg" }, (p.messageRef.role || "") + " message"));
      return li;
    }
    const tool = p.toolName || (p.data && p.data.toolName);
    if (p.point) li.append(el("span", { class: "meta" }, p.point + " "));
    if (tool) li.append(el("span", null, tool + (p.callId ? " (" + p.callId + ")" : "")));
    if (p.decision || p.verdict) li.append(el("span", null, " → " + (p.decision || p.verdict)));
    if (p.hook) li.append(el("span", { class: "hook" }, "hook " + p.hook));
    if (p.by) li.append(el("span", { class: "hook" }, "by " + p.by));
    // A stored answer applied when the run was resumed: nobody was asked again.
    if (p.resumed === true) li.append(el("span", { class: "meta" }, " (the stored answer, applied on resume)"));
    if (p.answered) li.append(el("span", { class: "meta" }, " — answered before the resume: " + (p.answered.approve ? "approved" : "rejected") + (p.answered.by ? " by " + p.answered.by : "")));
    if (p.reason) li.append(el("span", { class: "meta" }, " — " + p.reason));
    if (p.why) li.append(el("span", { class: "meta" }, " — refused: " + p.why));
    if (p.point === "tool.post") {
      // What the call returned; its arguments are on its tool.pre row.
      li.append(el("pre", { class: "result", "aria-label": "result" }, pretty(p.result !== undefined ? p.result : p.resultSummary)));
    } else if (p.point === "tool.error") {
      const e = p.error;
      li.append(el("pre", { class: "error", "aria-label": "error" }, e && typeof e === "object" && typeof e.message === "string" ? e.message : pretty(e)));
    } else if (p.updatedArgs && p.args) li.append(argsDiff(p.args, p.updatedArgs));
    else if (p.args) li.append(el("pre", { class: "args", "aria-label": "arguments" }, pretty(p.args)));
    return li;
  }
  function messageRow(m) {
    const c = m.content;
    const text = typeof c === "string" ? c : c && c.function ? c.function + " " + JSON.stringify(c.output !== undefined ? c.output : c.arguments) : JSON.stringify(c);
    return el("li", { "data-message": m.id, class: "msg" }, el("span", { class: "meta" }, new Date(m.createdAt).toLocaleTimeString() + " "), el("span", { class: "kind" }, m.role), text || "");
  }
  function showTimeline(page) {
    if (page.session !== state.session || page.lastSeq < state.afterSeq) return;
    // A message is shown once, with its content: its MessageAdded signal adds nothing to it.
    for (const m of page.messages) state.messageIds.add(m.id);
    const shown = page.signals.filter((r) => !(r.kind === "MessageAdded" && r.payload && r.payload.messageRef && state.messageIds.has(r.payload.messageRef.id)));
    const items = shown.map((r) => [r.ts, signalRow(r)]).concat(page.messages.map((m) => [m.createdAt, messageRow(m)]));
    items.sort((a, b) => a[0] - b[0]);
    const rows = items.map((item) => item[1]);
    if (rows.length > 0) {
      const fragment = document.createDocumentFragment();
      fragment.append(...rows);
      $("timeline").append(fragment);
    }
    if (rows.length > 0 && state.painted) $("timeline-status").textContent = rows.length + " new events";
    if (page.messages.length > 0) checkpointsSoon();
    state.afterSeq = page.lastSeq;
    state.messagesFrom = page.messageCount;
    if (!state.painted) {
      state.painted = true;
      requestAnimationFrame(() => { document.body.dataset.painted = String(performance.now()); });
    }
    if (!page.more && !state.loaded) {
      state.loaded = true;
      requestAnimationFrame(() => { document.body.dataset.loaded = String(performance.now()); });
    }
  }
  let lastCheckpoints = "";
  let checkpointsAt = 0;
  let checkpointsTimer = null;
  function checkpointCard(c) {
    const li = el("li", { class: c.state === "committed" ? "" : "undone", "data-undo-call": c.callId });
    li.append(el("p", null, c.toolName + " ", el("span", { class: "meta" }, "call " + c.callId + " · " + time(c.createdAt) + " · " + c.workspace)));
    const list = el("pre", { class: "changes", "aria-label": "what the call changed" });
    list.textContent = c.changes.map((x) => x.kind + " " + x.path).join("\n") || "(nothing)";
    li.append(list);
    if (c.state !== "committed") { li.append(el("p", { class: "meta" }, c.state === "undone" ? "Undone." : "Not committed (" + c.state + ").")); return li; }
    if (!state.canUndo) { li.append(el("p", { class: "meta" }, "Undo needs an answer token.")); return li; }
    const button = el("button", { type: "button", class: "reject" }, "Undo");
    button.addEventListener("click", () => undo(c, false, button));
    li.append(el("div", { class: "actions" }, button));
    const refusal = state.undoRefusal && state.undoRefusal.callId === c.callId ? state.undoRefusal : null;
    if (refusal) li.append(refusalBlock(c, refusal));
    return li;
  }
  // A later call's name for a person: which call, and where it belongs (a link to its session).
  function laterCall(l) {
    const span = el("span", null, "call " + l.callId + " (" + l.toolName + ")");
    if (l.sessionId === state.session) span.append(", later in this session,");
    else if (l.sessionId) span.append(" of ", el("a", { href: "#/s/" + encodeURIComponent(l.sessionId) }, "session " + l.sessionId));
    return span;
  }
  function pathsText(paths) {
    const shown = (paths || []).slice(0, 3).join(", ");
    return (paths || []).length > 3 ? shown + " and " + (paths.length - 3) + " more" : shown || "the same files";
  }
  // Why an undo was refused, what a person can do about it, and the undo anyway (confirmed).
  function refusalBlock(c, refusal) {
    const body = refusal.body;
    const paths = pathsText(body.paths);
    const later = body.later || [];
    const block = el("div", { class: "refusal" });
    const why = el("p", null, "Not undone: ");
    let lost;
    if (body.why === "conflict" && later.length > 0) {
      if (later.length === 1) why.append(laterCall(later[0]), " changed " + paths + " after this call. Undo call " + later[0].callId + " first, then this one.");
      else {
        why.append("later calls changed " + paths + " after this call: ");
        later.forEach((l, i) => why.append(i === 0 ? "" : "; ", laterCall(l)));
        why.append(". Undo them first, newest first (call " + later[0].callId + " first), then this one.");
      }
      lost = "loses what call" + (later.length === 1 ? " " : "s ") + later.map((l) => l.callId).join(", ") + " changed there.";
    } else {
      why.append(paths + " changed after call " + c.callId + " committed, not by a call hookscope recorded (by hand, or another program). Look at those changes first.");
      lost = "loses the changes made to them since.";
    }
    block.append(why);
    if (!refusal.confirming) {
      const anyway = el("button", { type: "button" }, "Undo anyway…");
      anyway.addEventListener("click", () => { refusal.confirming = true; redrawCheckpoint(c, ".confirm button"); });
      block.append(el("div", { class: "actions" }, anyway));
      return block;
    }
    const go = el("button", { type: "button", class: "reject" }, "Undo anyway, losing those changes");
    go.addEventListener("click", () => undo(c, true, go));
    const cancel = el("button", { type: "button" }, "Cancel");
    cancel.addEventListener("click", () => { refusal.confirming = false; redrawCheckpoint(c, ".refusal button"); });
    block.append(el("div", { class: "confirm", role: "group", "aria-label": "confirm the undo" }, el("p", null, "Undoing call " + c.callId + " anyway puts " + paths + " back as it was before call " + c.callId + ", and " + lost), el("div", { class: "actions" }, go, cancel)));
    return block;
  }
  function redrawCheckpoint(c, focus) {
    const old = $("checkpoints").querySelector('li[data-undo-call="' + CSS.escape(c.callId) + '"]');
    if (!old) return;
    const card = checkpointCard(c);
    old.replaceWith(card);
    const target = focus && card.querySelector(focus);
    if (target) target.focus();
  }
  async function undo(c, force, button) {
    const status = $("undo-status");
    button.disabled = true;
    status.className = "";
    status.textContent = "Undoing call " + c.callId + "…";
    try {
      const result = await api("/api/undo", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ session: state.session, callId: c.callId, force: force || undefined }),
      });
      state.undoRefusal = null;
      status.textContent = "Undid call " + c.callId + " in " + result.workspace + ": " + result.changes.length + " path(s) restored.";
    } catch (error) {
      status.className = "failed";
      const why = error.body && error.body.why;
      if (error.status === 409 && (why === "conflict" || why === "changed")) {
        // Said on the call's card, with what to do about it.
        state.undoRefusal = { callId: c.callId, body: error.body, confirming: false };
        status.textContent = "Call " + c.callId + " was not undone: " + (why === "conflict" ? "later calls changed the same files" : "its files changed since") + ". Why, and what to do, is on its card.";
      } else {
        state.undoRefusal = null;
        status.textContent = "Not undone: " + error.message;
      }
    } finally {
      button.disabled = false;
      lastCheckpoints = "";
      await refreshCheckpoints().catch(() => {});
    }
  }
  async function refreshCheckpoints() {
    checkpointsAt = Date.now();
    const session = state.session;
    if (!session) { $("undo").hidden = true; return; }
    const body = await api("/api/checkpoints?session=" + encodeURIComponent(session));
    if (session !== state.session) return;
    state.canUndo = body.undo;
    const key = JSON.stringify(body);
    if (key === lastCheckpoints) return;
    lastCheckpoints = key;
    $("undo").hidden = body.checkpoints.length === 0;
    $("checkpoints").replaceChildren(...body.checkpoints.map(checkpointCard));
  }
  // New tool results may come with checkpoints: look again, at most once a second.
  function checkpointsSoon() {
    if (checkpointsTimer !== null) return;
    checkpointsTimer = setTimeout(() => {
      checkpointsTimer = null;
      refreshCheckpoints().catch(() => {});
    }, Math.max(0, checkpointsAt + 1000 - Date.now()));
  }
  function route() {
    const match = /^#\/s\/(.+)$/.exec(location.hash);
    let next = null;
    // A hand-made link with a malformed %-escape names the session as written.
    if (match) { try { next = decodeURIComponent(match[1]); } catch { next = match[1]; } }
    if (next === state.session) return false;
    state.session = next; state.afterSeq = 0; state.messagesFrom = 0; state.messageIds = new Set(); state.painted = false; state.loaded = false;
    delete document.body.dataset.painted;
    delete document.body.dataset.loaded;
    $("timeline").replaceChildren();
    $("timeline-status").textContent = "";
    $("timeline-help").textContent = next ? "Session " + next : "Pick a session.";
    $("undo").hidden = true; $("checkpoints").replaceChildren(); $("undo-status").textContent = ""; lastCheckpoints = ""; state.undoRefusal = null;
    if (next) refreshCheckpoints().catch(() => {});
    if (state.sessions) { lastSessions = ""; showSessions(state.sessions); }
    return true;
  }
  const NEED_TOKEN = "Enter the answer token to see this console.";
  function handleEvent(block) {
    let event = "message";
    let data = "";
    for (const line of block.split("\n")) {
      if (line.startsWith("event: ")) event = line.slice(7);
      else if (line.startsWith("data: ")) data += line.slice(6);
    }
    if (!data) return;
    const body = JSON.parse(data);
    if (event === "timeline") showTimeline(body);
    else if (event === "pending") showPending(body);
    else if (event === "sessions") showSessions(body);
    else if (event === "error") showError(body.error);
  }
  // The live stream: one request that the server feeds from the store's change stream (fetch,
  // not EventSource, which cannot send the token). Cut or refused, it is opened again from the
  // cursor, so nothing is lost or shown twice.
  // A connection can die without closing (a proxy's idle cut, a laptop that slept): the server
  // sends a keep-alive comment every few seconds, so a stream silent for three of them is dropped
  // and opened again.
  let stream = null;
  async function follow() {
    const controller = new AbortController();
    stream = controller;
    let delay = 500;
    // Until a server has said how often it speaks, 16 s; then as it said (also while waiting for
    // the answer to the next request, which may go out on a pooled connection as dead).
    let silentMs = 16000;
    while (stream === controller) {
      const connection = new AbortController();
      const stop = () => connection.abort();
      controller.signal.addEventListener("abort", stop);
      let watchdog = 0;
      const watch = () => {
        clearTimeout(watchdog);
        watchdog = setTimeout(() => connection.abort(new Error("no word from the server for " + Math.round(silentMs / 1000) + " s")), silentMs);
      };
      try {
        const query = "?afterSeq=" + state.afterSeq + "&messagesFrom=" + state.messagesFrom + (state.session ? "&session=" + encodeURIComponent(state.session) : "");
        const headers = state.token ? { authorization: "Bearer " + state.token } : {};
        watch();
        const response = await fetch("/api/events" + query, { headers, signal: connection.signal });
        const keepAlive = Number(response.headers.get("x-hookscope-keep-alive"));
        if (keepAlive > 0) silentMs = 3 * keepAlive + 1000;
        // A server (or a proxy) that does not name its keep-alive: no watch on the stream itself.
        if (keepAlive > 0) watch(); else clearTimeout(watchdog);
        if (!response.ok) {
          const body = await response.json().catch(() => ({}));
          const error = new Error(body.error || ("HTTP " + response.status)); error.status = response.status; throw error;
        }
        document.body.dataset.feed = response.headers.get("x-hookscope-feed") || "";
        const shown = $("error").textContent;
        if (shown === NEED_TOKEN || shown.startsWith("Live updates interrupted")) showError("");
        delay = 500;
        const reader = response.body.getReader();
        const decoder = new TextDecoder();
        let buffer = "";
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          if (keepAlive > 0) watch();
          buffer += decoder.decode(value, { stream: true });
          let at;
          while ((at = buffer.indexOf("\n\n")) >= 0) {
            const block = buffer.slice(0, at);
            buffer = buffer.slice(at + 2);
            if (stream === controller) handleEvent(block);
          }
        }
      } catch (error) {
        if (stream !== controller) return;
        const reason = connection.signal.aborted && connection.signal.reason instanceof Error ? connection.signal.reason : error;
        showError(error.status === 401 ? NEED_TOKEN : "Live updates interrupted (" + reason.message + "); reconnecting");
        // Not "Nothing waits.": what waits is not known until the token is given.
        if (error.status === 401 && !state.pendingRows) $("pending-empty").textContent = "Enter the answer token to see what waits.";
        delay = Math.min(delay * 2, error.status === 401 ? 30000 : 5000);
      } finally {
        clearTimeout(watchdog);
        controller.signal.removeEventListener("abort", stop);
        connection.abort();
      }
      if (stream === controller) await new Promise((resume) => setTimeout(resume, delay));
    }
  }
  function restart() {
    if (stream) stream.abort();
    stream = null;
    follow();
  }
  async function whoami() {
    try {
      const me = await api("/api/whoami");
      $("who").textContent = me.canAnswer ? (me.name ? "answering as " + me.name : "") : "read-only console";
      if (state.me !== me.name) { state.me = me.name; lastPending = ""; if (state.pendingRows) showPending(state.pendingRows); }
    }
    catch { $("who").textContent = state.token ? "token refused" : ""; }
  }
  $("auth").addEventListener("submit", (event) => {
    event.preventDefault();
    state.token = $("token").value;
    sessionStorage.setItem("hookscope-token", state.token);
    $("token").value = "";
    lastPending = ""; lastSessions = ""; lastCheckpoints = "";
    whoami(); restart(); refreshCheckpoints().catch(() => {});
  });
  window.addEventListener("hashchange", () => { if (route()) restart(); });
  route();
  whoami();
  follow();
})();
`;
