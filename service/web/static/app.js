// The web table: loads a hand (a replay document, a transcript file, a stored hand by id, or a
// live table followed as a spectator), keeps the state after every event version, and draws
// it through the game's registered renderer (games/*.js). Nothing here knows a game's rules.
"use strict";
(function (FK) {
  const C = FK.cards;
  const el = C.el;
  const $ = (id) => document.getElementById(id);
  const REPLAY_FORMAT = "fiftyk-replay/1";
  const TRANSCRIPT_FORMAT = "fiftyk-transcript/1";
  const EVIDENCE_FORMAT = "fiftyk-evidence/1";  // docs/fairness.md: carries its transcript
  const BASE_STEP_MS = 1000;
  const AUDIT_HEADER = "X-Fiftyk-Audit-Key";
  const KEY_STORE = "fiftyk.auditKey";
  const TOKEN_STORE = "fiftyk.spectatorToken";

  const view = {
    doc: null,       // the replay document being shown
    game: null,      // its renderer
    states: [],      // states[i]: the hand right after events[i]
    index: 0,        // the event shown (0-based)
    perspective: "all",
    timer: null,
    speed: 1,
    live: null,      // {table, controller} while following a table
    follow: true,    // live: stay on the newest event
  };

  function payloadKey(event) { return event.name.replace(".", "_"); }
  // An event's payload: its 0.2 field where its game has one, else the game's own message
  // (`game_event`, with its `@type`).
  function payloadOf(event) { return event[payloadKey(event)] ?? event.game_event; }

  function status(text, kind) {
    const node = $("status");
    node.textContent = text;
    node.className = kind || "";
  }

  // -- loading --------------------------------------------------------------------------

  function show(doc, version) {
    const game = FK.games[doc.game];
    if (!game) throw new Error(`this page does not draw the game ${doc.game}`);
    if (!doc.events.length || doc.events[0].name !== game.dealtEvent) {
      throw new Error("the hand has no deal event");
    }
    stop();
    view.doc = doc;
    view.game = game;
    view.states = [];
    for (const event of doc.events) pushState(event);
    const wanted = version ? doc.events.findIndex((e) => Number(e.aggregate_version) === version) : -1;
    view.index = wanted >= 0 ? wanted : version ? doc.events.length - 1 : 0;
    $("game-title").textContent = `${game.title} — hand ${doc.hand_id || "(transcript)"}`;
    setupPerspectives();
    setupTricks();
    render();
    checkFairness();
    if (!document.body.classList.contains("loaded")) {
      // When the page first drew a hand, from the start of navigation (scripts/bench web).
      document.body.dataset.drawnAt = performance.now().toFixed(1);
    }
    document.body.classList.add("loaded");
  }

  function pushState(event) {
    const prev = view.states[view.states.length - 1];
    let state;
    if (!prev) state = view.game.start(payloadOf(event));
    else { state = structuredClone(prev); view.game.apply(state, event); }
    view.states.push(state);
  }

  async function loadFile(file) {
    let data;
    try { data = JSON.parse(await file.text()); } catch (err) {
      status(`${file.name} is not JSON: ${err.message}`, "error"); return;
    }
    await loadJson(data, file.name);
  }

  async function loadJson(data, what) {
    let signedBy = null;
    let cosignatures = null;
    try {
      if (data && data.format === REPLAY_FORMAT) { show(data, 0); status(`loaded ${what}`); return; }
      if (data && data.format === EVIDENCE_FORMAT && data.transcript) {
        // The evidence's own deal inputs are what its fairness check verifies.
        const deal = data.deal || {};
        // Who signed it is not checked here (the page holds no referee key): the file is
        // unverified, whatever its deal says.
        signedBy = (data.signature && data.signature.key_id) || "nobody";
        // Witnesses' cosignatures of the ledger (docs/fairness.md#witnesses): shown as present,
        // not checked here (the page holds no witness key either).
        cosignatures = ((data.ledger && data.ledger.cosignatures) || []).map((entry) => {
          const cosigned = entry.cosignature || {};
          return { witness: String(entry.witness), size: cosigned.size,
                   key: (cosigned.signature && cosigned.signature.key_id) || "no key" };
        });
        data = { ...data.transcript, deal: { algorithm: deal.algorithm, seed: deal.seed ?? null,
                                            commitment: deal.commitment, hand_id: data.hand_id,
                                            contributions: deal.contributions,
                                            draw: deal.draw } };
      }
      if (data && data.format === TRANSCRIPT_FORMAT) {
        if (location.protocol === "file:") {
          status("a transcript is replayed by the referee: open this page from the referee's web port", "error");
          return;
        }
        const response = await fetch("api/replay", { method: "POST", body: JSON.stringify(data),
                                                     headers: { "Content-Type": "application/json" } });
        const body = await response.json();
        if (!response.ok) { status(`${what}: ${body.error}`, "error"); return; }
        if (signedBy) body.unverifiedSignature = signedBy;
        if (cosignatures) body.unverifiedCosignatures = cosignatures;
        show(body, 0);
        status(`${what}: ${body.result.status}, ${body.result.actions_applied} actions applied`);
        return;
      }
      status(`${what} is not a transcript (${TRANSCRIPT_FORMAT}), evidence (${EVIDENCE_FORMAT}) or a replay (${REPLAY_FORMAT})`, "error");
    } catch (err) {
      status(`${what}: ${err.message}`, "error");
    }
  }

  async function loadHand(handId, version) {
    const key = $("audit-key").value || sessionStorage.getItem(KEY_STORE) || "";
    if (!key) { status("a stored hand needs the audit key", "error"); $("audit-key").focus(); return; }
    sessionStorage.setItem(KEY_STORE, key);
    status(`loading hand ${handId}…`);
    const response = await fetch(`api/hands/${encodeURIComponent(handId)}`, { headers: { [AUDIT_HEADER]: key } });
    const body = await response.json();
    if (!response.ok) { status(`hand ${handId}: ${body.error}`, "error"); return; }
    show(body, version);
    status(`hand ${handId}: ${body.events.length} events`);
    setHash();
  }

  // -- live -----------------------------------------------------------------------------

  // Follow a table as server-sent events (EventSource: it reconnects by itself and resumes
  // after the last event received). EventSource cannot send headers, so the spectator token
  // travels as the `token` query parameter.
  function watch(tableId) {
    const token = $("spectator-token").value || sessionStorage.getItem(TOKEN_STORE) || "";
    if (!token) { status("watching a table needs a spectator token", "error"); $("spectator-token").focus(); return; }
    sessionStorage.setItem(TOKEN_STORE, token);
    unwatch();
    const url = `api/tables/${encodeURIComponent(tableId)}/watch?token=${encodeURIComponent(token)}`;
    const source = new EventSource(url);
    view.live = { table: tableId, source, ended: new Map(), game: null };
    view.perspective = "public";
    status(`watching table ${tableId}…`);
    document.body.classList.add("live");
    source.addEventListener("event", (e) => liveEvent("event", JSON.parse(e.data)));
    source.addEventListener("error", (e) => {
      if (e.data) { liveEvent("error", JSON.parse(e.data)); return; }
      if (source.readyState === EventSource.CLOSED) refused(tableId, url);
    });
  }

  // EventSource says only that the stream failed: ask once more, as a plain request, to say
  // why (the answer is the referee's JSON error). A stream that opens this time is dropped.
  async function refused(tableId, url) {
    let why;
    try {
      const abort = new AbortController();
      const response = await fetch(url, { signal: abort.signal, headers: { Accept: "application/json" } });
      if (response.ok) {
        abort.abort();
        why = "the stream was interrupted; load the table again to follow it";
      } else {
        const body = await response.json().catch(() => ({}));
        why = refusalText(response.status, body);
      }
    } catch (err) {
      why = `the referee cannot be reached (${err.message})`;
    }
    status(`table ${tableId}: ${why}`, "error");
    const node = $("status");
    node.dataset.refusal = why;
  }

  function refusalText(httpStatus, body) {
    const said = body.error ? `: ${body.error}` : "";
    if (httpStatus === 429 || body.reason === "LIMIT_EXCEEDED" || body.reason === "RATE_LIMITED") {
      return `too many streams are open for this token or table${said}. Close another tab or window following it, or wait a moment, then load the table again.`;
    }
    if (httpStatus === 401 || httpStatus === 403) {
      return `the referee refused the token${said} (is the token for this table, and still valid?)`;
    }
    if (httpStatus === 404) return `no such table${said}`;
    if (httpStatus === 503) return `the referee is not available now${said}; try again shortly`;
    return `the referee refused the stream (HTTP ${httpStatus})${said}`;
  }

  function liveEvent(kind, data) {
    const live = view.live;
    if (kind === "error") {
      status(`table ${live.table}: ${data.error}`, "error");
      unwatch();  // a refusal is final: do not let the browser reconnect
      return;
    }
    const event = data;
    if (event.name === "table.opened") {
      live.game = event.table_opened.game;
      const policy = event.table_opened.spectators || {};
      const delays = [policy.delay_actions ? `${policy.delay_actions} events` : "",
                      policy.delay_seconds ? `${policy.delay_seconds} s` : ""].filter(Boolean);
      $("live-delay").textContent = delays.length ? `spectators watch ${delays.join(" or ")} behind the table` : "";
      return;
    }
    if (event.name === "table.hand_started") {
      // A seat-entropy deal's contributions are public from the deal on (the seed is not).
      const started = event.table_hand_started;
      live.deal = started.contributions && started.contributions.length
        ? { algorithm: "fiftyk-shuffle/2", hand_id: started.hand_id,
            contributions: started.contributions }
        : null;
      return;
    }
    if (event.name.startsWith("table.")) return;
    const game = FK.games[live.game];
    if (!game) return;
    // The chart counts each hand once, from its own last event (not table.hand_recorded).
    if (event.name.endsWith(".hand_ended")) live.ended.set(event.aggregate_id, game.handTotals(event));
    if (event.name === game.dealtEvent) {
      const doc = { format: REPLAY_FORMAT, game: live.game, hand_id: event.aggregate_id,
                    table_id: live.table, events: [event], match: [], live: true,
                    deal: live.deal && live.deal.hand_id === event.aggregate_id ? live.deal : null };
      show(doc, 0);
      view.follow = true;
      status(`table ${live.table}: hand ${payloadOf(event).hand_number}`);
      return;
    }
    if (!view.doc || view.doc.hand_id !== event.aggregate_id) return;
    view.doc.events.push(event);
    pushState(event);
    if (view.follow) view.index = view.doc.events.length - 1;
    setupTricks();
    render();
    if (event.name.endsWith(".hand_ended")) checkFairness();
  }

  function unwatch() {
    if (view.live) view.live.source.close();
    view.live = null;
    document.body.classList.remove("live");
  }

  // -- drawing --------------------------------------------------------------------------

  function sees(seat) {
    if (view.perspective === "all") return true;
    if (view.perspective === "public") return false;
    return Number(view.perspective) === seat;
  }

  function render() {
    const { doc, game, states, index } = view;
    if (!doc) return;
    const state = states[index];
    const event = doc.events[index];
    const bottom = /^\d+$/.test(view.perspective) ? Number(view.perspective) : 0;
    const drawn = game.draw(state, { sees });
    const table = $("table");
    table.className = `table players-${state.players}`;
    table.replaceChildren();
    for (const [seat, box] of Object.entries(drawn.seats)) {
      const seatNumber = Number(seat);
      table.append(el("section", {
        class: `seat pos-${C.position(seatNumber, state.players, bottom)}${sees(seatNumber) ? " visible" : ""}`,
        "data-seat": seat, "aria-label": `seat ${seat}` }, box));
    }
    table.append(el("section", { class: "centre", "aria-live": "polite" }, drawn.centre));
    $("info").replaceChildren(el("div", { class: "announce" }, game.announcements(state).join(" · ")), ...drawn.info);
    const version = Number(event.aggregate_version);
    $("version").textContent = `version ${version} of ${doc.events.length}`;
    $("version").dataset.version = version;
    const slider = $("slider");
    slider.max = String(doc.events.length);
    slider.value = String(index + 1);
    slider.setAttribute("aria-valuetext", `version ${version}: ${game.describe(event)}`);
    $("now").textContent = game.describe(event);
    renderLog();
    const trick = $("trick-jump");
    trick.value = String(trickOf(index));
    drawChart();
    setHash();
  }

  function renderLog() {
    const { doc, game, index } = view;
    const log = $("log");
    const items = doc.events.map((event, i) => el("li", {
      "data-version": event.aggregate_version, class: i === index ? "current" : i > index ? "future" : "",
      tabindex: "-1" }, `${event.aggregate_version}. ${game.describe(event)}`));
    log.replaceChildren(...items);
    // Scroll the log itself (not the page) so the current event is in view.
    const current = log.children[index];
    if (current) {
      const top = current.offsetTop;  // the log is the offset parent (position: relative)
      if (top < log.scrollTop || top > log.scrollTop + log.clientHeight - current.offsetHeight) {
        log.scrollTop = Math.max(0, top - log.clientHeight / 2);
      }
    }
  }

  // The tricks: the event index where each one ends (its `*.trick_won`).
  function trickEnds() {
    const ends = [];
    view.doc.events.forEach((e, i) => { if (e.name === view.game.trickEvent) ends.push(i); });
    return ends;
  }

  function trickOf(index) {
    const ends = trickEnds();
    const done = ends.filter((i) => i < index).length;
    return done + 1;
  }

  // The tricks played so far: every one won, and one under way (a play after the last won).
  function trickCount() {
    const ends = trickEnds();
    const after = ends.length ? ends[ends.length - 1] : -1;
    const started = view.doc.events.some((e, i) => i > after && /\.cards_played$/.test(e.name));
    return ends.length + (started ? 1 : 0);
  }

  function setupTricks() {
    const select = $("trick-jump");
    const options = [];
    for (let n = 1; n <= trickCount(); n += 1) options.push(el("option", { value: String(n) }, `trick ${n}`));
    select.replaceChildren(...options);
    select.disabled = !options.length;
  }

  function jumpTrick(number) {
    const ends = trickEnds();
    // Trick n starts right after the (n-1)th trick was won; show its first play.
    const from = number <= 1 ? firstPlay() : ends[number - 2] + 1;
    go(Math.min(from, view.doc.events.length - 1));
  }

  // Where each trick starts: its first play (trick 1), or right after the trick before.
  function trickStarts() {
    const last = view.doc.events.length - 1;
    return [firstPlay(), ...trickEnds().map((i) => i + 1)].filter((i) => i <= last);
  }

  function firstPlay() {
    const i = view.doc.events.findIndex((e) => /\.cards_played$/.test(e.name));
    return i >= 0 ? i : 0;
  }

  function setupPerspectives() {
    const select = $("perspective");
    const players = view.states[0].players;
    const options = [el("option", { value: "all" }, "everything"), el("option", { value: "public" }, "public (a spectator)")];
    for (let s = 0; s < players; s += 1) options.push(el("option", { value: String(s) }, `seat ${s}`));
    select.replaceChildren(...options);
    if (view.doc.live) view.perspective = "public";
    select.value = view.perspective;
    select.disabled = Boolean(view.doc.live);
  }

  // -- the match chart -------------------------------------------------------------------

  // Each finished hand of the match once, in order: the earlier hands (from the document, or
  // as the live stream ended them), then the hand shown once the version shown has ended it.
  function matchSeries() {
    const { game, doc } = view;
    const hands = [];
    for (const entry of doc.match || []) {
      if (entry.ended && entry.hand_id !== doc.hand_id) hands.push(game.handTotals(entry.ended));
    }
    if (view.live) {
      for (const [handId, totals] of view.live.ended) if (handId !== doc.hand_id) hands.push(totals);
    }
    const shown = doc.events[view.index];
    const own = shown ? game.handTotals(shown) : null;
    if (own) hands.push(own);
    return hands.filter(Boolean);
  }

  function drawChart() {
    const box = $("chart");
    if (!view.game) return;
    const hands = matchSeries();
    const sides = [...new Set(hands.flat().map((t) => t.side))].sort();
    const players = view.states.length ? view.states[0].players : 0;
    const sideName = (side) => C.sideText(side, players);
    const valueText = (v) => (view.game.valueText ? view.game.valueText(v) : String(v));
    const series = sides.map((side) => {
      let total = 0;
      return hands.map((totals) => {
        const t = totals.find((x) => x.side === side);
        if (t && t.absolute) total = t.value; else total += t ? t.value : 0;
        return total;
      });
    });
    const width = 320, height = 140, pad = 24;
    const values = series.flat().concat([0]);
    const lo = Math.min(...values), hi = Math.max(...values, lo + 1);
    const x = (i) => pad + (hands.length <= 1 ? 0 : (i * (width - 2 * pad)) / (hands.length - 1));
    const y = (v) => height - pad - ((v - lo) * (height - 2 * pad)) / (hi - lo);
    // Series apart by a few pixels, so two sides with equal totals both show.
    const apart = (k) => (k - (sides.length - 1) / 2) * 3;
    const ns = "http://www.w3.org/2000/svg";
    const svg = document.createElementNS(ns, "svg");
    svg.setAttribute("viewBox", `0 0 ${width} ${height}`);
    svg.setAttribute("role", "img");
    svg.setAttribute("aria-label", `${view.game.chartLabel}: ` +
      (sides.length ? sides.map((s, i) => `${sideName(s)} ${series[i].map(valueText).join(", ")}`).join("; ") : "no hand finished yet"));
    const line = (x1, y1, x2, y2, cls) => {
      const l = document.createElementNS(ns, "line");
      Object.entries({ x1, y1, x2, y2 }).forEach(([k, v]) => l.setAttribute(k, v));
      l.setAttribute("class", cls); svg.append(l);
    };
    line(pad, y(0), width - pad, y(0), "axis");
    series.forEach((points, k) => {
      const path = document.createElementNS(ns, "polyline");
      path.setAttribute("points", points.map((v, i) => `${x(i)},${y(v) + apart(k)}`).join(" "));
      path.setAttribute("class", `series s${k}`);
      path.setAttribute("data-side", sides[k]);
      path.setAttribute("data-values", points.join(" "));
      svg.append(path);
      points.forEach((v, i) => {
        const dot = document.createElementNS(ns, "circle");
        dot.setAttribute("cx", x(i)); dot.setAttribute("cy", y(v) + apart(k)); dot.setAttribute("r", 3);
        dot.setAttribute("class", `series s${k}`);
        svg.append(dot);
      });
    });
    const legend = el("div", { class: "legend" }, sides.map((s, k) =>
      el("span", { class: `key s${k}`, "data-side": s }, `${sideName(s)}: ${valueText(series[k][series[k].length - 1] ?? 0)}`)));
    const count = hands.length === 1 ? "1 hand" : `${hands.length} hands`;
    box.replaceChildren(el("div", { class: "chart-title" },
      hands.length ? `${view.game.chartLabel} (${count})` : "No hand of this table has finished yet at this point."),
      ...(hands.length ? [svg, legend] : []));
  }

  // -- fairness --------------------------------------------------------------------------

  async function checkFairness() {
    const box = $("fairness");
    const { doc, game } = view;
    const final = view.states[view.states.length - 1];
    const inputs = { algorithm: "fiftyk-shuffle/1", ...game.dealInputs(final) };
    const deal = doc.transcript && doc.transcript.deal;
    if (doc.transcript) {
      if (!deal) {
        box.replaceChildren(el("p", { class: "unknown", "data-fair": "unknown" },
          "This transcript carries no deal inputs (algorithm, seed, commitment): nothing to check."));
        return;
      }
      // A transcript is checked against what it says itself: its deck, seed and commitment
      // (and, for a seat-entropy deal, the hand's id and every seat's contribution).
      Object.assign(inputs, { algorithm: deal.algorithm, seed: deal.seed, commitment: deal.commitment,
                              deck: doc.transcript.deck || inputs.deck,
                              hand_id: deal.hand_id, contributions: deal.contributions,
                              draw: deal.draw });
    } else if (doc.deal) {
      // A seat-entropy deal: its algorithm and contributions, as the table published them.
      Object.assign(inputs, { algorithm: doc.deal.algorithm, hand_id: doc.deal.hand_id,
                              contributions: doc.deal.contributions, draw: doc.deal.draw });
    }
    if (!inputs.seed && (!inputs.deck || !inputs.deck.length)) {
      box.replaceChildren(el("p", { class: "unknown", "data-fair": "unknown" },
        "The seed is revealed when the hand ends: the deal can be checked then."));
      return;
    }
    box.replaceChildren(el("p", {}, "checking…"));
    try {
      const verdict = await FK.fairness.check(inputs);
      const signedBy = doc.unverifiedSignature;
      const cosignatures = doc.unverifiedCosignatures;
      box.replaceChildren(
        el("p", { class: verdict.ok ? "ok" : "bad", "data-fair": verdict.ok ? "yes" : "no" },
           verdict.ok ? "✔ The deal checks out." : "✘ The deal does NOT check out."),
        el("ul", {}, verdict.lines.map((l) => el("li", { class: l.ok ? "ok" : "bad" }, l.text))),
        ...(signedBy ? [el("p", { class: "bad", "data-signature": "unverified" },
          `UNVERIFIED evidence: it says it was signed by ${signedBy}, and this page does not`
          + " check signatures (it holds no referee key; anyone can sign a file with a key of"
          + " their own). Check the whole file with `fiftyk verify FILE --key referee.pub`.")]
          : []),
        ...(cosignatures ? [el("p", { class: "unknown", "data-cosignatures": "unverified" },
          cosignatures.length
            ? `Witness cosignatures present, NOT checked here: ${cosignatures.map((c) =>
                `${c.witness} (${c.key}, a tree of ${c.size} hands)`).join("; ")}. Check them`
              + " with `fiftyk verify FILE --key referee.pub --witness-key witness.pub`."
            : "No witness cosigned a tree that holds this hand (the file carries no"
              + " cosignature).")] : []));
    } catch (err) {
      box.replaceChildren(el("p", { class: "bad", "data-fair": "error" }, `cannot check: ${err.message}`));
    }
  }

  // -- controls --------------------------------------------------------------------------

  function go(index) {
    if (!view.doc) return;
    view.index = Math.max(0, Math.min(index, view.doc.events.length - 1));
    view.follow = view.index === view.doc.events.length - 1;
    render();
  }

  function play() {
    if (view.timer) { stop(); return; }
    if (view.index >= view.doc.events.length - 1) go(0);
    $("play").textContent = "⏸ pause";
    $("play").setAttribute("aria-pressed", "true");
    view.timer = setInterval(() => {
      if (view.index >= view.doc.events.length - 1) { stop(); return; }
      go(view.index + 1);
    }, BASE_STEP_MS / view.speed);
  }

  function stop() {
    if (view.timer) clearInterval(view.timer);
    view.timer = null;
    $("play").textContent = "▶ play";
    $("play").setAttribute("aria-pressed", "false");
  }

  function setHash() {
    if (!view.doc || !view.doc.hand_id || view.doc.live || location.protocol === "file:") return;
    const version = view.doc.events[view.index].aggregate_version;
    const hash = `#hand=${encodeURIComponent(view.doc.hand_id)}&v=${version}`;
    if (location.hash !== hash) history.replaceState(null, "", hash);
  }

  function readHash() {
    const params = new URLSearchParams(location.hash.slice(1));
    const token = params.get("token");
    if (token) {
      // A link may carry a spectator token: keep it for this tab only, off the address bar.
      sessionStorage.setItem(TOKEN_STORE, token);
      params.delete("token");
      history.replaceState(null, "", `#${params.toString()}`);
    }
    return { hand: params.get("hand"), version: Number(params.get("v")) || 0, table: params.get("watch") };
  }

  function bind() {
    $("first").onclick = () => go(0);
    $("prev").onclick = () => go(view.index - 1);
    $("next").onclick = () => go(view.index + 1);
    $("last").onclick = () => go(Infinity);
    $("play").onclick = play;
    $("speed").onchange = (e) => { view.speed = Number(e.target.value); if (view.timer) { stop(); play(); } };
    $("slider").oninput = (e) => go(Number(e.target.value) - 1);
    $("trick-jump").onchange = (e) => jumpTrick(Number(e.target.value));
    $("perspective").onchange = (e) => { view.perspective = e.target.value; render(); };
    $("fair-check").onclick = () => checkFairness();
    $("file").onchange = (e) => { if (e.target.files[0]) loadFile(e.target.files[0]); };
    $("hand-form").onsubmit = (e) => {
      e.preventDefault(); unwatch();
      // The link that named this hand named its moment too (until the hand is shown).
      const handId = $("hand-id").value.trim();
      const linked = readHash();
      loadHand(handId, linked.hand === handId ? linked.version : 0);
    };
    $("watch-form").onsubmit = (e) => { e.preventDefault(); watch($("table-id").value.trim()); };
    $("log").onclick = (e) => {
      const item = e.target.closest("li");
      if (item) go([...item.parentNode.children].indexOf(item));
    };
    const drop = $("drop");
    drop.ondragover = (e) => { e.preventDefault(); drop.classList.add("over"); };
    drop.ondragleave = () => drop.classList.remove("over");
    drop.ondrop = (e) => {
      e.preventDefault(); drop.classList.remove("over");
      if (e.dataTransfer.files[0]) loadFile(e.dataTransfer.files[0]);
    };
    document.addEventListener("keydown", (e) => {
      if (!view.doc || e.target.closest("input, select, textarea")) return;
      const keys = {
        ArrowRight: () => go(view.index + 1), ArrowLeft: () => go(view.index - 1),
        Home: () => go(0), End: () => go(Infinity), " ": play,
        "]": () => go(trickStarts().find((i) => i > view.index) ?? view.index),
        "[": () => go([...trickStarts()].reverse().find((i) => i < view.index) ?? 0),
      };
      if (keys[e.key] && !e.target.closest("button")) { e.preventDefault(); keys[e.key](); }
    });
  }

  function boot() {
    bind();
    const embedded = $("replay-data");
    if (embedded && embedded.textContent.trim()) {
      try { show(JSON.parse(embedded.textContent), 0); status("offline replay"); } catch (err) { status(err.message, "error"); }
      return;
    }
    const wanted = readHash();
    if (wanted.hand) { $("hand-id").value = wanted.hand; loadHand(wanted.hand, wanted.version); }
    else if (wanted.table) { $("table-id").value = wanted.table; watch(wanted.table); }
  }

  FK.app = { view, show, go, loadJson, watch, unwatch, render };
  document.addEventListener("DOMContentLoaded", boot);
})(window.FK = window.FK || {});
