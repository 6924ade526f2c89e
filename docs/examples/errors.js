// Reading the referee's rich error details in Node.js, whose gRPC library (@grpc/grpc-js) has
// no helper for them: the trailer `grpc-status-details-bin` holds a serialized
// google.rpc.Status, whose `details` hold one google.rpc.ErrorInfo (the stable reason code).
//
// Built only from the repository's proto/ (the referee's service and google/rpc's
// status.proto and error_details.proto, docs/integrating.md#reading-a-refusal):
//
//   npm install --no-save @grpc/grpc-js @grpc/proto-loader protobufjs
//   node docs/examples/errors.js --server 127.0.0.1:50051
//
// It asks a referee for a table that does not exist and prints the refusal as one JSON line:
// {"code":5,"codeName":"NOT_FOUND","message":"...","reason":"TABLE_NOT_FOUND",
//  "domain":"fiftyk.referee.v1","metadata":{...}}
// The platform key is $FIFTYK_PLATFORM_KEY, else the development key a loopback referee
// accepts. `decodeStatusDetails(buffer)` is the part to copy: it works on any gRPC error.
"use strict";

const path = require("node:path");
const grpc = require("@grpc/grpc-js");
const protoLoader = require("@grpc/proto-loader");
const protobuf = require("protobufjs");

const PROTO_DIR = path.resolve(__dirname, "..", "..", "proto");
const DETAILS_TRAILER = "grpc-status-details-bin";
const ERROR_INFO_TYPE = "type.googleapis.com/google.rpc.ErrorInfo";
const DEV_PLATFORM_KEY = "fiftyk-dev-platform-key-loopback-only";
const NO_SUCH_TABLE = "00000000-0000-4000-8000-000000000000";
const DEADLINE_MS = 10000;

// google.rpc.Status and google.rpc.ErrorInfo, read from proto/google/rpc (protobufjs brings
// google/protobuf/any.proto and duration.proto itself).
const rpcProtos = new protobuf.Root();
rpcProtos.resolvePath = (origin, target) =>
  target.startsWith("google/rpc/") ? path.join(PROTO_DIR, target) : target;
rpcProtos.loadSync(["google/rpc/status.proto", "google/rpc/error_details.proto"]);
const Status = rpcProtos.lookupType("google.rpc.Status");
const ErrorInfo = rpcProtos.lookupType("google.rpc.ErrorInfo");

// The google.rpc.Status in a `grpc-status-details-bin` value, with its ErrorInfo (or null):
// {code, message, reason, domain, metadata}.
function decodeStatusDetails(buffer) {
  const status = Status.decode(buffer);
  const found = status.details.find((detail) => detail.type_url === ERROR_INFO_TYPE);
  const info = found ? ErrorInfo.decode(found.value) : null;
  return {
    code: status.code,
    message: status.message,
    reason: info ? info.reason : null,
    domain: info ? info.domain : null,
    metadata: info ? Object.fromEntries(Object.entries(info.metadata)) : {},
  };
}

// What a failed call's error says: its status code, and the details when the referee sent
// them (errors of the transport itself, such as an unreachable server, carry none).
function describeError(error) {
  const codeName = Object.keys(grpc.status).find((name) => grpc.status[name] === error.code);
  const [details] = error.metadata ? error.metadata.get(DETAILS_TRAILER) : [];
  if (!details) {
    return { code: error.code, codeName, message: error.details, reason: null };
  }
  return { codeName, ...decodeStatusDetails(details) };
}

function refereeClient(server) {
  const definition = protoLoader.loadSync("fiftyk/referee/v1/referee.proto", {
    includeDirs: [PROTO_DIR], keepCase: true, longs: String, enums: String, defaults: true,
  });
  const { RefereeService } = grpc.loadPackageDefinition(definition).fiftyk.referee.v1;
  return new RefereeService(server, grpc.credentials.createInsecure());
}

function main(argv) {
  const at = argv.indexOf("--server");
  const server = at >= 0 ? argv[at + 1] : "127.0.0.1:50051";
  const client = refereeClient(server);
  const metadata = new grpc.Metadata();
  metadata.set("x-fiftyk-platform-key", process.env.FIFTYK_PLATFORM_KEY || DEV_PLATFORM_KEY);
  client.GetTable({ table_id: NO_SUCH_TABLE }, metadata,
    { deadline: Date.now() + DEADLINE_MS }, (error, response) => {
      client.close();
      if (!error) {
        console.error(`unexpected: table ${response.table.table_id} exists`);
        process.exitCode = 1;
        return;
      }
      const described = describeError(error);
      console.log(JSON.stringify(described));
      if (described.reason === null) {  // the transport's error: no referee answered
        process.exitCode = 1;
      }
    });
}

module.exports = { decodeStatusDetails, describeError };

if (require.main === module) {
  main(process.argv.slice(2));
}
