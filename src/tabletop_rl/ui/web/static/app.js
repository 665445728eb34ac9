// tabletop web: the page. Every position arrives from the server already drawn for one viewer (board data and
// text); this file only lays it out. One drawing function per game in BOARDS; a game without one shows its text.
"use strict";

const $ = (id) => document.getElementById(id);
const COLOURS = ["white", "blue", "green", "red", "black", "gold"];
const SUIT_SIGNS = { C: "\u2663", D: "\u2666", H: "\u2665", S: "\u2660" };
const SEAT_NAMES = "NESW";

/** An element with attributes (class, dataset via data-*, on* handlers) and children (nodes or text). */
function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? "" : value);
  }
  for (const child of children.flat(Infinity)) {
    if (child !== null && child !== undefined) node.append(child instanceof Node ? child : String(child));
  }
  return node;
}

/** Replace the children of `node` with `children` (nodes, text, or arrays of them). */
function fill(node, ...children) {
  node.replaceChildren(...children.flat(Infinity).filter((c) => c !== null && c !== undefined));
}

/** JSON from the server; a refusal is thrown as an Error carrying the server's one-line reason. */
async function api(path, body) {
  const options = body === undefined ? {} : {
    method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) };
  const response = await fetch(path, options);
  let data;
  try { data = await response.json(); } catch (e) { data = { error: `${response.status} ${response.statusText}` }; }
  if (!response.ok) throw new Error(data.error || `${response.status} ${response.statusText}`);
  return data;
}

function showError(message) {
  const box = $("error");
  box.textContent = message;
  box.hidden = !message;
}

/** Run an async action, showing its error in words instead of failing silently. */
async function guarded(action) {
  try { showError(""); await action(); } catch (e) { showError(e.message); }
}

// --- tabs ---------------------------------------------------------------------------------------------
const state = { info: null, game: null, ply: 0, viewer: "spectator", play: null, picked: [], orders: [], origin: null, ships: "" };

function showTab(name) {
  for (const id of ["games", "viewer", "summary", "play"]) $(id).hidden = id !== name;
  for (const tab of document.querySelectorAll(".tab")) {
    tab.classList.toggle("active", tab.dataset.tab === name || (name === "viewer" && tab.dataset.tab === "games"));
  }
  if (name === "summary") guarded(loadSummary);
  if (name === "play") guarded(loadSaves);
}

// --- the list of games ------------------------------------------------------------------------------------
async function loadGames() {
  const rows = await api("/api/games");
  const table = $("game-list");
  fill(table, el("tr", {}, ["game", "seats", "result", "scores", "length", ""].map((h) => el("th", {}, h))));
  for (const row of rows) {
    const seats = row.labels.map((label, p) => el("span", { class: `seat p${p}` }, `P${p} ${label}`));
    table.append(el("tr", { class: "clickable", "data-index": row.index, onclick: () => guarded(() => openGame(row.index)) },
      el("td", {}, el("a", { href: link(row.index, 0), title: "the address of this game", onclick: (e) => e.stopPropagation() },
        `#${row.index}`)),
      el("td", {}, seats), el("td", {}, row.result),
      el("td", {}, row.scores.join(" : ")), el("td", {}, row.plies), el("td", {}, row.llm ? "LLM notes" : "")));
  }
}

// --- the viewer ---------------------------------------------------------------------------------------------
/** The address of game `index` at move `ply` as `viewer` sees it: opening it shows that position, no clicks needed. */
function link(index, ply, viewer = "spectator") {
  return `#game=${index}&move=${ply}${viewer === "spectator" ? "" : `&viewer=${viewer}`}`;
}

/** Open what the address names (`#game=3&move=12&viewer=1`); true when it names a game. */
async function openLinked() {
  const named = new URLSearchParams(location.hash.slice(1));
  if (!named.has("game")) return false;
  const index = Number(named.get("game"));
  if (!state.game || state.game.index !== index || $("viewer").hidden) await openGame(index, named.get("viewer") || "spectator");
  else state.viewer = named.get("viewer") || "spectator";
  $("viewer-select").value = state.viewer;
  await showPly(named.has("move") ? named.get("move") : 0);
  return true;
}

async function openGame(index, viewer = "spectator") {
  state.viewer = viewer;
  state.ply = 0;
  await loadGame(index);
  const select = $("viewer-select");
  fill(select, el("option", { value: "spectator" }, "spectator"),
    state.game.labels.map((label, p) => el("option", { value: String(p) }, `P${p} ${label}`)));
  select.value = viewer;
  showTab("viewer");
  await showPly(0);
}

async function loadGame(index) {
  state.game = await api(`/api/games/${index}`);
  const g = state.game;
  $("viewer-title").textContent = `game #${g.index}: ${g.labels.map((l, p) => `P${p} ${l}`).join(" vs ")} (${g.result})`;
  $("ply").max = g.last;
  $("ply-slider").max = g.last;
  $("ply-last").textContent = `/ ${g.last} ${g.unit}s`;
}

/** The moves up to the position shown (the server sends no later ones), each clickable to go back to it and with a
 * link to it; at the end of a forfeited game, the forfeit. */
function drawMoveList(moves, forfeit) {
  const list = $("move-list");
  const item = (ply, ...children) => el("li", { value: ply, "data-ply": ply, class: "clickable", onclick: () => guarded(() => showPly(ply)) },
    el("a", { class: "link", href: link(state.game.index, ply, state.viewer), title: "the address of this position",
      onclick: (e) => e.stopPropagation() }, "link"), children);
  fill(list, item(0, "start"));
  moves.forEach((entries, k) => {
    const entry = item(k + 1);
    if (!entries.length) entry.append(el("span", { class: "small" }, "(hidden orders)"));
    for (const m of entries) {
      const who = m.seat === m.player ? `P${m.player}` : `P${m.player} seat ${m.seat}`;  // a partnership's seat
      entry.append(el("div", {}, el("span", { class: `seat p${m.player}` }, who), ` ${m.move}`));
      if (m.note) entry.append(noteBlock(m.note));
    }
    list.append(entry);
  });
  if (forfeit) {
    list.lastChild.append(el("div", { class: "forfeited" }, el("span", { class: `seat p${forfeit.player}` }, `P${forfeit.player}`),
      ` forfeits${forfeit.reason ? `: ${forfeit.reason}` : ""}`), forfeit.note ? noteBlock(forfeit.note) : null);
  }
}

/** What a forfeit says where the result goes. */
function forfeitText(forfeit) {
  return `P${forfeit.player} forfeits${forfeit.reason ? `: ${forfeit.reason}` : ""}`;
}

/** An LLM move's accounting: source (and why a fallback or forfeit was not the model's move), calls, unusable replies,
 * tokens, cost, the decision's time (its failed calls and waits included) and its calls', the reasoning, and each
 * rejected reply with its reason and text (a record from before them has only the reasons, `errors`). */
function noteBlock(note) {
  const facts = [note.source, `${note.attempts} call(s)`];
  if (note.illegal_replies) facts.push(`${note.illegal_replies} illegal repl${note.illegal_replies > 1 ? "ies" : "y"}`);
  if (note.parse_failures) facts.push(`${note.parse_failures} unparsable`);
  if (note.truncated) facts.push(`${note.truncated} cut off`);
  if (note.tool_calls !== undefined) facts.push(`${note.tool_calls} tool call(s)`);
  facts.push(`${note.prompt_tokens}+${note.completion_tokens} tokens`);
  if (note.cached_tokens) facts.push(`${note.cached_tokens} cached`);
  if (note.cost !== null && note.cost !== undefined) facts.push(`$${Number(note.cost).toFixed(5)}`);
  if (note.time_s !== undefined) facts.push(`${Number(note.time_s).toFixed(2)} s (calls ${Number(note.latency_s).toFixed(2)} s)`);
  else if (note.latency_s !== undefined) facts.push(`${Number(note.latency_s).toFixed(2)} s`);
  const unusual = note.source === "fallback" || note.source === "forfeit";
  return el("div", { class: `note${unusual ? ` ${note.source}` : ""}` }, el("div", { class: "small" }, facts.join(" \u00b7 ")),
    note.fallback_reason ? el("div", { class: "why" }, `${note.source}: ${note.fallback_reason}`) : null,
    note.reasoning ? el("div", { class: "reasoning" }, note.reasoning) : null,
    (note.rejected || []).map((r) => el("div", { class: "rejected" }, `rejected (${r.kind}): ${r.reason}`,
      el("pre", { class: "reply" }, r.reply || "(empty reply)"))),
    (note.errors || []).map((e) => el("div", { class: "rejected" }, `rejected: ${e}`)));
}

async function showPly(ply) {
  const g = state.game;
  ply = Math.max(0, Math.min(g.last, Number(ply)));
  const view = await api(`/api/games/${g.index}/plies/${ply}?viewer=${state.viewer}`);
  state.ply = ply;
  $("ply").value = ply;
  $("ply-slider").value = ply;
  drawBoard($("board"), view, null);
  $("text-board").textContent = view.text;
  const ending = view.forfeit ? forfeitText(view.forfeit) : view.result || (g.error ? `crashed: ${g.error}` : "");
  $("result").textContent = ply === g.last ? ending : "";
  drawMoveList(view.moves, view.forfeit);
  $("move-list").lastChild.classList.add("current");
  $("move-list").lastChild.scrollIntoView({ block: "nearest" });
  history.replaceState(null, "", link(g.index, ply, state.viewer));  // the address is this position's link
}

async function changeViewer(viewer) {
  state.viewer = viewer;
  await showPly(state.ply);
}

// --- boards -------------------------------------------------------------------------------------------
/** Draw a position into `target`; `play` (null in replays) holds the click handlers of the person's turn. */
function drawBoard(target, view, play) {
  const draw = view.board && BOARDS[view.board.game];
  fill(target, draw ? draw(view.board, play) : el("pre", {}, view.text));
}

function token(colour, count, attrs = {}) {
  return el("span", { class: `token ${colour}`, title: `${count} ${colour}`, ...attrs }, count);
}

function costs(cost) {
  return el("div", { class: "cost" }, Object.entries(cost).map(([c, n]) => el("span", { class: `pip ${c}` }, n)));
}

function splendorCard(card, moves) {
  const node = el("div", { class: `card ${card.bonus}`, title: `card #${card.id}` },
    el("div", { class: "card-top" }, el("span", { class: "points" }, card.points || ""), el("span", { class: `gem ${card.bonus}` })),
    costs(card.cost), el("span", { class: "card-id" }, `#${card.id}`));
  if (moves) node.append(el("div", { class: "card-actions" }, moves));
  return node;
}

/** A button playing `move`, only where the server lists it as legal (no "buy" on a card the player cannot afford). */
function moveButton(play, move, label) {
  if (!play.legal.has(move)) return null;
  return el("button", { class: "move", "data-move": move, onclick: (e) => { e.stopPropagation(); play.send(move); } }, label);
}

function drawSplendor(b, play) {
  const mine = play && play.seat;
  const bank = el("div", { class: "bank" }, el("h4", {}, "Bank"), COLOURS.map((c) => token(c, b.bank[c],
    play && c !== "gold" ? { class: `token ${c} pickable`, "data-colour": c, onclick: () => play.pick(c) } : {})));
  if (play && play.picked.length) {
    bank.append(el("div", { class: "picked" }, "take: ", play.picked.map((c) => token(c, "")),
      el("button", { id: "take", onclick: () => play.send(play.takeMove()) }, "Take"),
      el("button", { onclick: () => play.pick(null) }, "Clear")));
  }
  const nobles = el("div", { class: "nobles" }, el("h4", {}, "Nobles"), b.nobles.map((n, i) => el("div",
    { class: "noble", title: `noble ${n.id}`, ...(play && play.legal.has(`noble:${i}`)
      ? { "data-move": `noble:${i}`, onclick: () => play.send(`noble:${i}`) } : {}) },
    el("span", { class: "points" }, n.points), el("div", { class: "cost" },
      Object.entries(n.needs).map(([c, k]) => el("span", { class: `bonus ${c}` }, k))))));
  const market = el("div", { class: "market" }, b.market.map((row) => el("div", { class: "market-row" },
    el("div", { class: `deck level${row.level}` }, el("strong", {}, `Level ${row.level}`), el("span", {}, `${row.deck} cards`),
      play ? moveButton(play, `reserve_deck:${row.level}`, "reserve") : null),
    row.cards.map((card, slot) => card ? splendorCard(card, play ? [moveButton(play, `buy:${row.level}.${slot}`, "buy"),
      moveButton(play, `reserve:${row.level}.${slot}`, "reserve")] : null) : el("div", { class: "card empty" }, "empty")))));
  const players = el("div", { class: "players" }, b.players.map((p) => splendorPlayer(b, p, play && p.seat === mine ? play : null)));
  return el("div", { class: "splendor" }, el("div", { class: "status" }, `ply ${b.ply} \u00b7 ${b.status}${b.final_round ? " \u00b7 final round" : ""}`),
    el("div", { class: "table-top" }, market, el("div", { class: "side" }, bank, nobles)), players);
}

function splendorPlayer(b, p, play) {
  const held = COLOURS.reduce((sum, c) => sum + p.tokens[c], 0);
  return el("div", { class: `player${b.to_act === p.seat ? " to-act" : ""}${b.viewer === p.seat ? " me" : ""}`, "data-seat": p.seat },
    el("div", { class: "player-head" }, el("span", { class: `seat p${p.seat}` }, `P${p.seat}`),
      el("span", { class: "score" }, `${p.points} pts`), el("span", { class: "small" }, `${p.cards} cards \u00b7 ${held} tokens \u00b7 nobles ${p.nobles.length}`)),
    el("div", { class: "row" }, el("span", { class: "label" }, "tokens"), COLOURS.map((c) => token(c, p.tokens[c],
      play && play.legal.has(`return:${c}`) ? { class: `token ${c} pickable`, "data-move": `return:${c}`, onclick: () => play.send(`return:${c}`) } : {}))),
    el("div", { class: "row" }, el("span", { class: "label" }, "bonuses"), COLOURS.slice(0, 5).map((c) => el("span", { class: `bonus ${c}` }, p.bonuses[c]))),
    el("div", { class: "row reserved" }, el("span", { class: "label" }, "reserved"), p.reserved.length ? p.reserved.map((card, i) => card.hidden
      ? el("div", { class: `card back level${card.level}`, title: "a blind reserve: hidden from this view" }, `L${card.level}`)
      : splendorCard(card, play ? [moveButton(play, `buy_reserved:${i}`, "buy")] : null)) : el("span", { class: "small" }, "none")));
}

function playingCard(name, attrs = {}) {
  const suit = name.slice(-1);
  return el("span", { class: `pcard suit-${suit}`, title: name, ...attrs }, name.slice(0, -1), SUIT_SIGNS[suit]);
}

function drawKlaverjas(b, play) {
  const facts = [b.deal, `rules ${b.rules}`, `phase ${b.phase}`, `match N-S ${b.match[0]} : E-W ${b.match[1]}`];
  if (b.trump) facts.push(`trump ${SUIT_SIGNS[b.trump]} by ${SEAT_NAMES[b.maker]}${b.multiplier > 1 ? ` x${b.multiplier}` : ""}`,
    `tricks ${b.tricks_won.join(" : ")}`, `points N-S ${b.points[0].join("+")} \u00b7 E-W ${b.points[1].join("+")}`);
  else if (b.proposed) facts.push(`proposed ${SUIT_SIGNS[b.proposed]}`);
  const current = b.tricks.length && b.tricks[b.tricks.length - 1].winner === null ? b.tricks[b.tricks.length - 1] : null;
  const seat = (h) => el("div", { class: `kseat pos-${h.name}${b.to_act === h.seat ? " to-act" : ""}`, "data-seat": h.seat },
    el("div", { class: "small" }, `${h.name} (${h.team})${b.to_act === h.seat ? " \u2190 to act" : ""}`),
    el("div", { class: "hand" }, h.cards ? h.cards.map((c) => playingCard(c, play && h.seat === play.actingSeat
      ? { class: `pcard suit-${c.slice(-1)} pickable`, "data-move": c, onclick: () => play.send(c) } : {}))
      : Array.from({ length: h.count }, () => el("span", { class: "pcard back" }))));
  const trick = el("div", { class: "ktrick" }, current ? current.plays.map((p) => el("div", { class: `played pos-${SEAT_NAMES[p.seat]}` },
    playingCard(p.card))) : el("span", { class: "small" }, "no cards on the table"));
  const done = b.tricks.filter((t) => t.winner !== null).map((t) => el("li", {}, `trick ${t.number}: `,
    t.plays.map((p) => [`${SEAT_NAMES[p.seat]} `, playingCard(p.card), " "]), `\u2192 ${SEAT_NAMES[t.winner]}`));
  return el("div", { class: "klaverjas" }, el("div", { class: "status" }, facts.join(" \u00b7 ")),
    el("div", { class: "ktable" }, b.hands.map(seat), trick), done.length ? el("ol", { class: "tricks" }, done) : null);
}

function drawSpaceConquest(b, play) {
  const [w, h] = b.grid;
  const cell = 48;
  const svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
  svg.setAttribute("viewBox", `-14 0 ${w * cell + 28} ${h * cell + 10}`);
  svg.setAttribute("class", "map");
  const add = (tag, attrs, text) => {
    const node = document.createElementNS("http://www.w3.org/2000/svg", tag);
    for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
    if (text !== undefined) node.textContent = text;
    svg.append(node);
    return node;
  };
  const at = {};
  for (const s of b.stars) at[s.letter] = [s.x * cell + cell / 2, s.y * cell + cell / 2];
  for (const f of b.fleets) {
    const [x1, y1] = at[f.from], [x2, y2] = at[f.to];
    add("line", { x1, y1, x2, y2, class: `fleet ${f.owner === undefined ? "you" : `p${f.owner}`}` });
    add("text", { x: (x1 + x2) / 2, y: (y1 + y2) / 2 - 3, class: "fleet-label" }, `${f.ships} (${f.turns_left})`);
  }
  for (const s of b.stars) {
    const [x, y] = at[s.letter];
    const home = s.home_of !== undefined ? s.home_of !== null : s.is_your_home;
    const chosen = play && play.origin === s.letter ? " origin" : "";
    const star = add("circle", { cx: x, cy: y, r: home ? 17 : 13, class: `star ${s.owner}${chosen}`, "data-star": s.letter });
    if (play) star.addEventListener("click", () => play.star(s));
    add("text", { x, y: y + 4, class: "star-letter" }, s.letter);
    add("text", { x, y: y + 27, class: "star-info" }, `${s.ru === null ? "?" : s.ru} \u00b7 ${s.ships === null ? "?" : s.ships}`);
  }
  const lines = [...b.events, ...b.errors.map((e) => `order error: ${e}`)];
  const totals = b.totals ? b.totals.map((t, p) => `P${p}: RU ${t.ru}, ships ${t.ships}, fleets ${t.fleets}`).join(" \u00b7 ") : "";
  return el("div", { class: "space" }, el("div", { class: "status" }, `turn ${b.turn}/${b.max_turns}${b.over ? " \u00b7 over" : ""} \u00b7 under each star: RU \u00b7 ships (? unknown) ${totals}`),
    el("div", { class: "space-main" }, svg, el("div", {}, play ? ordersPanel(play) : null,
      lines.length ? el("ul", { class: "events" }, lines.map((line) => el("li", {}, line))) : null)));
}

/** The orders of this turn being written: click one of your stars, then a destination; End turn sends them. */
function ordersPanel(play) {
  return el("div", { class: "orders" }, el("h4", {}, "Your orders this turn"),
    el("div", { class: "small" }, play.origin ? `from ${play.origin}: click a destination` : "click one of your stars, then a destination"),
    el("label", { class: "small" }, "ships per order ", el("input", { id: "order-ships", type: "number", min: "1", placeholder: "all",
      value: play.ships || null, onchange: (e) => { state.ships = e.target.value; } })),
    el("ol", { id: "order-list" }, play.orders.map((o, i) => el("li", {}, `${o.from} \u2192 ${o.to}: ${o.ships} `,
      el("button", { onclick: () => play.drop(i) }, "\u2715")))),
    el("button", { id: "end-turn", onclick: () => play.send(JSON.stringify({ moves: play.orders })) }, "End turn"),
    el("button", { onclick: () => play.drop(null) }, "Clear"));
}

/** What a click on star `s` does while writing orders: choose it as the origin, or send ships to it. */
function orderClick(view, s) {
  const stars = Object.fromEntries(view.board.stars.map((star) => [star.letter, star]));
  if (!state.origin || state.origin === s.letter) {
    const mine = s.owner === "you" && s.ships > 0;
    state.origin = mine && state.origin !== s.letter ? s.letter : null;
    if (!mine) explain(`${s.letter}: choose one of your stars with ships first`);
  } else {
    const sent = state.orders.filter((o) => o.from === state.origin).reduce((n, o) => n + o.ships, 0);
    const left = stars[state.origin].ships - sent;
    const ships = Math.min(Number(state.ships) || left, left);
    if (ships > 0) state.orders.push({ from: state.origin, to: s.letter, ships });
    else explain(`${state.origin} has no ships left to send this turn`);
    state.origin = null;
  }
  showPlay(state.play, true);
}

const BOARDS = { splendor: drawSplendor, klaverjas: drawKlaverjas, space_conquest: drawSpaceConquest };

// --- the summary ----------------------------------------------------------------------------------------
const pct = (x) => (x === null || x === undefined ? "" : `${(100 * x).toFixed(0)}%`);
const num = (x, digits = 1) => (x === null || x === undefined ? "-" : Number(x).toFixed(digits));

async function loadSummary() {
  const s = await api("/api/summary");
  const label = (p) => (s.labels && s.labels[p]) || p;
  const ratings = s[s.headline_ratings || "ratings"];
  const matrix = el("table", { class: "grid matrix", id: "winrate-matrix" }, el("tr", {}, el("th", {}, "row beats column"), s.players.map((p) => el("th", {}, label(p)))),
    s.win_rate_matrix.map((row, i) => el("tr", {}, el("th", {}, label(s.players[i])), row.map((x) => el("td",
      { style: x === null ? "" : `background: hsl(${Math.round(120 * x)}, 60%, 82%)` }, x === null ? "\u2013" : pct(x))))));
  const rated = Object.entries(ratings.values).sort((a, b) => b[1].rating - a[1].rating);
  const ratingTable = el("table", { class: "grid", id: "ratings" }, el("tr", {}, ["policy", "rating", "95% interval"].map((h) => el("th", {}, h))),
    rated.map(([p, r]) => el("tr", {}, el("td", {}, label(p)), el("td", {}, num(r.rating, 0)),
      el("td", {}, r.interval_note ? r.interval_note : `${num(r.low, 0)} \u2013 ${num(r.high, 0)}`))));
  const policies = el("table", { class: "grid", id: "policies" }, el("tr", {}, ["policy", "games", "win share", "95% interval", "mean points",
    "ms/move", "nodes/move", "decisions", "crashes"].map((h) => el("th", {}, h))),
    Object.entries(s.policies).map(([p, x]) => el("tr", {}, el("td", {}, label(p)), el("td", {}, x.games), el("td", {}, pct(x.win_share)),
      el("td", {}, `${pct(x.ci_low)} \u2013 ${pct(x.ci_high)}`), el("td", {}, num(x.mean_points)), el("td", {}, num(x.time_per_move_ms, 3)),
      el("td", {}, num(x.nodes_per_move)), el("td", {}, x.decisions), el("td", {}, x.crashes))));
  const pairings = el("table", { class: "grid", id: "pairings" }, el("tr", {}, ["pairing", "games", "win rate of first", "95% interval", "mean points", "mean length"].map((h) => el("th", {}, h))),
    s.pairings.map((x) => el("tr", {}, el("td", {}, `${label(x.a)} vs ${label(x.b)}`), el("td", {}, x.games), el("td", {}, pct(x.win_rate)),
      el("td", {}, `${pct(x.ci_low)} \u2013 ${pct(x.ci_high)}`), el("td", {}, `${num(x.mean_points_a)} : ${num(x.mean_points_b)}`), el("td", {}, num(x.mean_plies)))));
  fill($("summary"), el("p", {}, `${s.game}: ${s.games} games, ${s.num_players} players, ${s.crashed} crashed, ${s.truncated} truncated. ${s.scoring}`),
    el("h3", {}, "Win rates"), matrix, el("h3", {}, `Ratings: ${ratings.method || "none"}`),
    el("p", { class: "small" }, `${ratings.detail || ""}; anchor ${ratings.anchor || "-"}`), ratingTable,
    el("h3", {}, "Policies"), policies, el("h3", {}, "Pairings"), pairings);
}

// --- play -------------------------------------------------------------------------------------------------
async function loadSaves() {
  if (!state.info) return;
  const found = await api("/api/play/saves");
  fill($("saves"), el("span", { class: "small" }, `saved games in ${found.folder}: `),
    found.saves.length ? found.saves.map((s) => el("button", { class: "resume", "data-id": s.id, title: `${s.file}, saved ${s.saved}`,
      onclick: () => guarded(async () => showPlay(await api(`/api/play/saves/${encodeURIComponent(s.id)}/resume`, {}))) }, `resume ${s.id}`))
      : el("span", { class: "small" }, "none yet"));
}

function fillPlayForm() {
  const games = $("play-game");
  fill(games, state.info.playable.map((g) => el("option", { value: g, selected: g === "splendor" }, g)));
  const players = () => {
    fill($("play-players"), state.info.players[games.value].map((n) => el("option", { value: n }, n)));
    fillOpponents();
  };
  games.addEventListener("change", players);
  $("play-players").addEventListener("change", fillOpponents);
  players();
}

/** A menu per other player listing exactly the policies the server offers for the game (`/api/info`). */
function fillOpponents() {
  const offered = state.info.policies[$("play-game").value] || [];
  const others = Number($("play-players").value || 2) - 1;
  fill($("play-vs"), Array.from({ length: others }, (_, i) => el("select", { "data-opponent": i },
    offered.map((spec) => el("option", { value: spec }, spec)))));
}

async function startGame(event) {
  event.preventDefault();
  const body = { game: $("play-game").value, vs: Array.from($("play-vs").querySelectorAll("select"), (s) => s.value),
    seat: Number($("play-seat").value || 0), num_players: Number($("play-players").value || 2) };
  if ($("play-seed").value !== "") body.seed = Number($("play-seed").value);
  if ($("play-name").value.trim()) body.name = $("play-name").value.trim();
  showPlay(await api("/api/play", body));
  await loadSaves();
}

async function sendMove(move) {
  const id = state.play.id;
  try {
    const view = await api(`/api/play/${encodeURIComponent(id)}/move`, { move });
    state.picked = [];
    state.orders = [];
    state.origin = null;
    showPlay(view);
  } catch (e) {
    explain(e.message);  // the server's reason names the move and speaks to the person
  }
}

/** Say in words why a move was not played (the server's reason), under the board. */
function explain(text) {
  const box = $("play-explain");
  box.textContent = text;
  box.hidden = false;
}

/** Draw the person's game; `keepExplain` keeps the last explanation shown (a redraw while choosing a move). */
function showPlay(view, keepExplain = false) {
  state.play = view;
  $("play-area").hidden = false;
  if (!keepExplain) $("play-explain").hidden = true;
  const handlers = view.your_turn ? {
    seat: view.seat, actingSeat: view.acting_seat, picked: state.picked, send: (m) => sendMove(m),
    legal: new Set(view.legal.map((m) => m.move)),
    pick: (c) => { state.picked = c === null ? [] : [...state.picked, c].slice(-3); showPlay(state.play); },
    takeMove: () => (state.picked.length === 2 && state.picked[0] === state.picked[1]
      ? `take2:${state.picked[0]}` : `take:${state.picked.join(",")}`),
    origin: state.origin, orders: state.orders, ships: state.ships, star: (s) => orderClick(view, s),
    drop: (i) => { if (i === null) state.orders = []; else state.orders.splice(i, 1); showPlay(state.play, true); },
  } : null;
  drawBoard($("play-board"), view, handlers);
  $("play-title").textContent = `${view.game}: you are P${view.seat}; ${view.players.map((p, i) => `P${i} ${p}`).join(", ")}`;
  $("play-save").textContent = `saved after every move to ${view.save}`;
  $("play-result").textContent = view.result || (view.your_turn ? "your move" : "");
  $("legal-title").hidden = !view.legal.length;
  fill($("legal"), view.legal.map((m) => el("button", { class: "move", "data-move": m.move, onclick: () => sendMove(m.move) }, m.text)));
  fill($("play-log"), view.log.map((line) => el("li", {}, line)));
  $("play-log").lastChild?.scrollIntoView({ block: "nearest" });
}

// --- start ---------------------------------------------------------------------------------------------------
function wire() {
  for (const tab of document.querySelectorAll(".tab")) tab.addEventListener("click", () => showTab(tab.dataset.tab));
  $("back-to-list").addEventListener("click", () => { history.replaceState(null, "", location.pathname); showTab("games"); });
  $("first").addEventListener("click", () => guarded(() => showPly(0)));
  $("prev").addEventListener("click", () => guarded(() => showPly(state.ply - 1)));
  $("next").addEventListener("click", () => guarded(() => showPly(state.ply + 1)));
  $("last").addEventListener("click", () => guarded(() => showPly(state.game.last)));
  $("ply").addEventListener("change", (e) => guarded(() => showPly(e.target.value)));
  $("ply-slider").addEventListener("input", (e) => guarded(() => showPly(e.target.value)));
  $("viewer-select").addEventListener("change", (e) => guarded(() => changeViewer(e.target.value)));
  $("new-game").addEventListener("submit", (e) => guarded(() => startGame(e)));
  window.addEventListener("hashchange", () => guarded(openLinked));
  document.addEventListener("keydown", (e) => {
    if ($("viewer").hidden || e.target.tagName === "INPUT") return;
    if (e.key === "ArrowRight") guarded(() => showPly(state.ply + 1));
    if (e.key === "ArrowLeft") guarded(() => showPly(state.ply - 1));
  });
}

async function start() {
  wire();
  state.info = await api("/api/info");
  fillPlayForm();
  $("run-name").textContent = state.info.run || "no run open: play only";
  if (state.info.run) {
    await loadGames();
    showTab("games");
    await openLinked();
  } else {
    for (const id of ["tab-games", "tab-summary"]) $(id).disabled = true;
    showTab("play");
  }
}

guarded(start);
