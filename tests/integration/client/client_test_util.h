#pragma once

// Helpers shared by the client SDK's black-box tests.

#include <cstdint>
#include <map>
#include <string>

#include "hummingd/kernel_client.h"
#include "hummingd/v1/kernel_service.pb.h"
#include "tests/integration/daemon_test_util.h"

namespace hummingd::testing {

// A small dense dequant layer (compiles in well under a second).
v1::KernelRequest LayerRequest(int64_t n, int64_t k,
                               const std::string& arch = "sm_80",
                               const std::string& spec = kW4Spec);

client::ClientOptions ClientOptionsFor(client::ResolveMode mode,
                                       const std::string& socket_path,
                                       const std::string& cache_dir);

// The set without what depends on the call rather than the request
// (outcome, compile_ms, plan_cached).
v1::KernelSet WithoutCallFields(v1::KernelSet set);

// artifact key -> cubin bytes.
std::map<std::string, std::string> CubinsByKey(const v1::KernelSet& set);

uint64_t Fnv1a64(const std::string& bytes);

}  // namespace hummingd::testing
