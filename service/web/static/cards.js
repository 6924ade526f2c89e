// Cards and the drawing helpers every game renderer shares. Cards travel in the API's
// notation ("10H", "QS", "SJ", "BJ"); this file turns them into elements with suit symbols.
"use strict";
(function (FK) {
  const SUITS = { S: "♠", H: "♥", C: "♣", D: "♦" };
  const SUIT_NAMES = { S: "spades", H: "hearts", C: "clubs", D: "diamonds" };
  const RED = new Set(["H", "D"]);
  const RANKS = ["3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A", "2"];

  function parse(card) {
    if (card === "SJ" || card === "BJ") return { rank: card, suit: "" };
    return { rank: card.slice(0, -1), suit: card.slice(-1) };
  }

  function label(card) {
    if (card === "SJ") return "small joker";
    if (card === "BJ") return "big joker";
    const c = parse(card);
    return `${c.rank} of ${SUIT_NAMES[c.suit] || c.suit}`;
  }

  function text(card) {
    if (card === "SJ") return "☆J";
    if (card === "BJ") return "★J";
    const c = parse(card);
    return c.rank + (SUITS[c.suit] || c.suit);
  }

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (value === undefined || value === null || value === false) continue;
      if (key === "class") node.className = value;
      else if (key === "text") node.textContent = value;
      else node.setAttribute(key, value === true ? "" : String(value));
    }
    for (const child of children.flat()) {
      if (child === null || child === undefined) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }

  function cardEl(card, extra) {
    const c = parse(card);
    const red = RED.has(c.suit) || card === "BJ";
    return el("span", { class: `card${red ? " red" : ""}${extra ? " " + extra : ""}`,
                        "data-card": card, title: label(card), "aria-label": label(card) },
              text(card));
  }

  function backEl(count) {
    return el("span", { class: "card back", "data-hidden-count": count,
                        "aria-label": `${count} hidden cards` }, `🂠×${count}`);
  }

  function cardsEl(cards, cls) {
    return el("span", { class: `cards ${cls || ""}` }, cards.map((c) => cardEl(c)));
  }

  // Canonical order: rank 3 .. 2 then jokers, suit S H C D (as the referee sorts).
  function rankIndex(card) {
    if (card === "SJ") return 13;
    if (card === "BJ") return 14;
    return RANKS.indexOf(parse(card).rank);
  }

  function sortKey(card) {
    const suit = parse(card).suit;
    return rankIndex(card) * 4 + Math.max(0, "SHCD".indexOf(suit));
  }

  function sorted(cards) {
    return [...cards].sort((a, b) => sortKey(a) - sortKey(b));
  }

  // The full deck of `packs` packs as the referee builds it before shuffling.
  function canonicalDeck(packs, jokers) {
    const one = [];
    for (const rank of RANKS) for (const suit of "SHCD") one.push(rank + suit);
    if (jokers) one.push("SJ", "BJ");
    const all = [];
    for (let i = 0; i < packs; i += 1) all.push(...one);
    return sorted(all);
  }

  // Remove each of `cards` once from `hand` (a copy); unknown cards are ignored.
  function without(hand, cards) {
    const rest = [...hand];
    for (const card of cards) {
      const at = rest.indexOf(card);
      if (at >= 0) rest.splice(at, 1);
    }
    return rest;
  }

  // Where seat `seat` of `players` sits around the table, seat `bottom` at the bottom.
  function position(seat, players, bottom) {
    const k = (seat - bottom + players) % players;
    const layouts = {
      2: ["s", "n"], 3: ["s", "w", "e"], 4: ["s", "w", "n", "e"],
      5: ["s", "w", "nw", "ne", "e"], 6: ["s", "w", "nw", "n", "ne", "e"],
    };
    return (layouts[players] || layouts[6])[k] || "n";
  }

  // Teams are partners opposite: team k holds seats k, k + 2, ... (as the referee forms them).
  const TEAM_COUNT = 2;
  function teamSeats(team, players) {
    const seats = [];
    for (let s = team; s < players; s += TEAM_COUNT) seats.push(s);
    return seats;
  }

  function teamText(team, players) { return `team ${teamSeats(team, players).join("+")}`; }

  // A side as people read it: the API's "team:0" is "team 0+2", "seat:1" is "seat 1".
  function sideText(side, players) {
    const [kind, number] = String(side).split(":");
    if (kind === "team") return teamText(Number(number), players);
    if (kind === "seat") return `seat ${number}`;
    return String(side);
  }

  FK.cards = { parse, text, label, el, cardEl, backEl, cardsEl, sorted, canonicalDeck,
               without, position, teamSeats, teamText, sideText, SUITS, SUIT_NAMES };
  FK.games = FK.games || {};
  // A game joins the page by registering its renderer under the game's name.
  FK.registerGame = function (name, renderer) { FK.games[name] = renderer; };
})(window.FK = window.FK || {});
