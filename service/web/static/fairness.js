// The fairness check, in the browser: recompute the deal's commitment and the shuffled deck
// from the revealed inputs with WebCrypto (SHA-256), and say whether they match what the
// hand published. The algorithms are those of docs/transcript.md (`deal.algorithm`), by name;
// a newer algorithm joins `ALGORITHMS` under its own name.
"use strict";
(function (FK) {
  const encoder = new TextEncoder();
  const WORD_BYTES = 8;
  const SPACE = 1n << 64n;

  function hexToBytes(hex) {
    if (!/^([0-9a-f]{2})*$/i.test(hex)) throw new Error("the seed is not hex");
    const out = new Uint8Array(hex.length / 2);
    for (let i = 0; i < out.length; i += 1) out[i] = parseInt(hex.substr(i * 2, 2), 16);
    return out;
  }

  function concat(...parts) {
    const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
    let at = 0;
    for (const part of parts) { out.set(part, at); at += part.length; }
    return out;
  }

  async function sha256(bytes) {
    if (!(window.crypto && window.crypto.subtle)) {
      throw new Error("this page needs WebCrypto (open it over https, on localhost or as a file)");
    }
    return new Uint8Array(await window.crypto.subtle.digest("SHA-256", bytes));
  }

  function hex(bytes) {
    return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  }

  function counter(i) {
    const out = new Uint8Array(WORD_BYTES);
    new DataView(out.buffer).setBigUint64(0, BigInt(i));
    return out;
  }

  // fiftyk-shuffle/1: Fisher–Yates over the canonical deck, indices from SHA-256 in counter
  // mode (`shuffle tag || seed || counter`), 8-byte big-endian words, rejection sampling.
  async function shuffleV1(seed, canonical) {
    const tag = encoder.encode("fiftyk-shuffle/1");
    const words = [];
    let block = 0;
    async function next() {
      if (words.length === 0) {
        const digest = await sha256(concat(tag, seed, counter(block)));
        block += 1;
        const view = new DataView(digest.buffer);
        for (let at = 0; at < digest.length; at += WORD_BYTES) words.push(view.getBigUint64(at));
      }
      return words.shift();
    }
    const cards = [...canonical];
    for (let i = cards.length - 1; i > 0; i -= 1) {
      const bound = BigInt(i + 1);
      const limit = SPACE - (SPACE % bound);
      let word = await next();
      while (word >= limit) word = await next();
      const j = Number(word % bound);
      [cards[i], cards[j]] = [cards[j], cards[i]];
    }
    return cards;
  }

  async function commitV1(seed, deck) {
    return hex(await sha256(concat(encoder.encode("fiftyk-commit/1"), seed,
                                   encoder.encode(deck.join(" ")))));
  }

  // fiftyk-shuffle/2 (seat entropy): the version 1 shuffle driven by the draw seed,
  // HMAC-SHA256(key = seed, "fiftyk-shuffle/2\n" hand id "\n" seats "\n" each seat's hex);
  // the commitment, published before the seats contributed, covers the seed alone.
  async function drawSeed(seed, inputs) {
    const contributions = inputs.contributions;
    if (!Array.isArray(contributions) || !inputs.hand_id) {
      throw new Error("a fiftyk-shuffle/2 deal needs the hand's id and every seat's contribution");
    }
    const message = ["fiftyk-shuffle/2", inputs.hand_id, String(contributions.length),
                     ...contributions].join("\n");
    const key = await window.crypto.subtle.importKey(
      "raw", seed, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
    return new Uint8Array(await window.crypto.subtle.sign("HMAC", key, encoder.encode(message)));
  }

  async function shuffleV2(seed, canonical, inputs) {
    return shuffleV1(await drawSeed(seed, inputs), canonical);
  }

  async function commitV2(seed) {
    return hex(await sha256(concat(encoder.encode("fiftyk-seed/2"), seed)));
  }

  // "preset": a deck the platform brought (no seed); the commitment covers the deck alone.
  const ALGORITHMS = {
    "fiftyk-shuffle/1": { shuffle: shuffleV1, commit: commitV1 },
    "fiftyk-shuffle/2": { shuffle: shuffleV2, commit: commitV2 },
    preset: { shuffle: null, commit: commitV1 },
  };

  // A seat-entropy deal's draw record: no draw abandoned before it (a re-draw), every
  // revealed contribution opens its seat's commitment, the withheld seats are those that
  // committed and did not reveal. Returns whether it holds.
  async function checkDraw(record, contributions, say) {
    const abandoned = (record.abandoned || []).map((d) => d.commitment);
    if (abandoned.length) {
      return say(false, `re-draw: this hand was dealt from draw ${abandoned.length + 1}; the`
                        + ` referee abandoned the draw(s) committed to ${abandoned.join(", ")}`);
    }
    // Seats that bound keys of their own sign what they send: an unsigned commitment or
    // contribution of such a seat was made with its token alone. (The signatures themselves
    // are Ed25519's, which `fiftyk verify` checks; this page checks that they are there.)
    const keys = record.seat_keys || [];
    const signatures = record.signatures || {};
    for (let seat = 0; seat < keys.length; seat += 1) {
      if (!keys[seat]) continue;
      for (const [field, sent] of [["commitments", record.commitments || []],
                                   ["contributions", contributions || []]]) {
        if (sent[seat] && !((signatures[field] || [])[seat])) {
          return say(false, `seat ${seat}'s ${field.slice(0, -1)} is unsigned although the seat`
                            + " bound a key of its own: it was made with the seat's token alone");
        }
      }
    }
    const keyed = keys.filter((k) => k).length;
    if (keyed) {
      say(true, `${keyed} seat(s) bound keys of their own and signed what they sent (fiftyk`
                + " verify checks the signatures)");
    }
    if (!record.commitments) {
      return say(true, "the seats sent their bytes directly (no commitment first): the referee"
                       + " saw them before it dealt");
    }
    if (!Array.isArray(contributions)) return true;
    const withheld = [];
    for (let seat = 0; seat < record.commitments.length; seat += 1) {
      const committed = record.commitments[seat];
      const sent = contributions[seat];
      if (sent && (!committed || hex(await sha256(hexToBytes(sent))) !== committed)) {
        return say(false, `seat ${seat}'s revealed bytes do not open its commitment`);
      }
      if (committed && !sent) withheld.push(seat);
    }
    if (withheld.join() !== (record.withheld || []).join()) {
      return say(false, `the record names seats [${record.withheld}] as withheld, the`
                        + ` commitments say [${withheld}]`);
    }
    return say(true, "every revealed contribution opens its seat's commitment"
                     + (withheld.length ? `; seat(s) ${withheld.join(", ")} committed and`
                                          + " withheld their bytes (counted as empty)" : ""));
  }

  // inputs: {algorithm, seed (hex or null), commitment, deck (may be empty: a spectator is
  // not shown it), canonical; for fiftyk-shuffle/2 also hand_id, contributions and the
  // draw's record (`draw`, hands dealt since it is kept)}.
  // Returns {ok, lines: [{ok, text}]}: one line per check.
  async function check(inputs) {
    const lines = [];
    const say = (ok, text) => { lines.push({ ok, text }); return ok; };
    const algorithm = ALGORITHMS[inputs.algorithm];
    if (!algorithm) {
      say(false, `unknown deal algorithm ${inputs.algorithm}: this page checks `
                 + Object.keys(ALGORITHMS).join(", "));
      return { ok: false, lines };
    }
    const known = inputs.deck && inputs.deck.length ? inputs.deck : null;
    if (!inputs.commitment || (!inputs.seed && !known)) {
      say(false, "the deal inputs are not revealed here (no seed and no deck)");
      return { ok: false, lines };
    }
    let ok = true;
    let deck = known;
    const seed = inputs.seed ? hexToBytes(inputs.seed) : new Uint8Array(0);
    if (inputs.seed && !algorithm.shuffle) {
      say(false, `a ${inputs.algorithm} deal has no seed, yet this one names ${inputs.seed}`);
      return { ok: false, lines };
    }
    if (inputs.seed) {
      if (inputs.contributions) {
        const sent = inputs.contributions.filter((c) => c).length;
        say(true, `seat entropy: ${sent} of ${inputs.contributions.length} seats contributed`
                  + " (an empty contribution for the others)");
      }
      if (inputs.draw) ok = (await checkDraw(inputs.draw, inputs.contributions, say)) && ok;
      const dealt = await algorithm.shuffle(seed, inputs.canonical, inputs);
      if (known) {
        const same = dealt.length === known.length && dealt.every((c, i) => c === known[i]);
        const first = dealt.findIndex((c, i) => c !== known[i]);
        ok = say(same, same ? `the seed deals exactly this deck (${dealt.length} cards)`
                            : `the seed deals another deck: card ${first + 1} is ${dealt[first]},`
                              + ` the hand has ${known[first]}`) && ok;
      } else {
        say(true, `the seed deals a deck of ${dealt.length} cards (the deck itself is not shown here)`);
        deck = dealt;
      }
    } else {
      say(true, "a preset deck (no seed): the commitment covers the deck alone");
    }
    const digest = await algorithm.commit(seed, deck);
    ok = say(digest === inputs.commitment,
             digest === inputs.commitment
               ? `commitment matches: ${digest}`
               : `commitment does not match: published ${inputs.commitment}, recomputed ${digest}`) && ok;
    return { ok, lines };
  }

  FK.fairness = { check, ALGORITHMS, sha256, hex };
})(window.FK = window.FK || {});
