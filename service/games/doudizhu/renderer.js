// 斗地主 (Dou Dizhu) at the web table: the state after each public `doudizhu.*` event
// (docs/doudizhu.md#events) — the bidding, the landlord and its 底牌 (shown to everyone once
// the landlord takes it), the plays since the lead, bombs and the multiplier — and how it is
// drawn. Its events carry the game's own messages (`game_event`, fiftyk.games.doudizhu.v1).
"use strict";
(function (FK) {
  const C = FK.cards;
  const el = C.el;
  const PLAYERS = 3;

  function payload(event) { return event.game_event || {}; }
  function kind(event) { return event.name.replace("doudizhu.", ""); }

  function start(dealt) {
    const deck = dealt.deck || [];
    const hands = Array.from({ length: PLAYERS }, () => ({ cards: null, count: 0 }));
    for (const h of dealt.hands || []) {
      hands[h.seat] = { cards: h.cards && h.cards.length ? [...h.cards] : null, count: Number(h.card_count) };
    }
    // Only the audit role has the 底牌's cards before the landlord shows them.
    const kitty = dealt.kitty && dealt.kitty.length ? [...dealt.kitty] : null;
    return {
      players: PLAYERS,
      dealer: Number(dealt.dealer ?? 0),
      playerIds: dealt.player_ids || [],
      ruleset: dealt.ruleset,
      commitment: dealt.deal_commitment,
      seed: dealt.deal_seed || null,
      deck,
      phase: "bidding",
      bids: [],
      bid: 0,
      robs: 0,
      landlord: null,
      kitty: { cards: kitty, count: Number(dealt.kitty_count ?? 3), shown: false },
      multiplier: null,
      hands,
      trick: [],
      lastTrick: null,
      rounds: 0,
      bombs: [],
      result: null,
    };
  }

  // The multiplier as it stands (docs/doudizhu.md#scoring): the bid, doubled per rob and,
  // where the ruleset says so, per bomb and rocket played; at most the ruleset's cap.
  function multiplierNow(s) {
    const options = (s.ruleset && s.ruleset.effective_options) || {};
    const doubling = options.bomb_doubling ?? true;
    const cap = Number(options.multiplier_cap ?? 0);
    const bombs = s.bombs.filter((b) => b.type === "bomb").length;
    const rockets = s.bombs.length - bombs;
    const uncapped = s.bid * 2 ** s.robs * (doubling ? 2 ** s.bombs.length : 1);
    return { bid: s.bid, robs: s.robs, bombs, rockets, spring: false, anti_spring: false,
             total: cap ? Math.min(uncapped, cap) : uncapped, uncapped };
  }

  const APPLY = {
    bid(s, e) {
      s.bids.push(e);
    },
    landlord_chosen(s, e) {
      s.landlord = Number(e.landlord);
      s.phase = "playing";
      s.bid = Number(e.bid);
      s.robs = Number(e.robs);
      s.kitty = { cards: [...e.kitty], count: e.kitty.length, shown: true };
      const hand = s.hands[s.landlord];
      if (hand.cards) hand.cards = [...hand.cards, ...e.kitty];
      hand.count += e.kitty.length;
      s.rounds = 1;
      s.multiplier = multiplierNow(s);
    },
    cards_played(s, e) {
      const hand = s.hands[e.seat];
      if (hand.cards) hand.cards = C.without(hand.cards, e.cards);
      hand.count -= e.cards.length;
      s.trick.push({ seat: e.seat, cards: e.cards, type: e.combination_type });
      if (e.combination_type === "bomb" || e.combination_type === "rocket") {
        s.bombs.push({ seat: e.seat, cards: e.cards, type: e.combination_type });
        s.multiplier = multiplierNow(s);
      }
    },
    passed(s, e) { s.trick.push({ seat: e.seat, pass: true, byReferee: e.by_referee }); },
    trick_ended(s, e) {
      s.lastTrick = { plays: s.trick, leader: Number(e.next_leader) };
      s.trick = [];
      s.rounds += 1;
    },
    hand_ended(s, e) {
      s.result = e.result;
      s.phase = "over";
      if (e.deal_seed) s.seed = e.deal_seed;
      const kitty = e.result ? e.result.kitty || [] : [];
      if (kitty.length && !s.kitty.cards) s.kitty = { cards: [...kitty], count: kitty.length, shown: s.kitty.shown };
      if (e.result && e.result.multiplier && !e.result.redeal) s.multiplier = e.result.multiplier;
    },
  };

  function apply(state, event) {
    const step = APPLY[kind(event)];
    if (step) step(state, payload(event));
  }

  function bidText(b) {
    const who = `seat ${b.seat}`;
    const late = b.by_referee ? " (by the referee)" : "";
    if (b.action === "bid") return `${who} bids ${b.points}${late}`;
    if (b.action === "call") return `${who} calls the landlord (叫地主)${late}`;
    if (b.action === "rob") return `${who} robs the landlord (抢地主)${late}`;
    return `${who} passes${late}`;
  }

  function multiplierParts(m) {
    if (!m) return [];
    const parts = [`bid ${m.bid}`];
    if (Number(m.robs)) parts.push(`${m.robs} rob${Number(m.robs) === 1 ? "" : "s"}`);
    if (Number(m.bombs)) parts.push(`${m.bombs} bomb${Number(m.bombs) === 1 ? "" : "s"}`);
    if (Number(m.rockets)) parts.push("the rocket");
    if (m.spring) parts.push("spring (春天)");
    if (m.anti_spring) parts.push("anti-spring (反春)");
    return parts;
  }

  function scoresText(result) {
    return (result.scores || []).map((score, seat) => `seat ${seat} ${Number(score) > 0 ? "+" : ""}${score}`).join(", ");
  }

  function resultText(r) {
    if (r.redeal) return "every seat passed: no landlord, the hand is dealt again";
    const who = r.winner === "landlord" ? `the landlord (seat ${r.landlord}) wins` : "the farmers win";
    return `${who} × ${r.multiplier ? r.multiplier.total : 1} (${multiplierParts(r.multiplier).join(", ")}): ${scoresText(r)}`;
  }

  function describe(event) {
    const e = payload(event);
    const cards = (list) => (list || []).map(C.text).join(" ");
    switch (kind(event)) {
      case "hand_dealt": return `shuffled and dealt: 17 cards each, 3 kept back; seat ${e.first_bidder} bids first`;
      case "bid": return bidText(e);
      case "landlord_chosen": return `seat ${e.landlord} is the landlord and shows the 底牌 ${cards(e.kitty)}`;
      case "cards_played": return `seat ${e.seat} plays ${e.combination_type} ${cards(e.cards)}${e.by_referee ? " — by the referee" : ""}`;
      case "passed": return `seat ${e.seat} passes${e.by_referee ? " (by the referee)" : ""}`;
      case "trick_ended": return `two passes: seat ${e.next_leader} leads`;
      case "hand_ended": return `hand over: ${resultText(e.result)}`;
      default: return event.name;
    }
  }

  function roleOf(state, seat) {
    if (state.landlord === null) return null;
    return seat === state.landlord ? "landlord" : "farmer";
  }

  function seatBox(state, seat, visible) {
    const hand = state.hands[seat];
    const who = state.playerIds[seat] ? ` · ${state.playerIds[seat]}` : "";
    const role = roleOf(state, seat);
    const badges = [];
    if (role === "landlord") badges.push(el("span", { class: "badge landlord", "data-landlord": "true" }, "地主 landlord"));
    if (role === "farmer") badges.push(el("span", { class: "badge farmer" }, "农民 farmer"));
    const lastBid = [...state.bids].reverse().find((b) => b.seat === seat);
    if (state.phase === "bidding" && lastBid) badges.push(el("span", { class: "badge bid" }, bidText(lastBid).replace(`seat ${seat} `, "")));
    const cards = visible && hand.cards
      ? C.cardsEl(C.sorted(hand.cards), "hand")
      : el("span", { class: "cards hand" }, hand.count > 0 ? C.backEl(hand.count) : "");
    return el("div", { class: "seat-inner", "data-role": role || "" },
      el("div", { class: "seat-name" }, `Seat ${seat}${who}`, ...badges),
      el("div", { class: "seat-points" }, `${hand.count} cards`),
      cards);
  }

  function draw(state, ctx) {
    const seats = {};
    for (let seat = 0; seat < PLAYERS; seat += 1) seats[seat] = seatBox(state, seat, ctx.sees(seat));
    const plays = state.trick.length ? state.trick : state.lastTrick ? state.lastTrick.plays : [];
    const caption = state.phase === "bidding" ? "bidding"
      : state.trick.length ? `round ${state.rounds}`
      : state.lastTrick && state.phase !== "over" ? `round ${state.rounds - 1}: seat ${state.lastTrick.leader} leads next`
      : state.phase === "over" ? "the hand is over" : "the landlord leads";
    const centre = el("div", { class: "trick", "data-current": state.trick.length > 0, "data-trick": state.rounds },
      el("div", { class: "caption" }, caption),
      plays.map((p) => el("div", { class: "play", "data-seat": p.seat },
        el("span", { class: "who" }, `seat ${p.seat}`),
        p.pass ? el("span", { class: "pass" }, "pass") : C.cardsEl(p.cards, "played"))));
    // The 底牌: face down until the landlord takes it, then face up for everyone (the audit
    // perspective sees it from the deal).
    const kittyFaceUp = state.kitty.cards && (state.kitty.shown || ctx.sees(-1) || state.phase === "over");
    const info = [
      el("div", { class: "kitty", "data-shown": String(state.kitty.shown) }, "底牌 (kitty): ",
         kittyFaceUp ? C.cardsEl(C.sorted(state.kitty.cards), "kitty") : C.backEl(state.kitty.count)),
      el("div", { class: "landlord", "data-landlord": state.landlord === null ? "" : String(state.landlord) },
         state.landlord === null ? "Landlord: not chosen yet" : `Landlord (地主): seat ${state.landlord}`),
    ];
    if (state.bids.length) info.push(el("div", { class: "bids" }, `Bidding: ${state.bids.map(bidText).join("; ")}`));
    const m = state.multiplier;
    info.push(el("div", { class: "multiplier", "data-multiplier": m ? String(m.total) : "" },
      m ? `Multiplier × ${m.total} (${multiplierParts(m).join(", ")})` : "Multiplier: after the bidding"));
    if (state.bombs.length) {
      info.push(el("div", { class: "bombs", "data-bombs": String(state.bombs.length) }, "Bombs: ",
        ...state.bombs.map((b) => el("span", { class: "bomb" }, `seat ${b.seat} `, C.cardsEl(b.cards, "played")))));
    }
    if (state.result) info.push(el("div", { class: "result" }, `Result: ${resultText(state.result)}.`));
    return { seats, centre, info };
  }

  function dealInputs(state) {
    return { commitment: state.commitment, seed: state.seed, deck: state.deck,
             canonical: C.canonicalDeck(1, true) };
  }

  // Each seat's score for the hand, for the match chart.
  function handTotals(event) {
    if (event.name !== "doudizhu.hand_ended") return null;
    const r = payload(event).result;
    return r ? (r.scores || []).map((score, seat) => ({ side: `seat:${seat}`, value: Number(score) })) : null;
  }

  function valueText(value) { return String(value); }

  const PHASES = { bidding: "bidding for the landlord", playing: "playing", over: "the hand is over" };

  function announcements(state) {
    const preset = state.ruleset && state.ruleset.spec ? state.ruleset.spec.preset : "";
    return [preset ? `rules: ${preset}` : "", PHASES[state.phase] || state.phase].filter(Boolean);
  }

  FK.registerGame("doudizhu", {
    title: "斗地主", start: (event) => start(event), apply, describe, draw, dealInputs, handTotals,
    valueText, announcements, dealtEvent: "doudizhu.hand_dealt", trickEvent: "doudizhu.trick_ended",
    chartLabel: "each seat's running score",
  });
})(window.FK = window.FK || {});
