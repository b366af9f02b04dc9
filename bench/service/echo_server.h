#pragma once

// The transport floor: a gRPC raw-callback server on a unix socket whose only
// work per call is handing back a pre-serialized payload, configured like the
// daemon's server (message limits, health service).

#include <cstdint>
#include <string>

namespace hummingd::bench {

// Serves until SIGTERM or SIGINT; returns the process exit code.
int RunEchoServer(const std::string& socket_path, int64_t payload_bytes);

// The payload length that makes a serialized EchoResponse exactly
// `message_bytes` long (tag + length varint + payload).
int64_t EchoPayloadForMessageBytes(int64_t message_bytes);

}  // namespace hummingd::bench
