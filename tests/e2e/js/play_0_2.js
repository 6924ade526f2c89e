// A Node.js client written from the 0.2 proto (tests/support/proto-0.2, frozen as 0.2 shipped
// it): it plays a whole hand of either game with the RPCs and fields 0.2 had (Play, Pass, Declare,
// Bury, ListLegalPlays' `actions`, HandView.shengji) and prints the hand's 0.2 result as one
// JSON line: {"game":"...","hand_id":"...","actions":N,"result":{...}}.
//
//   node tests/e2e/js/play_0_2.js --server 127.0.0.1:50051 --game shengji
"use strict";

const path = require("node:path");
const grpc = require("@grpc/grpc-js");
const protoLoader = require("@grpc/proto-loader");

const PROTO_DIR = path.resolve(__dirname, "..", "..", "support", "proto-0.2");
const DEV_PLATFORM_KEY = "fiftyk-dev-platform-key-loopback-only";
const PRESETS = { fiftyk: "classic", shengji: "tractor" };
const PLAYERS = 4;
const MAX_ACTIONS = 5000;
const DEADLINE_MS = 10000;

function call(client, method, request, metadata) {
  return new Promise((resolve, reject) => {
    client[method](request, metadata, { deadline: Date.now() + DEADLINE_MS },
      (error, response) => (error ? reject(error) : resolve(response)));
  });
}

function credential(name, value) {
  const metadata = new grpc.Metadata();
  metadata.set(name, value);
  return metadata;
}

// One 0.2 command for one seat ([method, request]), or null when the seat has nothing to do.
async function choose(client, tableId, handId, seat, token) {
  const ids = { table_id: tableId, hand_id: handId };
  const legal = await call(client, "ListLegalPlays", ids, token);
  if (legal.actions.includes("ACTION_KIND_BURY")) {
    return ["Bury", { ...ids, cards: legal.plays[0].cards }];
  }
  if (legal.actions.includes("ACTION_KIND_DECLARE")) {
    const view = (await call(client, "GetHandView", ids, token)).hand;
    return view.shengji.spoken.includes(seat) ? null : ["Declare", { ...ids, cards: [] }];
  }
  if (legal.plays.length > 0) {
    return ["Play", { ...ids, cards: legal.plays[0].cards }];
  }
  return legal.may_pass ? ["Pass", ids] : null;
}

async function main(argv) {
  const option = (name, fallback) => {
    const at = argv.indexOf(name);
    return at >= 0 ? argv[at + 1] : fallback;
  };
  const game = option("--game", "fiftyk");
  const definition = protoLoader.loadSync("fiftyk/referee/v1/referee.proto", {
    includeDirs: [PROTO_DIR], keepCase: true, longs: String, enums: String, defaults: true,
  });
  const { RefereeService } = grpc.loadPackageDefinition(definition).fiftyk.referee.v1;
  const client = new RefereeService(option("--server", "127.0.0.1:50051"),
    grpc.credentials.createInsecure());
  const platform = credential("x-fiftyk-platform-key", DEV_PLATFORM_KEY);
  try {
    const created = await call(client, "CreateTable",
      { ruleset: { game, preset: PRESETS[game] }, players: PLAYERS }, platform);
    const tableId = created.table.table_id;
    const tokens = [];
    for (let seat = 0; seat < PLAYERS; seat += 1) {
      const joined = await call(client, "JoinTable",
        { table_id: tableId, player_id: `old-node-${seat}`, seat }, platform);
      tokens.push(credential("authorization", `Bearer ${joined.seat_token}`));
    }
    let hand = (await call(client, "StartHand", { table_id: tableId }, platform)).hand;
    let actions = 0;
    while (hand.status !== "HAND_STATUS_COMPLETED") {
      let acted = false;
      for (let seat = 0; seat < PLAYERS && !acted; seat += 1) {
        const command = await choose(client, tableId, hand.hand_id, seat, tokens[seat]);
        if (command !== null) {
          hand = (await call(client, command[0], command[1], tokens[seat])).hand;
          acted = true;
          actions += 1;
        }
      }
      if (!acted || actions > MAX_ACTIONS) {
        throw new Error(`hand ${hand.hand_id}: no seat could act after ${actions} actions`);
      }
    }
    const result = game === "shengji" ? hand.shengji.result : hand.result;
    console.log(JSON.stringify({ game, hand_id: hand.hand_id, actions, result }));
  } finally {
    client.close();
  }
}

main(process.argv.slice(2)).catch((error) => {
  console.error(`play_0_2.js: ${error.message}`);
  process.exitCode = 1;
});
