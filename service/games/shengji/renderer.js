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
    if (hand.cards) hand.cards = [...hand.cards, ...cards];
    hand.count += count;
  }

  // The hand's card order (domain/shengji/cards.py): the trump rank R, the trump suit T (none:
  // no-trump) and whether 2s are permanent trumps. Trumps, low to high: T's other ranks, the
  // 2s (off-suit, then T's) when permanent, R off-suit, R of T, small joker, big joker.
  const NATURAL = ["2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A"];
  const PLAIN_SUITS = "SHCD";  // how a held hand lays out its plain suits, after the trumps
  const TRUMP = "T";

  function cardOrder(state) {
    const rank = trumpRank(state);
    const suit = state.trumpSuit;
    const options = (state.ruleset && state.ruleset.effective_options) || {};
    const twoIsTrump = Boolean(options.permanent_two) && rank !== "2";
    const plain = NATURAL.filter((r) => r !== rank && !(twoIsTrump && r === "2"));
    const info = {};
    for (const s of PLAIN_SUITS) {
      if (s === suit) continue;
      plain.forEach((r, pos) => { info[r + s] = { group: s, strength: pos }; });
    }
    const others = [...PLAIN_SUITS].filter((s) => s !== suit);
    const tiers = [];
    if (suit) tiers.push(...plain.map((r) => [r + suit]));
    if (twoIsTrump) {
      tiers.push(others.map((s) => "2" + s));
      if (suit) tiers.push(["2" + suit]);
    }
    tiers.push(others.map((s) => rank + s));
    if (suit) tiers.push([rank + suit]);
    tiers.push(["SJ"], ["BJ"]);
    tiers.forEach((tier, pos) => { for (const card of tier) info[card] = { group: TRUMP, strength: 1000 + pos }; });
    return info;
  }

  // Cards as a player holds them (and as `fiftyk replay` prints them): trumps strongest
  // first, then spades, hearts, clubs and diamonds, each strongest first.
  function held(cards, state) {
    const info = cardOrder(state);
    const place = (card) => {
      const i = info[card] || { group: TRUMP, strength: 0 };
      return [i.group === TRUMP ? -1 : PLAIN_SUITS.indexOf(i.group), -i.strength];
    };
    return [...cards].sort((a, b) => {
      const [ga, sa] = place(a), [gb, sb] = place(b);
      return ga - gb || sa - sb || (a < b ? -1 : a > b ? 1 : 0);
    });
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
      s.kitty = { cards: e.cards.length ? e.cards : null, count: e.count, buried: true };
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
    const suit = state.trumpSuit
      ? `${C.SUITS[state.trumpSuit]} ${C.SUIT_NAMES[state.trumpSuit]}`
      : state.declaration || state.phase !== "dealing" ? "none (no-trump hand)" : "not declared yet";
    return `Trumps: rank ${trumpRank(state)}, suit ${suit}`;
  }

  function teamText(team) { return C.teamText(team, PLAYERS); }

  const CLOSED_BY = { passes: "every seat spoke", timer: "the turn clock ran out",
                      transcript: "the transcript moved on" };

  function levelsGained(n) { return n === 1 ? "1 level" : `${n} levels`; }

  function outcomeText(e) {
    const dealerTeam = e.attacker_seats && e.attacker_seats.length ? 1 - (e.attacker_seats[0] % TEAMS) : null;
    const team = dealerTeam === null ? null : e.outcome_side === "dealer" ? dealerTeam : 1 - dealerTeam;
    const who = e.outcome_side === "dealer" ? "the dealer's side" : "the attackers";
    const named = team === null ? who : `${who} (${teamText(team)})`;
    return Number(e.levels_gained) > 0 ? `${named} go up ${levelsGained(Number(e.levels_gained))}`
      : `${named} keep the deal, no level gained`;
  }

  function describe(event) {
    const key = event.name.replace(".", "_");
    const e = event[key];
    const cards = (list) => list.map(C.text).join(" ");
    switch (key) {
      case "shengji_hand_dealt":
        return `shuffled: ${e.levels.map((lv, t) => `${teamText(t)} at ${lv}`).join(", ")}; ${e.dealer !== undefined ? `dealer seat ${e.dealer}` : "the declarations choose the dealer"}`;
      case "shengji_round_dealt": return `deal round ${e.round}`;
      case "shengji_declared_nothing": return `seat ${e.seat} declares nothing`;
      case "shengji_declared": return `seat ${e.seat} declares ${cards(e.cards)} (${e.suit ? `trump suit ${C.SUIT_NAMES[e.suit]}` : "no-trump"})`;
      case "shengji_window_closed": return `declarations closed after round ${e.round} (${CLOSED_BY[e.by] || e.by})`;
      case "shengji_kitty_taken": return `seat ${e.dealer} takes the kitty (${e.kitty_count} cards)`;
      case "shengji_kitty_buried": return `seat ${e.seat} buries ${e.count} cards${e.by_referee ? " (by the referee)" : ""}`;
      case "shengji_throw_failed": return `seat ${e.seat}'s throw ${cards(e.attempted)} fails: must play ${cards(e.forced)}`;
      case "shengji_cards_played": return `seat ${e.seat} plays ${cards(e.cards)}${e.by_referee ? " — by the referee" : ""}`;
      case "shengji_trick_won": return `seat ${e.seat} wins the trick, ${e.points} points`;
      case "shengji_hand_ended": return `hand over: the attackers took ${e.attacker_points} points; ${outcomeText(e)}; now ${e.levels_after.map((lv, t) => `${teamText(t)} at ${lv}`).join(", ")}`;
      default: return event.name;
    }
  }

  function seatBox(state, seat, visible) {
    const hand = state.hands[seat];
    const who = state.playerIds[seat] ? ` · ${state.playerIds[seat]}` : "";
    const badges = [el("span", { class: "badge" }, teamText(seat % TEAMS))];
    if (seat === state.dealer) badges.push(el("span", { class: "badge" }, "dealer"));
    if (state.declaration && state.declaration.seat === seat) {
      badges.push(el("span", { class: "badge" }, "declared ", C.cardsEl(state.declaration.cards, "declared")));
    }
    const cards = visible && hand.cards
      ? C.cardsEl(held(hand.cards, state), "hand")
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
         `Levels: ${state.levels.map((lv, t) => `${teamText(t)} at ${lv}`).join(", ")}`),
      el("div", { class: "kitty" }, `kitty${state.kitty.buried ? " (buried)" : ""}: `,
         kittyVisible ? C.cardsEl(held(state.kitty.cards, state), "kitty") : state.kitty.count ? C.backEl(state.kitty.count) : "with the dealer"),
    ];
    const attackers = state.dealer === null ? null
      : [0, 1, 2, 3].filter((s) => s % TEAMS !== state.dealer % TEAMS);
    if (attackers) {
      const points = attackers.reduce((n, s) => n + state.collected[s], 0);
      info.push(el("div", { class: "attackers", "data-attacker-points": points },
                   `Attackers (seats ${attackers.join(" and ")}): ${points} points in tricks`));
    }
    for (const t of state.throws) {
      info.push(el("div", { class: "throw" }, `seat ${t.seat}'s throw failed: forced `, C.cardsEl(t.forced)));
    }
    if (state.result) info.push(resultEl(state.result));
    return { seats, centre, info };
  }

  function pointsText(r) {
    const parts = [`${r.attacker_trick_points} in tricks`];
    const bonus = Number(r.kitty_bonus || 0);
    const kittyPoints = r.kitty ? Number(r.kitty.points || 0) : 0;
    if (bonus) parts.push(`${bonus} for the kitty (its ${kittyPoints} points times ${r.kitty_multiplier}, the attackers won the last trick)`);
    else if (kittyPoints) parts.push("none for the kitty (the dealer's side won the last trick)");
    const penalty = Number(r.penalty || 0);
    if (penalty > 0) parts.push(`${penalty} for the dealer's side's failed throws`);
    if (penalty < 0) parts.push(`${-penalty} taken off for their own failed throws`);
    return parts.join(", ");
  }

  function resultEl(r) {
    const levels = (list) => list.map((lv, t) => `${teamText(t)} at ${lv}`).join(", ");
    return el("div", { class: "result" },
      el("div", {}, `Result: the attackers took ${r.attacker_points} points: ${pointsText(r)}.`),
      el("div", { "data-levels-after": r.levels_after.join(" ") },
         `${outcomeText(r)}: ${levels(r.levels_before)} before, ${levels(r.levels_after)} after.`),
      el("div", {}, `Next dealer: seat ${r.next_dealer}.${r.game_over ? ` ${teamText(r.game_winner)} wins the match.` : ""}`));
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

  // A chart value as a level: 11 is J, 14 is A.
  function valueText(value) { return LEVEL_ORDER[value - 2] ?? String(value); }

  const PHASES = { dealing: "dealing", burying: "the dealer buries the kitty", playing: "playing",
                   over: "the hand is over" };

  function announcements(state) {
    const preset = state.ruleset && state.ruleset.spec ? state.ruleset.spec.preset : "";
    return [preset ? `rules: ${preset}` : "",
            state.phase === "dealing" ? `dealing, round ${state.round}` : PHASES[state.phase] || state.phase]
      .filter(Boolean);
  }

  FK.registerGame("shengji", {
    title: "升级 / 拖拉机", start, apply, describe, draw, dealInputs, handTotals, valueText, announcements,
    dealtEvent: "shengji.hand_dealt", trickEvent: "shengji.trick_won",
    chartLabel: "each team's level after each hand",
  });
})(window.FK = window.FK || {});
