"use strict";
(function () {
  let D = JSON.parse(document.getElementById("replay-data").textContent);
  const SVGNS = "http://www.w3.org/2000/svg";
  const S = 31;  // pixels per board square
  let F = D.frames;
  let P = D.num_players;
  const LETTER = { Scarlet: "S", Mustard: "M", White: "W", Green: "G", Peacock: "P", Plum: "L" };
  const PHASE_HELP = {
    start: "start of turn: roll, passage, stay, or accuse",
    move: "choosing where to move",
    suggest: "making a suggestion in the room entered",
    refute: "the refuter chooses which card to show",
    post: "may accuse, or ends the turn",
    over: "the game is over",
  };
  let step = 0;
  let timer = null;
  const renderHooks = [];  // functions (frame, step) called after every render (the play page's panel)

  const $ = (id) => document.getElementById(id);
  function el(tag, attrs, text) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function sv(tag, attrs, text) {
    const e = document.createElementNS(SVGNS, tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function seatName(p) {
    const suspect = D.suspects[p];
    if (D.players && D.players[p] && D.players[p] !== suspect) return suspect + " (" + D.players[p] + ")";
    return suspect;
  }

  // ------------------------------------------------------------------ board
  const tokenEls = {};
  const weaponEls = {};
  let roomIndex = {};
  let squareOf = null;

  function drawBoard() {
    const B = D.board;
    const svg = $("board");
    if (!B) {
      svg.setAttribute("hidden", "");
      $("no-board").hidden = false;
      $("board-wrap").classList.add("no-board");
      return;
    }
    svg.setAttribute("viewBox", "0 0 " + B.cols * S + " " + B.rows * S);
    svg.setAttribute("width", B.cols * S);
    svg.setAttribute("height", B.rows * S);
    const letters = {};
    B.rooms.forEach((r, i) => { letters[r.letter] = i; roomIndex[r.name] = i; });
    const roomAt = (r, c) => {
      if (r < 0 || c < 0 || r >= B.rows || c >= B.cols) return -1;
      const ch = B.grid[r][c].toUpperCase();
      return ch in letters ? letters[ch] : -1;
    };
    const starts = {};
    for (const [name, rc] of Object.entries(D.board.starts)) starts[rc[0] + "," + rc[1]] = name;
    const layer = (id) => { const g = sv("g", { id: id }); svg.appendChild(g); return g; };
    layer("bg").appendChild(sv("rect", { x: 0, y: 0, width: B.cols * S, height: B.rows * S, fill: "#244a38" }));
    const squares = layer("squares");
    const rooms = layer("rooms");
    const walls = layer("walls");
    const marks = layer("marks");
    // corridor and start squares
    for (let r = 0; r < B.rows; r++) {
      for (let c = 0; c < B.cols; c++) {
        const ch = B.grid[r][c];
        if (ch === "." || "123456".includes(ch)) {
          const name = starts[r + "," + c];
          const rect = sv("rect", { x: c * S + 0.5, y: r * S + 0.5, width: S - 1, height: S - 1,
            fill: name ? mix("#f0e2ba", D.colors[name], 0.45) : "#f0e2ba", stroke: "#c4b082", "stroke-width": 1,
            class: name ? "square start" : "square", "data-square": r + "," + c });
          squares.appendChild(rect);
          if (name) {
            squares.appendChild(sv("circle", { cx: (c + 0.5) * S, cy: (r + 0.5) * S, r: S * 0.3, fill: "none",
              stroke: name === "White" ? "#6e6860" : shade(D.colors[name], 0.75), "stroke-width": 2.5 }));
          }
        } else if (roomAt(r, c) >= 0) {
          rooms.appendChild(sv("rect", { x: c * S, y: r * S, width: S + 0.6, height: S + 0.6,
            fill: B.rooms[roomAt(r, c)].fill, class: "room-cell", "data-room": B.rooms[roomAt(r, c)].name }));
        }
      }
    }
    // walls: every room-cell edge not shared with the same room, except doors
    const doorEdges = new Set(B.doors.map((d) => d[0] + "," + d[1] + d[2]));
    const sides = { N: [-1, 0], S: [1, 0], W: [0, -1], E: [0, 1] };
    let path = "";
    for (let r = 0; r < B.rows; r++) {
      for (let c = 0; c < B.cols; c++) {
        const room = roomAt(r, c);
        if (room < 0) continue;
        for (const [side, [dr, dc]] of Object.entries(sides)) {
          if (roomAt(r + dr, c + dc) === room || doorEdges.has(r + "," + c + side)) continue;
          const [x0, y0, x1, y1] = edge(r, c, side);
          path += "M" + x0 + " " + y0 + "L" + x1 + " " + y1;
        }
      }
    }
    walls.appendChild(sv("path", { d: path, stroke: "#422e24", "stroke-width": 3.5, "stroke-linecap": "square" }));
    for (const [r, c, side, room] of B.doors) {
      const [x0, y0, x1, y1] = edge(r, c, side);
      const t = 4, inset = S * 0.14;
      const attrs = y0 === y1
        ? { x: x0 + inset, y: y0 - t / 2, width: S - 2 * inset, height: t }
        : { x: x0 - t / 2, y: y0 + inset, width: t, height: S - 2 * inset };
      const door = sv("rect", Object.assign(attrs, { fill: "#e2701a", rx: 1.5, class: "door", "data-room": room }));
      door.appendChild(sv("title", {}, "door of the " + room));
      marks.appendChild(door);
    }
    // staircase with the envelope
    let r0 = 99, c0 = 99, r1 = -1, c1 = -1;
    B.grid.forEach((line, r) => [...line].forEach((ch, c) => {
      if (ch === "X") { r0 = Math.min(r0, r); c0 = Math.min(c0, c); r1 = Math.max(r1, r); c1 = Math.max(c1, c); }
    }));
    const stairs = sv("g", { id: "staircase" });
    stairs.appendChild(sv("rect", { x: c0 * S, y: r0 * S, width: (c1 - c0 + 1) * S, height: (r1 - r0 + 1) * S,
      fill: "#96928c", stroke: "#422e24", "stroke-width": 3.5 }));
    for (let i = 1; i < (r1 - r0 + 1) * 2; i++) {
      const y = r0 * S + i * S / 2;
      stairs.appendChild(sv("line", { x1: c0 * S + 3, x2: (c1 + 1) * S - 3, y1: y, y2: y, stroke: "#aaa6a0" }));
    }
    const cx = (c0 + c1 + 1) * S / 2, cy = (r0 + r1 + 1) * S / 2, ew = S * 2.6, eh = S * 1.7;
    stairs.appendChild(sv("rect", { x: cx - ew / 2, y: cy - eh / 2, width: ew, height: eh, fill: "#faf6e8",
      stroke: "#1e1c1a", "stroke-width": 2 }));
    stairs.appendChild(sv("path", { d: `M${cx - ew / 2} ${cy - eh / 2}L${cx} ${cy + eh * 0.1}L${cx + ew / 2} ${cy - eh / 2}`,
      fill: "none", stroke: "#1e1c1a", "stroke-width": 2 }));
    stairs.appendChild(sv("text", { x: cx, y: cy - eh / 2 - S * 0.45, "text-anchor": "middle", "font-size": 13,
      "font-weight": "bold", class: "board-label" }, "STAIRS"));
    const envLabel = sv("text", { x: cx, y: cy + eh / 2 + S * 0.65, "text-anchor": "middle", "font-size": 12,
      class: "board-label", id: "envelope-label" }, "envelope");
    stairs.appendChild(envLabel);
    marks.appendChild(stairs);
    // rooms: names, secret passages
    const names = layer("room-names");
    B.rooms.forEach((room, i) => {
      const cells = [];
      B.grid.forEach((line, r) => [...line].forEach((ch, c) => { if (roomAt(r, c) === i) cells.push([r, c]); }));
      const top = Math.min(...cells.map((x) => x[0]));
      const topCols = cells.filter((x) => x[0] === top).map((x) => x[1]);
      const [cr0, cc0, , cc1] = room.content;
      let lx = (Math.min(...topCols) + Math.max(...topCols) + 1) * S / 2;
      if (Math.max(...topCols) - Math.min(...topCols) < 4) lx = (cc0 + cc1 + 1) * S / 2;
      const ly = Math.min(top * S + S * 0.72, cr0 * S - 2 + (cr0 === top ? S * 0.72 : 0));
      names.appendChild(sv("text", { x: lx, y: Math.max(ly, top * S + S * 0.72), "text-anchor": "middle",
        "font-size": 14, "font-weight": "bold", fill: "#1e1c1a", class: "room-name", "data-room": room.name,
        "letter-spacing": "0.6" }, room.name.toUpperCase()));
      if (room.passage) {
        const corner = { Kitchen: [1, 0], Conservatory: [1, 23], Lounge: [24, 0], Study: [24, 23] }[room.name];
        const target = { Kitchen: [1, 0], Conservatory: [1, 23], Lounge: [24, 0], Study: [24, 23] }[room.passage];
        const [pr, pc] = corner;
        const m = S * 0.1;
        const g = sv("g", { class: "passage", "data-room": room.name, "data-to": room.passage });
        g.appendChild(sv("title", {}, "secret passage: " + room.name + " to " + room.passage));
        g.appendChild(sv("rect", { x: pc * S + m, y: pr * S + m, width: S - 2 * m, height: S - 2 * m, fill: "#46342a",
          rx: 2 }));
        for (let k = 1; k < 4; k++) {
          const q = m + k * (S - 2 * m) / 4;
          g.appendChild(sv("line", { x1: pc * S + q, x2: pc * S + q, y1: pr * S + m, y2: (pr + 1) * S - m,
            stroke: "#78604c" }));
        }
        const ux = Math.sign(target[1] - pc), uy = Math.sign(target[0] - pr);
        const ax = (pc + 0.5) * S, ay = (pr + 0.5) * S, k = S * 0.25;
        g.appendChild(sv("line", { x1: ax - ux * k, y1: ay - uy * k, x2: ax + ux * k, y2: ay + uy * k, stroke: "#fff",
          "stroke-width": 2.2 }));
        const tx = ax + ux * S * 0.3, ty = ay + uy * S * 0.3;
        g.appendChild(sv("path", { d: `M${tx} ${ty}L${tx - ux * S * 0.22} ${ty}L${tx} ${ty - uy * S * 0.22}Z`,
          fill: "#fff" }));
        marks.appendChild(g);
      }
    });
    // weapons and tokens (positions set per step)
    const wl = layer("weapons");
    D.weapons.forEach((w) => {
      const label = D.weapon_short[w] || w;
      const width = label.length * 6.6 + 12;
      const g = sv("g", { class: "weapon", id: "weapon-" + w.replace(/ /g, "-"), "data-weapon": w, "data-room": "" });
      g.appendChild(sv("rect", { x: -width / 2, y: -8.5, width: width, height: 17, rx: 5, fill: "#fffcf4",
        stroke: "#422e24", "stroke-width": 1 }));
      g.appendChild(sv("text", { x: 0, y: 4.2, "text-anchor": "middle", "font-size": 11.5, fill: "#1e1c1a" }, label));
      g.appendChild(sv("title", {}, w));
      g._w = width;
      weaponEls[w] = g;
      wl.appendChild(g);
    });
    const tl = layer("tokens");
    D.suspects.forEach((s, i) => {
      const g = sv("g", { class: "token", id: "token-" + s, "data-suspect": s, "data-location": "" });
      g.appendChild(sv("circle", { class: "halo", r: S * 0.5, fill: "#fff", stroke: "#1e1c1a", "stroke-width": 3,
        visibility: "hidden" }));
      g.appendChild(sv("circle", { r: S * 0.38, fill: D.colors[s], stroke: "#1e1c1a",
        "stroke-width": s === "White" ? 2.5 : 1.5 }));
      g.appendChild(sv("text", { x: 0, y: 4.6, "text-anchor": "middle", "font-size": 13, "font-weight": "bold",
        fill: s === "White" || s === "Mustard" ? "#1e1c1a" : "#fff" }, LETTER[s]));
      g.appendChild(sv("path", { class: "cross", d: `M${-S * 0.3} ${-S * 0.3}L${S * 0.3} ${S * 0.3}M${-S * 0.3} ${S * 0.3}L${S * 0.3} ${-S * 0.3}`,
        stroke: "#1e1c1a", "stroke-width": 2.5, visibility: "hidden" }));
      const title = sv("title", {}, seatName(i) + (i < P ? "" : " (not playing)"));
      g.appendChild(title);
      if (i >= P) g.setAttribute("opacity", "0.8");
      tokenEls[s] = g;
      tl.appendChild(g);
    });
  }
  function edge(r, c, side) {
    const x0 = c * S, y0 = r * S, x1 = (c + 1) * S, y1 = (r + 1) * S;
    return { N: [x0, y0, x1, y0], S: [x0, y1, x1, y1], W: [x0, y0, x0, y1], E: [x1, y0, x1, y1] }[side];
  }
  function hex(c) { return [1, 3, 5].map((i) => parseInt(c.slice(i, i + 2), 16)); }
  function rgb(a) { return "rgb(" + a.map((v) => Math.round(v)).join(",") + ")"; }
  function mix(a, b, t) { const x = hex(a), y = hex(b); return rgb(x.map((v, i) => v * (1 - t) + y[i] * t)); }
  function shade(a, t) { return rgb(hex(a).map((v) => v * t)); }

  function placePieces(fr) {
    if (!D.board) return;
    const inRoom = {};
    D.board.rooms.forEach((r) => { inRoom[r.name] = { tokens: [], weapons: [] }; });
    D.suspects.forEach((s, i) => {
      const loc = fr.s[i];
      const g = tokenEls[s];
      g.setAttribute("data-location", loc);
      if (loc in inRoom) inRoom[loc].tokens.push(s);
      else {
        const [r, c] = loc.split(",").map(Number);
        g.style.transform = `translate(${(c + 0.5) * S}px, ${(r + 0.5) * S}px)`;
      }
      const seat = i;
      const current = seat < P && fr.ph !== "over" && seat === fr.cur;
      g.querySelector(".halo").setAttribute("visibility", current ? "visible" : "hidden");
      g.querySelector(".cross").setAttribute("visibility", seat < P && fr.elim[seat] ? "visible" : "hidden");
      g.classList.toggle("current", current);
    });
    D.weapons.forEach((w, i) => {
      weaponEls[w].setAttribute("data-room", fr.w[i]);
      inRoom[fr.w[i]].weapons.push(w);
    });
    D.board.rooms.forEach((room) => {
      const [r0, c0, r1, c1] = room.content;
      const x0 = c0 * S + 4, x1 = (c1 + 1) * S - 4, width = x1 - x0;
      const top = r0 * S + 2, height = (r1 - r0 + 1) * S - 4;
      const { tokens, weapons } = inRoom[room.name];
      const step = S * 0.9;
      const perRow = Math.max(1, Math.floor(width / step));
      const tokenRows = [];
      for (let k = 0; k < tokens.length; k += perRow) tokenRows.push(tokens.slice(k, k + perRow));
      const chipRows = [];
      let line = [], lw = 0;
      for (const w of weapons) {
        const cw = weaponEls[w]._w;
        if (line.length && lw + 4 + cw > width) { chipRows.push([line, lw]); line = []; lw = 0; }
        lw += (line.length ? 4 : 0) + cw;
        line.push(w);
      }
      if (line.length) chipRows.push([line, lw]);
      const total = tokenRows.length * step + chipRows.length * 20 + (tokenRows.length && chipRows.length ? 4 : 0);
      let y = top + Math.max(0, (height - total) / 2);
      for (const row of tokenRows) {
        let x = (x0 + x1) / 2 - (row.length * step) / 2 + step / 2;
        for (const s of row) {
          tokenEls[s].style.transform = `translate(${x}px, ${y + step / 2}px)`;
          x += step;
        }
        y += step;
      }
      if (tokenRows.length) y += 4;
      for (const [row, rw] of chipRows) {
        let x = (x0 + x1) / 2 - rw / 2;
        for (const w of row) {
          const cw = weaponEls[w]._w;
          weaponEls[w].setAttribute("transform", `translate(${x + cw / 2}, ${y + 10})`);
          x += cw + 4;
        }
        y += 20;
      }
    });
  }

  // ------------------------------------------------------------------ panel
  function viewerSeat() {
    const v = $("seat-select").value;
    return v === "" ? null : Number(v);
  }
  function notebookOf(fr, seat) { return seat === null ? null : D.notebooks[fr.nb[seat]]; }

  function render() {
    const fr = F[step];
    document.body.dataset.step = String(step);
    const counter = $("step-counter");
    counter.dataset.step = String(step);
    counter.dataset.steps = String(F.length - 1);
    counter.textContent = "Step " + step + " / " + (F.length - 1);
    $("scrubber").value = String(step);
    $("btn-first").disabled = $("btn-back").disabled = step === 0;
    $("btn-forward").disabled = $("btn-last").disabled = step === F.length - 1;
    placePieces(fr);
    // the action that led here
    const act = $("action");
    act.replaceChildren();
    if (fr.act) {
      act.appendChild(el("span", { class: "muted" }, "Step " + step + ": "));
      act.appendChild(el("span", { class: "who" }, seatName(fr.act.player) + " "));
      let name = fr.act.name;
      if (fr.act.roll !== undefined && fr.act.roll !== null && /^ROLL/.test(name)) name = "ROLL: rolled " + fr.act.roll;
      act.appendChild(el("span", { class: "what", id: "action-name" }, name));
    } else {
      act.appendChild(el("span", { class: "muted" }, "Initial position: tokens on their start squares, cards dealt."));
    }
    // status
    const dice = $("dice");
    dice.textContent = fr.roll ? String(fr.roll) : "\u2013";
    dice.className = fr.roll ? "" : "none";
    dice.dataset.roll = String(fr.roll || 0);
    dice.hidden = !D.board;  // no dice in the card-only game
    const st = $("status-text");
    st.replaceChildren();
    st.appendChild(el("div", {}, "Turn " + (fr.turn + (fr.ph === "over" ? 0 : 1)) +
      (D.rules.max_turns ? " (limit " + D.rules.max_turns + ")" : "")));
    if (fr.ph !== "over") {
      const who = el("div", { id: "to-play", "data-seat": fr.cur });
      who.appendChild(document.createTextNode("To play: "));
      who.appendChild(el("b", {}, seatName(fr.cur)));
      who.appendChild(document.createTextNode(" \u00b7 phase "));
      who.appendChild(el("span", { class: "phase", id: "phase", "data-phase": fr.ph }, fr.ph));
      st.appendChild(who);
      let help = PHASE_HELP[fr.ph] || "";
      if (fr.ph === "refute" && fr.ref !== null) help = seatName(fr.ref) + " must show a card";
      st.appendChild(el("div", { class: "muted" }, help));
    } else {
      st.appendChild(el("div", {}, "")).appendChild(el("span", { class: "phase", id: "phase", "data-phase": "over" }, "game over"));
    }
    // result at the end
    const res = $("result");
    if (fr.ph === "over") {
      res.hidden = false;
      const R = D.result;
      let text;
      if (R.winner !== null && R.winner !== undefined) {
        text = seatName(R.winner) + " wins";
        if (R.solution) text += ": " + R.solution.join(", ");
      } else if (R.truncated) text = "Game cut at the turn limit: no winner";
      else text = "Everyone was eliminated: no winner";
      res.textContent = text;
      $("envelope-label") && ($("envelope-label").textContent = R.solution ? R.solution.join(" \u00b7 ") : "envelope");
    } else {
      res.hidden = true;
      $("envelope-label") && ($("envelope-label").textContent = "envelope");
    }
    // players
    const pl = $("players");
    pl.replaceChildren();
    for (let p = 0; p < P; p++) {
      const li = el("li", { "data-seat": p });
      const dot = el("span", { class: "dot" });
      dot.style.background = D.colors[D.suspects[p]];
      li.appendChild(dot);
      li.appendChild(el("span", {}, seatName(p)));
      const tags = [fr.cards[p] + " cards"];
      if (fr.drag[p]) tags.push("dragged");
      if (fr.win === p) tags.push("winner");
      li.appendChild(el("span", { class: "tags" }, tags.join(", ")));
      if (fr.ph !== "over" && p === fr.cur) li.classList.add("current");
      if (fr.elim[p]) { li.classList.add("out"); li.title = "eliminated (wrong accusation)"; }
      pl.appendChild(li);
    }
    renderHistory(fr);
    renderNotebook(fr);
    for (const hook of renderHooks) hook(fr, step);
  }

  function renderHistory(fr) {
    const seat = viewerSeat();
    const nb = notebookOf(fr, seat);
    const privateCard = {};  // history index -> refuter -> card, for this seat only
    if (nb) {
      for (const [card, by, idx] of nb.seen) if (idx !== null) (privateCard[idx] = privateCard[idx] || {})[by] = card;
      for (const [card, , idx] of nb.showed) if (idx !== null) (privateCard[idx] = privateCard[idx] || {})[seat] = card;
    }
    const ol = $("history");
    ol.replaceChildren();
    $("history-count").textContent = fr.hn ? "(" + fr.hn + ")" : "";
    if (!fr.hn) { ol.appendChild(el("li", { class: "empty" }, "No suggestion yet.")); return; }
    for (let i = 0; i < fr.hn; i++) {
      const rec = i === fr.hn - 1 ? fr.last : D.history[i];
      const li = el("li", { class: "hist-item", "data-index": i, "data-type": rec.type, "data-player": rec.player });
      li.appendChild(el("span", { class: "idx" }, "#" + (i + 1)));
      li.appendChild(el("b", {}, D.suspects[rec.player]));
      if (rec.type === "accusation") {
        li.appendChild(document.createTextNode(" accused " + rec.cards.join(", ") + ": "));
        li.appendChild(el("span", { class: rec.correct ? "acc-right" : "acc-wrong" },
          rec.correct ? "correct!" : "wrong, eliminated"));
      } else {
        li.appendChild(document.createTextNode(" suggested " + rec.cards.join(", ") + ". "));
        const parts = [];
        if (rec.passed.length) parts.push(rec.passed.map((q) => D.suspects[q]).join(", ") + " passed");
        const pending = i === fr.hn - 1 && fr.ph === "refute";
        li.appendChild(document.createTextNode(parts.join("; ") + (parts.length ? "; " : "")));
        rec.refuted_by.forEach((q, k) => {
          const card = (privateCard[i] || {})[q];
          li.appendChild(document.createTextNode((k ? "; " : "") + D.suspects[q] + " showed "));
          if (card) li.appendChild(el("span", { class: "private", title: "only " + D.suspects[rec.player] + " and " +
            D.suspects[q] + " saw this" }, card));
          else li.appendChild(document.createTextNode("a card"));
        });
        if (pending) li.appendChild(document.createTextNode((rec.refuted_by.length ? "; " : "") +
          (fr.ref !== null ? D.suspects[fr.ref] + " to show a card\u2026" : "")));
        else if (!rec.refuted_by.length) li.appendChild(document.createTextNode("Nobody could refute."));
      }
      if (i === fr.hn - 1) li.classList.add("newest");
      ol.appendChild(li);
    }
    ol.scrollTop = ol.scrollHeight;
  }

  function renderNotebook(fr) {
    const seat = viewerSeat();
    const box = $("notebook");
    box.replaceChildren();
    box.dataset.seat = seat === null ? "" : String(seat);
    if (seat === null) {
      box.appendChild(el("div", { class: "spectator" },
        "Spectator: public information only. Choose a player to see their notebook at this step."));
      return;
    }
    const nb = notebookOf(fr, seat);
    const hand = el("div", { class: "nb-line nb-hand" });
    hand.appendChild(el("b", {}, "Own hand: "));
    for (const c of nb.hand) hand.appendChild(el("span", { class: "chip", "data-card": c }, c));
    box.appendChild(hand);
    const seen = el("div", { class: "nb-line nb-seen" });
    seen.appendChild(el("b", {}, "Shown to me: "));
    if (!nb.seen.length) seen.appendChild(el("span", { class: "muted" }, "nothing yet"));
    const seenOnce = new Map();  // (card, by) -> suggestion numbers: a card shown twice is listed once
    for (const [c, by, idx] of nb.seen) {
      const key = c + "|" + by;
      if (!seenOnce.has(key)) seenOnce.set(key, [c, by, []]);
      if (idx !== null) seenOnce.get(key)[2].push("#" + (idx + 1));
    }
    for (const [c, by, idxs] of seenOnce.values()) {
      seen.appendChild(el("span", { class: "chip", "data-card": c, "data-by": by,
        title: "suggestion " + idxs.join(", ") }, c + " by " + (by !== null ? D.suspects[by] : "?")));
    }
    box.appendChild(seen);
    const showed = el("div", { class: "nb-line nb-showed" });
    showed.appendChild(el("b", {}, "I showed: "));
    if (!nb.showed.length) showed.appendChild(el("span", { class: "muted" }, "nothing yet"));
    const showedOnce = new Set();
    for (const [c, to] of nb.showed) {
      if (showedOnce.has(c + "|" + to)) continue;
      showedOnce.add(c + "|" + to);
      showed.appendChild(el("span", { class: "chip", "data-card": c }, c + " to " + (to !== null ? D.suspects[to] : "?")));
    }
    box.appendChild(showed);
    if (nb.envelope) {
      const env = el("div", { class: "nb-line nb-envelope" });
      env.appendChild(el("b", {}, "Envelope (seen when accusing): "));
      for (const c of nb.envelope) env.appendChild(el("span", { class: "chip", "data-card": c }, c));
      box.appendChild(env);
    }
    const known = new Set(nb.out);
    const cols = el("div", { class: "nb-cols" });
    const cats = [["Suspects", D.cards.slice(0, 6)], ["Weapons", D.cards.slice(6, 12)], ["Rooms", D.cards.slice(12)]];
    const mark = { own: "\u25cf", seen: "\u2713", no: "\u00d7", "": "" };
    for (const [title, cards] of cats) {
      const left = cards.filter((c) => !known.has(c)).length;
      const t = el("table", { class: "nb", "data-category": title.toLowerCase() });
      const head = el("tr");
      head.appendChild(el("th", { style: "text-align:left" }, title + " (" + left + " left)"));
      for (let q = 0; q < P; q++) {
        const th = el("th", { title: seatName(q), class: q === seat ? "me" : "" }, LETTER[D.suspects[q]]);
        th.style.color = D.suspects[q] === "White" ? "#555" : D.colors[D.suspects[q]];
        head.appendChild(th);
      }
      t.appendChild(head);
      for (const c of cards) {
        const solution = nb.envelope && nb.envelope.includes(c);
        const cls = solution ? "solution" : known.has(c) ? "known" : left === 1 ? "candidate" : "";
        const tr = el("tr", { "data-card": c, class: cls });
        tr.appendChild(el("td", { class: "card" }, c));
        nb.grid[c].forEach((m, q) => {
          tr.appendChild(el("td", { class: "m-" + (m || "none"), "data-seat": q }, mark[m]));
        });
        t.appendChild(tr);
      }
      cols.appendChild(t);
    }
    box.appendChild(cols);
    box.appendChild(el("div", { class: "muted", style: "margin-top:4px" },
      "\u25cf my card \u00b7 \u2713 shown to me by that player \u00b7 \u00d7 cannot hold it (passed, or the card is " +
      "placed) \u00b7 struck through: not in the envelope"));
  }

  // ------------------------------------------------------------------ controls
  function go(n) {
    const next = Math.max(0, Math.min(F.length - 1, n));
    if (next === step && document.body.dataset.ready) return;
    step = next;
    render();
  }
  function togglePlay(on) {
    const play = on === undefined ? timer === null : on;
    if (timer !== null) { clearInterval(timer); timer = null; }
    if (play) {
      if (step === F.length - 1) go(0);
      timer = setInterval(() => { if (step >= F.length - 1) togglePlay(false); else go(step + 1); }, 350);
    }
    $("btn-play").classList.toggle("playing", timer !== null);
    $("btn-play").querySelector(".play-label").textContent = timer !== null ? "pause" : "play";
  }
  function init() {
    drawBoard();
    const sel = $("seat-select");
    sel.appendChild(el("option", { value: "" }, "spectator (public only)"));
    for (let p = 0; p < P; p++) sel.appendChild(el("option", { value: String(p) }, seatName(p) + " (seat " + p + ")"));
    const rules = D.rules || {};
    $("subtitle").textContent = [rules.preset || "classic", P + " players",
      D.seed !== null && D.seed !== undefined ? "seed " + D.seed : null,
      (F.length - 1) + " steps"].filter(Boolean).join(" \u00b7 ");
    $("scrubber").max = String(F.length - 1);
    const params = new URLSearchParams(location.hash.slice(1));
    const own = D.you !== undefined && D.you !== null ? String(D.you) : null;  // the play page's seat
    sel.value = own !== null ? own : params.has("seat") ? params.get("seat") : (P ? "0" : "");
    if (params.has("step")) step = Math.max(0, Math.min(F.length - 1, Number(params.get("step")) || 0));
    $("btn-first").onclick = () => { togglePlay(false); go(0); };
    $("btn-back").onclick = () => { togglePlay(false); go(step - 1); };
    $("btn-forward").onclick = () => { togglePlay(false); go(step + 1); };
    $("btn-last").onclick = () => { togglePlay(false); go(F.length - 1); };
    $("btn-play").onclick = () => togglePlay();
    $("scrubber").oninput = (e) => { togglePlay(false); go(Number(e.target.value)); };
    sel.onchange = () => { render(); sel.blur(); };
    document.addEventListener("keydown", (e) => {
      const tag = (e.target && e.target.tagName) || "";
      if (tag === "SELECT" || tag === "INPUT" || e.altKey || e.ctrlKey || e.metaKey) return;
      const keys = { ArrowRight: () => go(step + 1), ArrowLeft: () => go(step - 1), Home: () => go(0),
        End: () => go(F.length - 1), " ": () => togglePlay() };
      if (keys[e.key]) {
        if (e.key !== " ") togglePlay(false);
        keys[e.key]();
        e.preventDefault();
      }
    });
    render();
    document.body.dataset.ready = "1";
  }
  // The play page (viewer.play.js) drives the same drawing with data that grows as the game goes.
  window.CluedoViewer = {
    data: () => D,
    step: () => step,
    go: (n) => { togglePlay(false); go(n); },
    onRender: (fn) => renderHooks.push(fn),
    load: (data, at) => {
      D = data; F = D.frames; P = D.num_players;
      $("scrubber").max = String(F.length - 1);
      step = Math.max(0, Math.min(F.length - 1, at));
      render();
    },
  };
  init();
})();
