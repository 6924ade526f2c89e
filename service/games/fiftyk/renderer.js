// 五十K at the web table: the state after each public `fiftyk.*` event (docs/events.md),
// and how it is drawn. It registers under the game's name; the page knows nothing else of it.
"use strict";
(function (FK) {
  const C = FK.cards;
  const el = C.el;

  function start(dealt) {
    const players = dealt.players;
    return {
      players,
      dealer: dealt.dealer,
      leader: dealt.first_leader,
      playerIds: dealt.player_ids || [],
      ruleset: dealt.ruleset,
      commitment: dealt.deal_commitment,
      seed: dealt.deal_seed || null,
      deck: dealt.deck || [],
      hands: dealt.hands.map((h) => ({ cards: h.cards.length ? C.sorted(h.cards) : null,
                                       count: h.card_count })),
      stock: dealt.stock_count ?? null,
      trick: [],
      lastTrick: null,
      tricks: 0,
      collected: new Array(players).fill(0),
      places: {},
      resigned: {},
      announced: {},
      result: null,
      scores: null,
    };
  }

  const APPLY = {
    fiftyk_cards_played(s, e) {
      const hand = s.hands[e.seat];
      if (hand.cards) hand.cards = C.without(hand.cards, e.cards);
      hand.count -= e.cards.length;
      s.trick.push({ seat: e.seat, cards: e.cards, type: e.combination_type, points: e.points });
    },
    fiftyk_passed(s, e) { s.trick.push({ seat: e.seat, pass: true }); },
    fiftyk_resigned(s, e) { s.resigned[e.seat] = true; },
    fiftyk_trick_won(s, e) {
      s.collected[e.seat] += e.points;
      s.lastTrick = { plays: s.trick, winner: e.seat, points: e.points };
      s.trick = [];
      s.tricks += 1;
      if (e.next_leader !== undefined) s.leader = e.next_leader;
    },
    fiftyk_cards_drawn(s, e) {
      const hand = s.hands[e.seat];
      if (hand.cards) hand.cards = C.sorted([...hand.cards, ...e.cards]);
      hand.count += e.count;
      if (s.stock !== null) s.stock -= e.count;
    },
    fiftyk_announced(s, e) { s.announced[e.seat] = e.cards_left; },
    fiftyk_went_out(s, e) { s.places[e.seat] = e.place; },
    fiftyk_hand_ended(s, e) {
      s.result = e.result;
      s.scores = e.scores;
      if (e.deal_seed) s.seed = e.deal_seed;
    },
  };

  function apply(state, event) {
    const key = event.name.replace(".", "_");
    const step = APPLY[key];
    if (step) step(state, event[key]);
  }

  function describe(event) {
    const key = event.name.replace(".", "_");
    const e = event[key];
    switch (key) {
      case "fiftyk_hand_dealt":
        return `dealt: ${e.players} players, dealer seat ${e.dealer}, seat ${e.first_leader} leads`;
      case "fiftyk_cards_played":
        return `seat ${e.seat} plays ${e.cards.map(C.text).join(" ")} (${e.combination_type.replace(/_/g, " ")}${e.points ? `, ${e.points} points` : ""})${e.by_referee ? " — by the referee" : ""}`;
      case "fiftyk_passed": return `seat ${e.seat} passes`;
      case "fiftyk_resigned": return `seat ${e.seat} resigns`;
      case "fiftyk_trick_won": return `seat ${e.seat} wins the trick, ${e.points} points`;
      case "fiftyk_cards_drawn": return `seat ${e.seat} draws ${e.count}`;
      case "fiftyk_announced": return `seat ${e.seat} announces ${e.cards_left} cards left`;
      case "fiftyk_went_out": return `seat ${e.seat} goes out, place ${e.place}`;
      case "fiftyk_hand_ended": {
        const players = e.result ? e.result.seats.length : e.scores.length;
        return `hand over: ${e.scores.map((t) => `${C.sideText(t.side, players)} ${t.score}`).join(", ")}`;
      }
      default: return event.name;
    }
  }

  function seatBox(state, seat, visible) {
    const hand = state.hands[seat];
    const who = state.playerIds[seat] ? ` · ${state.playerIds[seat]}` : "";
    const badges = [];
    if (seat === state.dealer) badges.push(el("span", { class: "badge" }, "dealer"));
    if (state.places[seat]) badges.push(el("span", { class: "badge out" }, `out #${state.places[seat]}`));
    if (state.resigned[seat]) badges.push(el("span", { class: "badge out" }, "resigned"));
    if (state.announced[seat] !== undefined) {
      badges.push(el("span", { class: "badge" }, `announced ${state.announced[seat]}`));
    }
    const cards = visible && hand.cards
      ? C.cardsEl(hand.cards, "hand")
      : el("span", { class: "cards hand" }, hand.count > 0 ? C.backEl(hand.count) : "");
    return el("div", { class: "seat-inner" },
      el("div", { class: "seat-name" }, `Seat ${seat}${who}`, ...badges),
      el("div", { class: "seat-points" }, "points ",
         el("b", { "data-points": state.collected[seat] }, state.collected[seat]),
         ` · ${hand.count} cards`),
      cards);
  }

  function playEl(play) {
    return el("div", { class: "play", "data-seat": play.seat },
      el("span", { class: "who" }, `seat ${play.seat}`),
      play.pass ? el("span", { class: "pass" }, "pass") : C.cardsEl(play.cards, "played"));
  }

  function draw(state, ctx) {
    const seats = {};
    for (let seat = 0; seat < state.players; seat += 1) {
      seats[seat] = seatBox(state, seat, ctx.sees(seat));
    }
    const plays = state.trick.length ? state.trick
      : state.lastTrick ? state.lastTrick.plays : [];
    const caption = state.trick.length ? `trick ${state.tricks + 1}`
      : state.lastTrick ? `trick ${state.tricks} won by seat ${state.lastTrick.winner} (${state.lastTrick.points} points)`
      : `seat ${state.leader} leads`;
    const centre = el("div", { class: "trick", "data-current": state.trick.length > 0,
                                "data-trick": state.trick.length ? state.tricks + 1 : state.tricks },
      el("div", { class: "caption" }, caption), plays.map(playEl));
    const info = [];
    if (state.stock !== null) info.push(el("div", {}, `stock: ${state.stock} cards`));
    if (state.result) info.push(resultEl(state));
    return { seats, centre, info };
  }

  function resultEl(state) {
    const r = state.result;
    // The rating column only where the rules rate a hand (QQ rules).
    const rated = r.seats.some((s) => s.rating !== undefined && s.rating !== null && s.rating !== "");
    const rows = r.seats.map((s) => el("tr", { "data-seat": s.seat },
      el("td", {}, `seat ${s.seat}`), el("td", { "data-score": s.score }, s.score),
      rated ? el("td", {}, s.rating ?? "") : null));
    const winner = r.winning_team !== undefined ? `${C.teamText(r.winning_team, state.players)} wins`
      : r.winning_seat !== undefined ? `seat ${r.winning_seat} wins` : "a draw";
    const places = (r.places || []).map((seat, i) => `${i + 1}. seat ${seat}`).join(", ");
    return el("div", { class: "result" },
      el("div", {}, `Result: ${winner}.${places ? ` Places: ${places}.` : ""}`),
      el("table", { class: "scores" },
        el("tr", {}, el("th", {}, "seat"), el("th", {}, "score"), rated ? el("th", {}, "rating") : null),
        rows));
  }

  function dealInputs(state) {
    const options = (state.ruleset && state.ruleset.effective_options) || {};
    return {
      commitment: state.commitment, seed: state.seed, deck: state.deck,
      canonical: C.canonicalDeck(Number(options.packs ?? 2), options.jokers ?? true),
    };
  }

  // This hand's score per side, for the match chart (from `fiftyk.hand_ended`).
  function handTotals(event) {
    const e = event.fiftyk_hand_ended;
    return e ? e.scores.map((t) => ({ side: t.side, value: Number(t.score) })) : null;
  }

  function announcements(state) {
    const preset = state.ruleset && state.ruleset.spec ? state.ruleset.spec.preset : "";
    return [preset ? `rules: ${preset}` : "", `dealer seat ${state.dealer}`].filter(Boolean);
  }

  FK.registerGame("fiftyk", {
    title: "五十K", start, apply, describe, draw, dealInputs, handTotals, announcements,
    dealtEvent: "fiftyk.hand_dealt", trickEvent: "fiftyk.trick_won",
    chartLabel: "score per side, cumulative",
  });
})(window.FK = window.FK || {});
