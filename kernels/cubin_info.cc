#include "kernels/cubin_info.h"

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace hummingd {
namespace {

// ELF64 layout constants (System V gABI); spelled out here rather than taken
// from <elf.h> so the parser does not depend on the libc's header vintage.
constexpr size_t kElfHeaderSize = 64;
constexpr size_t kSectionHeaderSize = 64;
constexpr size_t kProgramHeaderSize = 56;
constexpr size_t kSymbolSize = 24;
constexpr uint8_t kElfClass64 = 2;
constexpr uint8_t kElfDataLittle = 1;
constexpr uint16_t kMachineCuda = 190;  // EM_CUDA
constexpr uint32_t kSectionSymtab = 2;  // SHT_SYMTAB
constexpr uint32_t kSectionNobits = 8;  // SHT_NOBITS
constexpr uint8_t kSymbolFunc = 2;      // STT_FUNC
constexpr uint8_t kBindGlobal = 1;      // STB_GLOBAL

// .nv.info and .nv.compat: records of (format, attribute, payload). Formats
// 1-3 are 4-byte records (value in bytes 2-3); format 4 carries a u16 size
// and that many bytes.
constexpr uint8_t kInfoFormatSized = 4;
constexpr uint8_t kCompatArchSpecific = 0x09;
// Per-function records in .nv.info, sized: (symbol index u32, value u32).
// EIATTR_REGCOUNT: registers per thread; EIATTR_FRAME_SIZE: bytes of stack
// frame per thread (local memory: spills, local arrays), recorded for every
// function, 0 included (checked on NVRTC and nvcc output, CUDA 13).
constexpr uint8_t kInfoRegisterCount = 0x2f;
constexpr uint8_t kInfoFrameSize = 0x11;
constexpr uint64_t kMaxRegistersPerThread = 255;
// Far above any real frame (the local window is 512 KB per thread).
constexpr uint64_t kMaxFrameBytes = uint64_t{1} << 20;
// An entry function's static shared memory: a NOBITS section of this name
// and the function's. Far above any SM's shared memory (228 KB on sm_90).
constexpr std::string_view kSharedSectionPrefix = ".nv.shared.";
constexpr uint64_t kMaxSharedBytes = uint64_t{1} << 20;
// On sm_90 a non-empty .nv.shared.<entry> starts with the block's
// driver-reserved shared memory.
constexpr int kReservedSharedBytesInSection = 1024;

absl::Status Corrupt(std::string_view what) {
  return absl::DataLossError(absl::StrCat("cubin: ", std::string(what)));
}

// Bounds-checked little-endian reads from the whole image.
class ElfImage {
 public:
  explicit ElfImage(std::string_view bytes) : bytes_(bytes) {}

  bool Has(uint64_t offset, uint64_t size) const {
    return offset <= bytes_.size() && size <= bytes_.size() - offset;
  }
  uint64_t Read(uint64_t offset, int width) const {  // caller checked Has()
    uint64_t value = 0;
    for (int i = width - 1; i >= 0; --i) {
      value = (value << 8) | static_cast<uint8_t>(bytes_[offset + i]);
    }
    return value;
  }
  std::string_view Slice(uint64_t offset, uint64_t size) const {
    return bytes_.substr(offset, size);
  }
  size_t size() const { return bytes_.size(); }

 private:
  std::string_view bytes_;
};

struct Section {
  uint32_t name = 0;
  uint32_t type = 0;
  uint64_t offset = 0;
  uint64_t size = 0;
  uint32_t link = 0;
};

struct ElfLayout {
  std::vector<Section> sections;
  uint32_t flags = 0;
  uint8_t abi_version = 0;
  std::string_view section_names;  // .shstrtab
};

// A NUL-terminated string at `offset` of a string table.
absl::StatusOr<std::string_view> TableString(std::string_view table,
                                             uint64_t offset) {
  if (offset >= table.size()) return Corrupt("string offset out of bounds");
  const size_t end = table.find('\0', offset);
  if (end == std::string_view::npos) return Corrupt("unterminated string");
  return table.substr(offset, end - offset);
}

absl::StatusOr<std::string_view> SectionBytes(const ElfImage& image,
                                              const Section& section) {
  if (section.type == kSectionNobits) return std::string_view();
  if (!image.Has(section.offset, section.size)) {
    return Corrupt("section contents out of bounds");
  }
  return image.Slice(section.offset, section.size);
}

absl::Status CheckSegments(const ElfImage& image) {
  const uint64_t table_offset = image.Read(32, 8);
  const uint64_t entry_size = image.Read(54, 2);
  const uint64_t count = image.Read(56, 2);
  if (count == 0) return absl::OkStatus();
  if (entry_size != kProgramHeaderSize ||
      !image.Has(table_offset, count * kProgramHeaderSize)) {
    return Corrupt("program header table out of bounds");
  }
  for (uint64_t i = 0; i < count; ++i) {
    const uint64_t at = table_offset + i * kProgramHeaderSize;
    if (!image.Has(image.Read(at + 8, 8), image.Read(at + 32, 8))) {
      return Corrupt("segment contents out of bounds");
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<ElfLayout> ReadLayout(const ElfImage& image) {
  if (image.size() < kElfHeaderSize) {
    return Corrupt(absl::StrCat("truncated ELF header (", image.size(),
                                " bytes, need ", kElfHeaderSize, ")"));
  }
  if (image.Read(0, 4) != 0x464C457Fu) return Corrupt("not an ELF file");
  if (image.Read(4, 1) != kElfClass64 || image.Read(5, 1) != kElfDataLittle) {
    return Corrupt("not a 64-bit little-endian ELF");
  }
  if (image.Read(18, 2) != kMachineCuda) {
    return Corrupt(absl::StrCat("e_machine is ", image.Read(18, 2),
                                ", not EM_CUDA (190)"));
  }
  ElfLayout layout;
  layout.abi_version = static_cast<uint8_t>(image.Read(8, 1));
  layout.flags = static_cast<uint32_t>(image.Read(48, 4));
  const uint64_t table_offset = image.Read(40, 8);
  const uint64_t entry_size = image.Read(58, 2);
  const uint64_t count = image.Read(60, 2);
  const uint64_t names_index = image.Read(62, 2);
  if (entry_size != kSectionHeaderSize) {
    return Corrupt(absl::StrCat("section header size ", entry_size));
  }
  if (count == 0 || names_index >= count ||
      !image.Has(table_offset, count * kSectionHeaderSize)) {
    return Corrupt("section header table out of bounds");
  }
  for (uint64_t i = 0; i < count; ++i) {
    const uint64_t at = table_offset + i * kSectionHeaderSize;
    Section section;
    section.name = static_cast<uint32_t>(image.Read(at, 4));
    section.type = static_cast<uint32_t>(image.Read(at + 4, 4));
    section.offset = image.Read(at + 24, 8);
    section.size = image.Read(at + 32, 8);
    section.link = static_cast<uint32_t>(image.Read(at + 40, 4));
    layout.sections.push_back(section);
  }
  // Every byte range the file claims must lie inside it, so that a cubin
  // cut anywhere (the driver needs all of it) is refused here.
  for (const Section& section : layout.sections) {
    RETURN_IF_ERROR(SectionBytes(image, section).status());
  }
  RETURN_IF_ERROR(CheckSegments(image));
  ASSIGN_OR_RETURN(layout.section_names,
                   SectionBytes(image, layout.sections[names_index]));
  return layout;
}

// Calls visit(format, attribute, value, payload) for the records of a
// .nv.info-style section (`what` names it in errors) until it returns false;
// value is bytes 2-3, payload the sized records' bytes.
template <class Visit>
absl::Status ForEachInfoRecord(std::string_view section, std::string_view what,
                               Visit&& visit) {
  size_t at = 0;
  while (at + 4 <= section.size()) {
    const uint8_t format = static_cast<uint8_t>(section[at]);
    const uint8_t attribute = static_cast<uint8_t>(section[at + 1]);
    const uint16_t value =
        static_cast<uint16_t>(static_cast<uint8_t>(section[at + 2]) |
                              (static_cast<uint8_t>(section[at + 3]) << 8));
    if (format == 0 || format > kInfoFormatSized) {
      return Corrupt(absl::StrCat(std::string(what), ": unknown record format ",
                                  static_cast<int>(format)));
    }
    std::string_view payload;
    if (format == kInfoFormatSized) {
      // A sized record running past the section ends the walk.
      if (value > section.size() - at - 4) break;
      payload = section.substr(at + 4, value);
      at += 4 + size_t{value};
    } else {
      at += 4;
    }
    if (!visit(format, attribute, value, payload)) break;
  }
  return absl::OkStatus();
}

absl::StatusOr<bool> ReadArchSpecific(std::string_view compat) {
  bool arch_specific = false;
  RETURN_IF_ERROR(ForEachInfoRecord(
      compat, ".nv.compat",
      [&](uint8_t format, uint8_t attribute, uint16_t value, std::string_view) {
        // The first such record decides; the walk ends there.
        if (format != kInfoFormatSized && attribute == kCompatArchSpecific) {
          arch_specific = (value & 0xFFu) != 0;
          return false;
        }
        return true;
      }));
  return arch_specific;
}

// An entry point: its index in the symbol table, and its name.
struct KernelSymbol {
  uint64_t index;
  std::string name;
};

absl::StatusOr<std::vector<KernelSymbol>> ReadKernels(const ElfImage& image,
                                                      const ElfLayout& layout) {
  std::vector<KernelSymbol> kernels;
  for (const Section& symtab : layout.sections) {
    if (symtab.type != kSectionSymtab) continue;
    if (symtab.link >= layout.sections.size()) {
      return Corrupt("symbol table links to a missing string table");
    }
    ASSIGN_OR_RETURN(const std::string_view symbols,
                     SectionBytes(image, symtab));
    ASSIGN_OR_RETURN(const std::string_view names,
                     SectionBytes(image, layout.sections[symtab.link]));
    for (size_t at = 0; at + kSymbolSize <= symbols.size(); at += kSymbolSize) {
      const ElfImage symbol(symbols.substr(at, kSymbolSize));
      const uint8_t info = static_cast<uint8_t>(symbol.Read(4, 1));
      const uint64_t section_index = symbol.Read(6, 2);
      if ((info & 0xF) != kSymbolFunc || (info >> 4) != kBindGlobal ||
          section_index == 0 || section_index >= layout.sections.size()) {
        continue;
      }
      ASSIGN_OR_RETURN(const std::string_view name,
                       TableString(names, symbol.Read(0, 4)));
      ASSIGN_OR_RETURN(const std::string_view section_name,
                       TableString(layout.section_names,
                                   layout.sections[section_index].name));
      // An entry point owns its own ".text.<name>" section; device
      // functions that were not inlined live inside their caller's.
      if (section_name == absl::StrCat(".text.", std::string(name))) {
        kernels.push_back(KernelSymbol{at / kSymbolSize, std::string(name)});
      }
    }
  }
  std::sort(kernels.begin(), kernels.end(),
            [](const KernelSymbol& a, const KernelSymbol& b) {
              return a.name < b.name;
            });
  return kernels;
}

// A per-function .nv.info attribute to collect: values above `max_value`
// are corrupt and skipped.
struct EntryAttribute {
  uint8_t attribute;
  uint64_t max_value;
  std::map<std::string, int>* values;
};

// Each entry point's value of every `wanted` attribute, in one walk of
// .nv.info. Informational: a record format this parser does not know ends
// the walk, never the inspection (a loader must not refuse a newer
// toolchain's cubin over it).
void ReadEntryValues(std::string_view info,
                     const std::vector<KernelSymbol>& kernels,
                     std::initializer_list<EntryAttribute> wanted) {
  (void)ForEachInfoRecord(
      info, ".nv.info",
      [&](uint8_t format, uint8_t attribute, uint16_t, std::string_view data) {
        if (format != kInfoFormatSized || data.size() < 8) return true;
        for (const EntryAttribute& target : wanted) {
          if (attribute != target.attribute) continue;
          const ElfImage record(data);
          const uint64_t symbol = record.Read(0, 4);
          const uint64_t value = record.Read(4, 4);
          if (value > target.max_value) continue;
          for (const KernelSymbol& kernel : kernels) {
            if (kernel.index == symbol) {
              (*target.values)[kernel.name] = static_cast<int>(value);
            }
          }
        }
        return true;
      });
}

}  // namespace

std::string CubinInfo::ArchName() const {
  return absl::StrCat("sm_", sm, arch_specific ? "a" : "");
}

absl::StatusOr<CubinInfo> InspectCubin(std::string_view cubin) {
  const ElfImage image(cubin);
  ASSIGN_OR_RETURN(const ElfLayout layout, ReadLayout(image));
  CubinInfo info;
  info.elf_abi_version = layout.abi_version;
  info.sm =
      static_cast<int>(layout.abi_version >= 8 ? (layout.flags >> 8) & 0xFFu
                                               : layout.flags & 0xFFu);
  if (info.sm == 0) return Corrupt("e_flags names no SM");
  ASSIGN_OR_RETURN(const std::vector<KernelSymbol> kernels,
                   ReadKernels(image, layout));
  for (const KernelSymbol& kernel : kernels) {
    info.kernels.push_back(kernel.name);
    info.shared_bytes[kernel.name] = 0;
  }
  for (const Section& section : layout.sections) {
    ASSIGN_OR_RETURN(const std::string_view name,
                     TableString(layout.section_names, section.name));
    if (name.substr(0, kSharedSectionPrefix.size()) == kSharedSectionPrefix) {
      const auto kernel = info.shared_bytes.find(
          std::string(name.substr(kSharedSectionPrefix.size())));
      if (kernel == info.shared_bytes.end()) continue;
      // Informational, as the .nv.info records: an absurd size is left out
      // (and so reads as no record), never a reason to refuse the cubin.
      if (section.size > kMaxSharedBytes) {
        info.shared_bytes.erase(kernel);
      } else {
        kernel->second = static_cast<int>(section.size);
      }
      continue;
    }
    if (name != ".nv.compat" && name != ".nv.info") continue;
    ASSIGN_OR_RETURN(const std::string_view bytes,
                     SectionBytes(image, section));
    if (name == ".nv.compat") {
      ASSIGN_OR_RETURN(info.arch_specific, ReadArchSpecific(bytes));
    } else {
      ReadEntryValues(
          bytes, kernels,
          {{kInfoRegisterCount, kMaxRegistersPerThread, &info.registers},
           {kInfoFrameSize, kMaxFrameBytes, &info.frame_bytes}});
    }
  }
  return info;
}

absl::StatusOr<int> KernelStaticSharedBytes(const CubinInfo& info,
                                            const std::string& entry) {
  const auto shared = info.shared_bytes.find(entry);
  if (shared == info.shared_bytes.end()) {
    return absl::NotFoundError(
        absl::StrCat("cubin: no shared-memory record for ", entry));
  }
  if (info.sm < 90 || shared->second == 0) return shared->second;
  if (shared->second < kReservedSharedBytesInSection) {
    return Corrupt(absl::StrCat(".nv.shared.", entry, " of ", shared->second,
                                " bytes is smaller than the block's ",
                                kReservedSharedBytesInSection,
                                "-byte reservation it starts with"));
  }
  return shared->second - kReservedSharedBytesInSection;
}

bool CubinRunsOn(const CubinInfo& cubin, const GpuTarget& device) {
  if (cubin.arch_specific) return cubin.sm == device.sm;
  return cubin.sm / 10 == device.sm / 10 && cubin.sm <= device.sm;
}

}  // namespace hummingd
