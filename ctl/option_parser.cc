#include "ctl/option_parser.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace hummingd {

std::string ParsedOptions::Get(const std::string& name,
                               const std::string& fallback) const {
  auto it = values.find(name);
  return it == values.end() ? fallback : it->second;
}

absl::StatusOr<int64_t> ParsedOptions::GetInt(const std::string& name,
                                              int64_t fallback) const {
  auto it = values.find(name);
  if (it == values.end()) return fallback;
  int64_t value = 0;
  if (!absl::SimpleAtoi(it->second, &value)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--", name, ": must be an integer (got '", it->second, "')"));
  }
  return value;
}

absl::StatusOr<ParsedOptions> ParseOptions(
    const std::vector<std::string>& args,
    const std::set<std::string>& with_value,
    const std::set<std::string>& boolean) {
  ParsedOptions parsed;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg.size() < 3 || arg.rfind("--", 0) != 0) {
      parsed.positional.push_back(arg);
      continue;
    }
    std::string name = arg.substr(2);
    std::string value;
    bool has_inline_value = false;
    if (size_t eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
      has_inline_value = true;
    }
    if (boolean.count(name)) {
      if (has_inline_value) {
        return absl::InvalidArgumentError(
            absl::StrCat("--", name, ": takes no value"));
      }
      parsed.switches.insert(name);
      continue;
    }
    if (!with_value.count(name)) {
      return absl::InvalidArgumentError(
          absl::StrCat("unknown option --", name));
    }
    if (!has_inline_value) {
      if (i + 1 >= args.size()) {
        return absl::InvalidArgumentError(
            absl::StrCat("--", name, ": needs a value"));
      }
      value = args[++i];
    }
    parsed.values[name] = value;
  }
  return parsed;
}

}  // namespace hummingd
