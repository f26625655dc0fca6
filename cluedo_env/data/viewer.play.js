"use strict";
// The play panel of `cluedo play --web`: the replay viewer's drawing (viewer.js) fed by the game's server.
// The server sends only what the human's seat may know; this script never holds more than that.
(function () {
  const V = window.CluedoViewer;
  if (!V || V.data().you === undefined) return;  // a replay page: nothing to add
  const SEAT = V.data().you;
  const TOKEN = new URLSearchParams(location.search).get("token") || "";
  const SPEEDS = [["instant", 0], ["fast", 150], ["normal", 450], ["slow", 1000]];
  const MARKS = ["", "\u2713", "\u00d7", "?"];  // the person's own notebook marks, cycled by clicks
  const $ = (id) => document.getElementById(id);
  function el(tag, attrs, text) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function stored(key, fallback) {
    try { const v = localStorage.getItem(key); return v === null ? fallback : JSON.parse(v); } catch (e) { return fallback; }
  }
  function store(key, value) { try { localStorage.setItem(key, JSON.stringify(value)); } catch (e) { /* private mode */ } }

  const marksKey = "cluedo-play-marks-" + TOKEN.slice(0, 12);
  let marks = stored(marksKey, {});
  let speed = Number(stored("cluedo-play-speed", 450));
  let busy = false;
  let timer = null;
  let shownKey = null;
  let stopped = false;

  // ------------------------------------------------------------------ panel
  const panel = el("section", { id: "play-panel", class: "box", "data-state": "loading" });
  panel.appendChild(el("div", { id: "play-prompt" }));
  panel.appendChild(el("div", { id: "play-choices" }));
  const err = el("div", { id: "play-error", role: "alert" });
  err.hidden = true;
  panel.appendChild(err);
  const bar = el("div", { id: "play-bar" });
  bar.appendChild(el("label", { for: "speed" }, "Bots' speed "));
  const speedSel = el("select", { id: "speed", "aria-label": "speed of the bots' turns" });
  for (const [name, ms] of SPEEDS) speedSel.appendChild(el("option", { value: String(ms) }, name));
  speedSel.value = String(speed);
  if (speedSel.value !== String(speed)) { speed = 450; speedSel.value = "450"; }
  speedSel.onchange = () => { speed = Number(speedSel.value); store("cluedo-play-speed", speed); speedSel.blur(); };
  bar.appendChild(speedSel);
  const accuseBtn = el("button", { id: "btn-accuse", type: "button" }, "Accuse\u2026");
  accuseBtn.onclick = openAccuse;
  bar.appendChild(accuseBtn);
  const quitBtn = el("button", { id: "btn-quit", type: "button" }, "Quit");
  quitBtn.onclick = () => { if (confirm("Quit this game? It is saved as it stands.")) post("/api/quit", {}); };
  bar.appendChild(quitBtn);
  panel.appendChild(bar);
  const end = el("div", { id: "play-end" });
  end.hidden = true;
  panel.appendChild(end);
  $("top").after(panel);
  document.querySelector("#top h1").textContent = "Cluedo";
  const players = V.data().players || [];
  $("subtitle").textContent = "You are " + V.data().suspects[SEAT] + " (seat " + SEAT + ") against " +
    players.filter((_, q) => q !== SEAT).join(", ");
  document.querySelector("footer").textContent = "Click a highlighted square or room to move. Arrows, Home and " +
    "End step through what happened. Click an empty cell of your notebook to mark it (\u2713 \u00d7 ?).";
  const sel = $("seat-select");
  for (const opt of [...sel.options]) if (opt.value !== String(SEAT)) opt.remove();

  // ------------------------------------------------------------------ accusation dialog
  const dlg = el("dialog", { id: "accuse-dialog" });
  dlg.appendChild(el("h2", {}, "Accusation"));
  const pick = el("div", { id: "acc-pick" });
  const accSel = {};
  for (const kind of ["suspect", "weapon", "room"]) {
    const lab = el("label", { class: "acc-row" }, kind + " ");
    accSel[kind] = el("select", { id: "acc-" + kind });
    lab.appendChild(accSel[kind]);
    pick.appendChild(lab);
  }
  const next = el("button", { id: "acc-next", type: "button" }, "Accuse\u2026");
  const cancel1 = el("button", { id: "acc-cancel", type: "button" }, "Cancel");
  pick.appendChild(next);
  pick.appendChild(cancel1);
  dlg.appendChild(pick);
  const conf = el("div", { id: "acc-confirm-box" });
  conf.hidden = true;
  conf.appendChild(el("p", { id: "acc-confirm-text" }));
  const yes = el("button", { id: "acc-confirm", type: "button", class: "danger" }, "Yes, accuse");
  const no = el("button", { id: "acc-back", type: "button" }, "Go back");
  conf.appendChild(yes);
  conf.appendChild(no);
  dlg.appendChild(conf);
  document.body.appendChild(dlg);
  cancel1.onclick = () => dlg.close();
  no.onclick = () => { conf.hidden = true; pick.hidden = false; };

  function accuseAction() {
    const ch = V.data().choices;
    const s = Number(accSel.suspect.value), w = Number(accSel.weapon.value), r = Number(accSel.room.value);
    const hit = ch && ch.accuse.find((t) => t[1] === s && t[2] === w && t[3] === r);
    return hit ? [hit[0], s, w, r] : null;
  }
  function openAccuse() {
    const D = V.data(), ch = D.choices;
    if (!ch || !ch.accuse.length || !atEnd()) return;
    const opts = { suspect: [...new Set(ch.accuse.map((t) => t[1]))], weapon: [...new Set(ch.accuse.map((t) => t[2]))],
      room: [...new Set(ch.accuse.map((t) => t[3]))] };
    const names = { suspect: D.suspects, weapon: D.weapons, room: D.cards.slice(12) };
    for (const kind of Object.keys(opts)) {
      accSel[kind].replaceChildren();
      for (const i of opts[kind].sort((a, b) => a - b)) accSel[kind].appendChild(el("option", { value: String(i) }, names[kind][i]));
    }
    conf.hidden = true;
    pick.hidden = false;
    dlg.showModal();
  }
  next.onclick = () => {
    const a = accuseAction();
    if (!a) return;
    const D = V.data();
    $("acc-confirm-text").textContent = "Accuse " + D.suspects[a[1]] + " with the " + D.weapons[a[2]] + " in the " +
      D.cards[12 + a[3]] + "? If you are wrong, you are out of the game (you still show cards).";
    pick.hidden = true;
    conf.hidden = false;
  };
  yes.onclick = () => { const a = accuseAction(); dlg.close(); if (a) act(a[0]); };

  // ------------------------------------------------------------------ server
  function atEnd() { return V.step() === V.data().frames.length - 1; }
  function setError(text) { err.textContent = text; err.hidden = !text; }

  function merge(resp) {
    const D = V.data();
    resp.frames.forEach((fr, i) => { D.frames[resp.since + i] = fr; D.notebooks[resp.since + i] = resp.notebooks[i]; });
    D.frames.length = resp.total;
    D.notebooks.length = resp.total;
    for (const k of ["history", "choices", "over", "ended", "record"]) D[k] = resp[k];
    D.result = resp.result || {};
    if (resp.seed !== undefined) D.seed = resp.seed;
    shownKey = null;
    V.load(D, V.step());
    animate();
  }
  async function request(method, path, body) {
    const init = { method: method, headers: { "X-Cluedo-Token": TOKEN } };
    if (body !== undefined) { init.headers["Content-Type"] = "application/json"; init.body = JSON.stringify(body); }
    const r = await fetch(path, init);
    const data = await r.json();
    if (!r.ok) throw new Error(data.error || "error " + r.status);
    return data;
  }
  async function post(path, body) {
    if (busy || stopped) return;
    busy = true;
    panel.dataset.busy = "1";
    setError("");
    try {
      merge(await request("POST", path, body));
    } catch (e) {
      setError(String(e.message || e));
    } finally {
      busy = false;
      delete panel.dataset.busy;
      shownKey = null;
      renderPanel();
    }
  }
  function act(action) { post("/api/act", { action: action, since: V.data().frames.length }); }
  async function heartbeat() {
    if (busy || stopped) return;
    try {
      const resp = await request("GET", "/api/state?since=" + V.data().frames.length);
      if (resp.frames.length || resp.ended !== V.data().ended) merge(resp);
    } catch (e) {
      stopped = true;
      shownKey = null;
      renderPanel();
    }
  }
  setInterval(heartbeat, 5000);

  // ------------------------------------------------------------------ bots' steps, one by one
  function animate() {
    clearTimeout(timer);
    const last = V.data().frames.length - 1;
    if (V.step() >= last) { renderPanel(); return; }
    if (speed === 0) { V.go(last); return; }
    timer = setTimeout(() => { V.go(V.step() + 1); animate(); }, V.step() === last - 1 ? Math.min(speed, 150) : speed);
  }

  // ------------------------------------------------------------------ the choices
  function clearTargets() {
    for (const e of document.querySelectorAll("#board .target")) e.classList.remove("target");
  }
  function button(label, action, cls) {
    const b = el("button", { type: "button", class: "choice " + (cls || ""), "data-action": String(action) }, label);
    b.onclick = () => act(action);
    return b;
  }
  function renderPanel() {
    const D = V.data(), ch = D.choices, end_ = atEnd();
    const key = [D.frames.length, end_, !!ch, D.ended, busy, stopped].join("|");
    if (key === shownKey) return;
    shownKey = key;
    const prompt = $("play-prompt"), box = $("play-choices");
    box.replaceChildren();
    clearTargets();
    accuseBtn.disabled = !(ch && ch.accuse.length && end_) || busy;
    quitBtn.disabled = stopped || !!D.ended;
    let state;
    if (D.ended || D.over) {
      state = "over";
      prompt.textContent = D.over ? "The game is over." : "The game has ended (" + D.ended + ").";
      if (end_) showEnd(D);
    } else if (stopped) {
      state = "stopped";
      prompt.textContent = "The server has stopped: the game is over.";
    } else if (busy) {
      state = "waiting";
      prompt.textContent = "The bots are playing\u2026";
    } else if (!end_) {
      state = "watching";
      prompt.textContent = "Watching the game\u2026";
      const skip = el("button", { type: "button", id: "btn-skip" }, "Skip to now");
      skip.onclick = () => { clearTimeout(timer); V.go(D.frames.length - 1); };
      box.appendChild(skip);
    } else if (!ch) {
      state = "waiting";
      prompt.textContent = "Waiting for the other players\u2026";
    } else {
      state = ch.phase;
      prompt.textContent = ch.prompt;
      for (const b of ch.buttons) box.appendChild(button(b.label, b.action));
      for (const m of ch.moves) {
        const sel = m.square ? '#board [data-square="' + m.square + '"]' : '#board [data-room="' + m.room + '"]';
        for (const e of document.querySelectorAll(sel)) e.classList.add("target");
        if (m.room) box.appendChild(button("Enter the " + m.room, m.action, "room-move"));
      }
      if (ch.suggest.length) box.appendChild(suggestForm(D, ch));
      for (const s of ch.show) box.appendChild(button("Show " + s.card, s.action, "show-card"));
      if (ch.accuse.length && (ch.phase === "post" || ch.phase === "start")) {
        const b = el("button", { type: "button", class: "choice accuse" }, "Accuse\u2026");
        b.onclick = openAccuse;
        box.appendChild(b);
      }
    }
    panel.dataset.state = state;
    document.body.dataset.playState = state;
  }
  function suggestForm(D, ch) {
    const form = el("div", { id: "suggest-form" });
    const s = el("select", { id: "sug-suspect", "aria-label": "suspect" });
    const w = el("select", { id: "sug-weapon", "aria-label": "weapon" });
    for (const i of [...new Set(ch.suggest.map((t) => t[1]))]) s.appendChild(el("option", { value: String(i) }, D.suspects[i]));
    for (const i of [...new Set(ch.suggest.map((t) => t[2]))]) w.appendChild(el("option", { value: String(i) }, D.weapons[i]));
    const rooms = [...new Set(ch.suggest.map((t) => t[3]))];
    form.appendChild(s);
    form.appendChild(w);
    form.appendChild(el("span", {}, " in the " + rooms.map((r) => D.cards[12 + r]).join(" / ") + " "));
    const go = el("button", { type: "button", id: "btn-suggest", class: "choice" }, "Suggest");
    go.onclick = () => {
      const hit = ch.suggest.find((t) => t[1] === Number(s.value) && t[2] === Number(w.value));
      if (hit) act(hit[0]);
    };
    form.appendChild(go);
    return form;
  }
  function showEnd(D) {
    end.replaceChildren();
    end.hidden = false;
    const R = D.result || {};
    if (D.over) {
      let text = R.winner !== null && R.winner !== undefined
        ? (R.winner === SEAT ? "You win!" : D.suspects[R.winner] + " (" + D.players[R.winner] + ") wins.")
        : R.truncated ? "The game was cut at the turn limit: nobody wins." : "Everybody was eliminated: nobody wins.";
      end.appendChild(el("div", { class: "end-result" }, text));
      const env = el("div", { id: "envelope", class: "nb-line nb-envelope" });
      env.appendChild(el("b", {}, "The envelope held: "));
      for (const c of R.solution || []) env.appendChild(el("span", { class: "chip", "data-card": c }, c));
      end.appendChild(env);
      const link = el("a", { id: "replay-link", href: "/replay?token=" + encodeURIComponent(TOKEN), target: "_blank",
        rel: "noopener" }, "Replay of the whole game (every seat's notebook)");
      end.appendChild(link);
    }
    if (D.record) end.appendChild(el("div", { class: "muted" }, "Game record: " + D.record));
  }

  // ------------------------------------------------------------------ board clicks
  $("board").addEventListener("click", (ev) => {
    const ch = V.data().choices;
    if (!ch || !ch.moves.length || !atEnd() || busy) return;
    const t = ev.target.closest("[data-square], [data-room], .token");
    if (!t) return;
    const where = t.dataset.square || t.dataset.room || t.dataset.location;
    const m = ch.moves.find((x) => x.square === where || x.room === where);
    if (m) act(m.action);
  });

  // ------------------------------------------------------------------ the person's notebook marks
  function applyMarks() {
    for (const td of document.querySelectorAll("#notebook tr[data-card] td[data-seat]")) {
      const q = Number(td.dataset.seat);
      if (q === SEAT || (td.textContent && !td.classList.contains("m-user"))) continue;
      const m = marks[td.parentElement.dataset.card + "|" + q] || "";
      td.classList.add("markable");
      td.classList.toggle("m-user", !!m);
      td.textContent = m;
    }
  }
  $("notebook").addEventListener("click", (ev) => {
    const td = ev.target.closest("td.markable");
    if (!td) return;
    const key = td.parentElement.dataset.card + "|" + td.dataset.seat;
    const m = MARKS[(MARKS.indexOf(marks[key] || "") + 1) % MARKS.length];
    if (m) marks[key] = m; else delete marks[key];
    store(marksKey, marks);
    applyMarks();
  });

  V.onRender(() => { applyMarks(); renderPanel(); });
  V.go(V.data().frames.length - 1);
  applyMarks();
  renderPanel();
  document.body.dataset.playReady = "1";
})();
