// Reading each game's own messages in Node.js. What only one game has travels in the
// referee's common messages as a google.protobuf.Any holding a message of that game's own
// proto package (docs/integrating.md#game-payloads): HandView.game_view, HandScore.game_outcome
// and Event.game_event. The Any's type URL names the message, e.g.
// "type.googleapis.com/fiftyk.games.shengji.v1.HandView"; its bytes decode with the game's
// .proto file (proto/fiftyk/games/<game>/v1/<game>.proto).
//
// Built only from the repository's proto/:
//
//   npm install --no-save @grpc/grpc-js @grpc/proto-loader protobufjs
//   node docs/examples/game_payloads.js --server 127.0.0.1:50051 --game shengji
//
// It opens a table of the game (`--game fiftyk` or `shengji`), seats four bots, deals a hand
// and plays it to its end through Act, with the kinds and plays ListLegalPlays offers (a
// Shengji seat reads from its own `game_view` whether it has already spoken in the open
// declaration window). Then it prints one JSON line: the hand, the message types of its
// Any payloads, and its result decoded from GetScores' `game_outcome`:
// {"game":"shengji","hand_id":"...","actions":123,"view_type":"fiftyk.games.shengji.v1.HandView",
//  "outcome_type":"fiftyk.games.shengji.v1.HandResult","outcome":{...},"event_types":[...]}
// The keys are $FIFTYK_PLATFORM_KEY and $FIFTYK_AUDIT_KEY (the hand's events), else the
// development keys a loopback referee accepts. `unpack(any)` is the part to copy.
"use strict";

const path = require("node:path");
const grpc = require("@grpc/grpc-js");
const protoLoader = require("@grpc/proto-loader");
const protobuf = require("protobufjs");

const PROTO_DIR = path.resolve(__dirname, "..", "..", "proto");
const DEV_PLATFORM_KEY = "fiftyk-dev-platform-key-loopback-only";
const DEV_AUDIT_KEY = "fiftyk-dev-audit-key-loopback-only";
const PRESETS = { fiftyk: "classic", shengji: "tractor" };
const PLAYERS = 4;
const MAX_ACTIONS = 5000;
const DEADLINE_MS = 10000;
const OBJECT_OPTIONS = { longs: String, enums: String, defaults: true };

// The game protos (and the referee's, which they import), read from proto/; protobufjs
// brings google/protobuf's own files (any, struct, timestamp) itself.
const gameTypes = new protobuf.Root();
gameTypes.resolvePath = (origin, target) =>
  target.startsWith("fiftyk/") ? path.join(PROTO_DIR, target) : target;

// The message in an Any, as a plain object: its type is the last part of the type URL.
function unpack(any) {
  const name = any.type_url.slice(any.type_url.lastIndexOf("/") + 1);
  const type = gameTypes.lookupType(name);
  return type.toObject(type.decode(any.value), OBJECT_OPTIONS);
}

function typeName(any) {
  return any.type_url.slice(any.type_url.lastIndexOf("/") + 1);
}

function refereeClient(server) {
  const definition = protoLoader.loadSync("fiftyk/referee/v1/referee.proto", {
    includeDirs: [PROTO_DIR], keepCase: true, longs: String, enums: String, defaults: true,
  });
  const { RefereeService } = grpc.loadPackageDefinition(definition).fiftyk.referee.v1;
  return new RefereeService(server, grpc.credentials.createInsecure());
}

function credential(name, value) {
  const metadata = new grpc.Metadata();
  metadata.set(name, value);
  return metadata;
}

function call(client, method, request, metadata) {
  return new Promise((resolve, reject) => {
    client[method](request, metadata, { deadline: Date.now() + DEADLINE_MS },
      (error, response) => (error ? reject(error) : resolve(response)));
  });
}

// One action of one seat, or null when the seat has nothing to do now.
async function choose(client, tableId, handId, seat, token) {
  const legal = await call(client, "ListLegalPlays", { table_id: tableId, hand_id: handId },
    token);
  const first = legal.plays.length > 0 ? legal.plays[0].cards : [];
  if (legal.kinds.includes("play") && first.length > 0) {
    return { kind: "play", cards: first };
  }
  if (legal.kinds.includes("pass")) {
    return { kind: "pass", cards: [] };
  }
  if (legal.kinds.includes("bury")) {
    return { kind: "bury", cards: first };
  }
  if (legal.kinds.includes("declare")) {
    // Declare nothing, once per window: the seat's own view says who has spoken.
    const view = await call(client, "GetHandView", { table_id: tableId, hand_id: handId },
      token);
    const own = unpack(view.hand.game_view);
    return own.spoken.includes(seat) ? null : { kind: "declare", cards: [] };
  }
  return null;
}

async function playHand(client, platform, tableId, tokens) {
  let hand = (await call(client, "StartHand", { table_id: tableId }, platform)).hand;
  const handId = hand.hand_id;
  let actions = 0;
  while (hand.status !== "HAND_STATUS_COMPLETED") {
    let acted = false;
    for (let seat = 0; seat < tokens.length && !acted; seat += 1) {
      const action = await choose(client, tableId, handId, seat, tokens[seat]);
      if (action !== null) {
        hand = (await call(client, "Act", { table_id: tableId, hand_id: handId, ...action },
          tokens[seat])).hand;
        acted = true;
        actions += 1;
      }
    }
    if (!acted || actions > MAX_ACTIONS) {
      throw new Error(`hand ${handId}: no seat could act after ${actions} actions`);
    }
  }
  return { hand, actions };
}

async function main(argv) {
  const option = (name, fallback) => {
    const at = argv.indexOf(name);
    return at >= 0 ? argv[at + 1] : fallback;
  };
  const server = option("--server", "127.0.0.1:50051");
  const game = option("--game", "fiftyk");
  gameTypes.loadSync(`fiftyk/games/${game}/v1/${game}.proto`, { keepCase: true });
  const client = refereeClient(server);
  const platform = credential("x-fiftyk-platform-key",
    process.env.FIFTYK_PLATFORM_KEY || DEV_PLATFORM_KEY);
  const audit = credential("x-fiftyk-audit-key", process.env.FIFTYK_AUDIT_KEY || DEV_AUDIT_KEY);
  try {
    const created = await call(client, "CreateTable",
      { ruleset: { game, preset: PRESETS[game] }, players: PLAYERS }, platform);
    const tableId = created.table.table_id;
    const tokens = [];
    for (let seat = 0; seat < PLAYERS; seat += 1) {
      const joined = await call(client, "JoinTable",
        { table_id: tableId, player_id: `node-${seat}`, seat }, platform);
      tokens.push(credential("authorization", `Bearer ${joined.seat_token}`));
    }
    const { hand, actions } = await playHand(client, platform, tableId, tokens);
    const scores = await call(client, "GetScores", { table_id: tableId }, platform);
    const row = scores.hands.find((score) => score.hand_id === hand.hand_id);
    const history = await call(client, "GetHandHistory", { hand_id: hand.hand_id, limit: 1000 },
      audit);
    const eventTypes = [...new Set(history.events.map((event) => typeName(event.game_event)))];
    console.log(JSON.stringify({
      game, hand_id: hand.hand_id, actions,
      view_type: typeName(hand.game_view),
      outcome_type: typeName(row.game_outcome),
      outcome: unpack(row.game_outcome),
      event_types: eventTypes,
    }));
  } finally {
    client.close();
  }
}

module.exports = { unpack };

if (require.main === module) {
  main(process.argv.slice(2)).catch((error) => {
    console.error(`game_payloads.js: ${error.message}`);
    process.exitCode = 1;
  });
}
