#pragma once

// A tiny "--name value" / "--name=value" parser for subcommand options, with
// positional arguments collected separately. Unknown options are errors.

#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace hummingd {

struct ParsedOptions {
  std::map<std::string, std::string> values;  // name (no dashes) -> value
  std::set<std::string> switches;             // given boolean options
  std::vector<std::string> positional;

  bool Has(const std::string& name) const { return values.count(name) > 0; }
  std::string Get(const std::string& name,
                  const std::string& fallback = "") const;
  absl::StatusOr<int64_t> GetInt(const std::string& name,
                                 int64_t fallback) const;
};

// `with_value`: options that take a value; `boolean`: switches.
absl::StatusOr<ParsedOptions> ParseOptions(
    const std::vector<std::string>& args,
    const std::set<std::string>& with_value,
    const std::set<std::string>& boolean);

}  // namespace hummingd
