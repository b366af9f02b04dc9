#pragma once

// What a cubin (an NVIDIA ELF) says about itself: the SM it was compiled for
// and its kernel entry points. Loaders use it to refuse a cubin that cannot
// run on the device before the driver does, with a clearer message.
//
// Encoding (CUDA 13, ELF ABI version 8, checked on NVRTC output for sm_75 ...
// sm_120a): e_flags bits [8, 16) hold the SM number (0x5a = 90); the "a"
// (arch-specific) variant is not in e_flags but in the .nv.compat section,
// attribute 0x09 = 1. Older toolchains (ABI version < 8) kept the SM number
// in e_flags bits [0, 8).

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "kernels/gpu_target.h"

namespace hummingd {

struct CubinInfo {
  int elf_abi_version = 0;
  int sm = 0;                  // compute capability * 10: 75, 80, 90, 120...
  bool arch_specific = false;  // sm_90a-style: runs on exactly this SM only
  std::vector<std::string> kernels;  // entry functions, sorted
  // Registers per thread of each entry function, as the compiler recorded
  // them (.nv.info EIATTR_REGCOUNT); entries it did not record are absent.
  std::map<std::string, int> registers;
  // Bytes of stack frame per thread of each entry function (.nv.info
  // EIATTR_FRAME_SIZE): local memory for spilled registers and local
  // arrays; 0 for a kernel that keeps everything in registers.
  std::map<std::string, int> frame_bytes;
  // Bytes of static shared memory of each entry function: its
  // .nv.shared.<name> section, 0 without one (cuobjdump's SHARED). On sm_90
  // a non-empty section starts with the 1 KB the driver reserves per block,
  // so that the kernel's variables lie past it, and counts it
  // (KernelStaticSharedBytes leaves it out).
  std::map<std::string, int> shared_bytes;

  // "sm_90a", the spelling GpuTarget::ArchName() uses.
  std::string ArchName() const;
};

// DATA_LOSS when `cubin` is not a well-formed 64-bit little-endian CUDA ELF
// (truncated, wrong magic or machine, section table out of bounds, ...): a
// cubin that fails here is corrupt, whatever its origin.
absl::StatusOr<CubinInfo> InspectCubin(std::string_view cubin);

// The static shared memory `entry` takes per block besides its dynamic
// bytes and the driver's 1 KB reservation: its section less the
// reservation on sm_90 and later (CUDA 13 on sm_90a lays it out there; an
// sm_90 section smaller than it is DATA_LOSS), the whole section elsewhere.
// NOT_FOUND for an entry the cubin lacks.
absl::StatusOr<int> KernelStaticSharedBytes(const CubinInfo& info,
                                            const std::string& entry);

// Whether SASS for `cubin` runs on a device of compute capability
// `device.sm`: same major version and a minor version no newer than the
// device's; an arch-specific cubin needs exactly its own SM.
bool CubinRunsOn(const CubinInfo& cubin, const GpuTarget& device);

}  // namespace hummingd
