// 升级/拖拉机 (Shengji) at the web table: the state after each public `shengji.*` event
// (docs/events.md) — the paced deal, declarations, trump suit and rank, the kitty for whoever
// may see it, tricks, points and levels — and how it is drawn.
"use strict";
(function (FK) {
  const C = FK.cards;
  const el = C.el;
  const PLAYERS = 4;
  const TEAMS = 2;

  function start(dealt) {
    const options = (dealt.ruleset && dealt.ruleset.effective_options) || {};
    const kittySize = Number(options.kitty_size ?? 8);
    const deck = dealt.deck || [];
    return {
      players: PLAYERS,
      dealer: dealt.dealer ?? null,
      levels: [...dealt.levels],
      roomPoints: dealt.room_points || [],
      playerIds: dealt.player_ids || [],
      ruleset: dealt.ruleset,
      commitment: dealt.deal_commitment,
      seed: dealt.deal_seed || null,
      deck,
      phase: "dealing",
      round: 0,
      declaration: null,
      trumpSuit: null,
      hands: Array.from({ length: PLAYERS }, () => ({ cards: deck.length ? [] : null, count: 0 })),
      // The kitty's cards are known only to the dealer (once taken) and to the audit role.
      kitty: { cards: deck.length ? deck.slice(deck.length - kittySize) : null,
               count: kittySize, buried: false },
      trick: [],
      lastTrick: null,
      tricks: 0,
      collected: new Array(PLAYERS).fill(0),
      throws: [],
      result: null,
    };
  }

  function addCards(hand, cards, count) {
    if (hand.cards) hand.cards = C.sorted([...hand.cards, ...cards]);
    hand.count += count;
  }

  const APPLY = {
    shengji_round_dealt(s, e) {
      s.round = e.round;
      for (const h of e.hands) addCards(s.hands[h.seat], h.cards, h.card_count);
    },
    shengji_declared(s, e) {
      s.declaration = { seat: e.seat, cards: e.cards, suit: e.suit ?? null };
      s.trumpSuit = e.suit ?? null;
    },
    shengji_kitty_taken(s, e) {
      s.dealer = e.dealer;
      s.trumpSuit = e.trump_suit ?? null;
      s.phase = "burying";
      const hand = s.hands[e.dealer];
      addCards(hand, e.kitty, e.kitty_count);
      s.kitty = { cards: e.kitty.length ? e.kitty : s.kitty.cards, count: 0, buried: false };
    },
    shengji_kitty_buried(s, e) {
      const hand = s.hands[e.seat];
      if (hand.cards) hand.cards = C.without(hand.cards, e.cards);
      hand.count -= e.count;
      s.kitty = { cards: e.cards.length ? C.sorted(e.cards) : null, count: e.count, buried: true };
      s.phase = "playing";
    },
    shengji_throw_failed(s, e) { s.throws.push({ seat: e.seat, attempted: e.attempted, forced: e.forced }); },
    shengji_cards_played(s, e) {
      s.phase = "playing";
      const hand = s.hands[e.seat];
      if (hand.cards) hand.cards = C.without(hand.cards, e.cards);
      hand.count -= e.cards.length;
      s.trick.push({ seat: e.seat, cards: e.cards });
    },
    shengji_trick_won(s, e) {
      s.collected[e.seat] += e.points;
      s.lastTrick = { plays: s.trick, winner: e.seat, points: e.points };
      s.trick = [];
      s.tricks += 1;
    },
    shengji_hand_ended(s, e) {
      s.result = e;
      s.phase = "over";
      if (e.deal_seed) s.seed = e.deal_seed;
      if (!s.kitty.cards && e.kitty) s.kitty.cards = e.kitty.buried;
    },
  };

  function apply(state, event) {
    const key = event.name.replace(".", "_");
    const step = APPLY[key];
    if (step) step(state, event[key]);
  }

  function trumpRank(state) {
    const team = state.dealer === null ? 0 : state.dealer % TEAMS;
    return state.levels[team];
  }

  function trumpText(state) {
    const suit = state.trumpSuit ? C.SUITS[state.trumpSuit] : state.declaration ? "no trump" : "not declared";
    return `trump ${trumpRank(state)} ${suit}`;
  }

  function describe(event) {
    const key = event.name.replace(".", "_");
    const e = event[key];
    const cards = (list) => list.map(C.text).join(" ");
    switch (key) {
      case "shengji_hand_dealt":
        return `shuffled: levels ${e.levels.join(" / ")}, ${e.dealer !== undefined ? `dealer seat ${e.dealer}` : "the declarations choose the dealer"}`;
      case "shengji_round_dealt": return `deal round ${e.round}`;
      case "shengji_declared_nothing": return `seat ${e.seat} declares nothing`;
      case "shengji_declared": return `seat ${e.seat} declares ${cards(e.cards)} (${e.suit ? C.SUITS[e.suit] : "no trump"})`;
      case "shengji_window_closed": return `declarations closed after round ${e.round} (${e.by})`;
      case "shengji_kitty_taken": return `seat ${e.dealer} takes the kitty (${e.kitty_count} cards)`;
      case "shengji_kitty_buried": return `seat ${e.seat} buries ${e.count} cards${e.by_referee ? " (by the referee)" : ""}`;
      case "shengji_throw_failed": return `seat ${e.seat}'s throw ${cards(e.attempted)} fails: must play ${cards(e.forced)}`;
      case "shengji_cards_played": return `seat ${e.seat} plays ${cards(e.cards)}${e.by_referee ? " — by the referee" : ""}`;
      case "shengji_trick_won": return `seat ${e.seat} wins the trick, ${e.points} points`;
      case "shengji_hand_ended": return `hand over: attackers ${e.attacker_points} points, ${e.outcome_side} gain ${e.levels_gained}; levels ${e.levels_after.join(" / ")}`;
      default: return event.name;
    }
  }

  function seatBox(state, seat, visible) {
    const hand = state.hands[seat];
    const who = state.playerIds[seat] ? ` · ${state.playerIds[seat]}` : "";
    const badges = [el("span", { class: "badge" }, `team ${seat % TEAMS}`)];
    if (seat === state.dealer) badges.push(el("span", { class: "badge" }, "dealer"));
    if (state.declaration && state.declaration.seat === seat) {
      badges.push(el("span", { class: "badge" }, "declared ", C.cardsEl(state.declaration.cards, "declared")));
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

  function draw(state, ctx) {
    const seats = {};
    for (let seat = 0; seat < PLAYERS; seat += 1) seats[seat] = seatBox(state, seat, ctx.sees(seat));
    const plays = state.trick.length ? state.trick : state.lastTrick ? state.lastTrick.plays : [];
    const caption = state.trick.length ? `trick ${state.tricks + 1}`
      : state.lastTrick ? `trick ${state.tricks} won by seat ${state.lastTrick.winner} (${state.lastTrick.points} points)`
      : state.phase;
    const centre = el("div", { class: "trick", "data-current": state.trick.length > 0,
                                "data-trick": state.trick.length ? state.tricks + 1 : state.tricks },
      el("div", { class: "caption" }, caption),
      plays.map((p) => el("div", { class: "play", "data-seat": p.seat },
        el("span", { class: "who" }, `seat ${p.seat}`), C.cardsEl(p.cards, "played"))));
    const kittyVisible = ctx.sees(state.dealer ?? -1) && state.kitty.cards;
    const info = [
      el("div", { class: "trump", "data-trump-rank": trumpRank(state), "data-trump-suit": state.trumpSuit || "" },
         trumpText(state)),
      el("div", { class: "levels", "data-levels": state.levels.join(" ") },
         `levels: team 0 ${state.levels[0]}, team 1 ${state.levels[1]}`),
      el("div", { class: "kitty" }, `kitty${state.kitty.buried ? " (buried)" : ""}: `,
         kittyVisible ? C.cardsEl(state.kitty.cards, "kitty") : state.kitty.count ? C.backEl(state.kitty.count) : "with the dealer"),
    ];
    const attackers = state.dealer === null ? null
      : [0, 1, 2, 3].filter((s) => s % TEAMS !== state.dealer % TEAMS);
    if (attackers) {
      const points = attackers.reduce((n, s) => n + state.collected[s], 0);
      info.push(el("div", { class: "attackers", "data-attacker-points": points },
                   `attackers (seats ${attackers.join(", ")}): ${points} points in tricks`));
    }
    for (const t of state.throws) {
      info.push(el("div", { class: "throw" }, `seat ${t.seat}'s throw failed: forced `, C.cardsEl(t.forced)));
    }
    if (state.result) info.push(resultEl(state.result));
    return { seats, centre, info };
  }

  function resultEl(r) {
    return el("div", { class: "result" },
      el("div", {}, `Result: attackers ${r.attacker_points} points (tricks ${r.attacker_trick_points}, kitty bonus ${r.kitty_bonus}, ×${r.kitty_multiplier})`),
      el("div", { "data-levels-after": r.levels_after.join(" ") },
         `${r.outcome_side} gain ${r.levels_gained} level(s): ${r.levels_before.join(" / ")} → ${r.levels_after.join(" / ")}`),
      el("div", {}, `next dealer seat ${r.next_dealer}${r.game_over ? `; team ${r.game_winner} wins the match` : ""}`));
  }

  function dealInputs(state) {
    const options = (state.ruleset && state.ruleset.effective_options) || {};
    return {
      commitment: state.commitment, seed: state.seed, deck: state.deck,
      canonical: C.canonicalDeck(Number(options.packs ?? 2), true),
    };
  }

  // The teams' levels after each hand, for the match chart (2 = 0 ... A = 12).
  const LEVEL_ORDER = ["2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A"];
  function handTotals(event) {
    const e = event.shengji_hand_ended;
    return e ? e.levels_after.map((lv, team) => ({ side: `team:${team}`, value: LEVEL_ORDER.indexOf(lv) + 2, absolute: true })) : null;
  }

  function announcements(state) {
    const preset = state.ruleset.spec ? state.ruleset.spec.preset : "";
    return [`preset ${preset}`, state.phase === "dealing" ? `dealing, round ${state.round}` : state.phase];
  }

  FK.registerGame("shengji", {
    title: "升级 / 拖拉机", start, apply, describe, draw, dealInputs, handTotals, announcements,
    dealtEvent: "shengji.hand_dealt", trickEvent: "shengji.trick_won",
    chartLabel: "levels after each hand (J=11 … A=14)",
  });
})(window.FK = window.FK || {});
