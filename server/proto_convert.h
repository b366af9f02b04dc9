#pragma once

// Wire messages <-> plain kernel structs. Every field of a request is checked
// here or in kernels/ validation; errors are INVALID_ARGUMENT naming the
// field path as the client wrote it ("request.spec.weight.bits: …").

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "cache/records.h"
#include "hummingd/v1/kernel_service.pb.h"
#include "kernels/plan.h"

namespace hummingd {

struct RequestLimits {
  ShapeLimits shape;
};

// Converts, canonicalizes and validates one request.
absl::StatusOr<KernelRequest> KernelRequestFromProto(
    const v1::KernelRequest& proto, const RequestLimits& limits);

// The inverse, for clients (hummingctl, SDK) building requests.
v1::KernelRequest KernelRequestToProto(const KernelRequest& request);

v1::LaunchParams LaunchParamsToProto(const LaunchParams& launch);

// One kernel of a KernelSet: the plan entry's range, role, config and
// launch with the artifact's entry, checksum and compile facts; the cubin
// bytes only when `with_cubin` (a set sends each artifact once).
void FillKernelProto(const PlanRecordEntry& entry,
                     const ArtifactRecord& artifact, v1::CacheOutcome outcome,
                     bool with_cubin, v1::Kernel* kernel);

// Parsing helpers shared by clients.
absl::StatusOr<KernelFamily> ParseKernelFamily(absl::string_view text);
absl::StatusOr<GemmKind> ParseGemmKind(absl::string_view text);
std::string KernelFamilyName(KernelFamily family);

}  // namespace hummingd
