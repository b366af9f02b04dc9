#include "bench/kernel/decode_cases.h"

#include <string>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace hummingd::bench {

std::string DecodeLayersText() {
  std::string text;
  for (const auto& [n, k] : kDecodeLayers) {
    absl::StrAppend(&text, text.empty() ? "" : ",", n, "x", k);
  }
  return text;
}

std::string DecodeSpecsText() { return absl::StrJoin(kDecodeSpecs, ";"); }

absl::StatusOr<std::vector<LayerShape>> ParseShapeList(absl::string_view text) {
  std::vector<LayerShape> shapes;
  for (absl::string_view item : absl::StrSplit(text, ',')) {
    const std::vector<absl::string_view> nk = absl::StrSplit(item, 'x');
    LayerShape shape;
    if (nk.size() != 2 || !absl::SimpleAtoi(nk[0], &shape.n) ||
        !absl::SimpleAtoi(nk[1], &shape.k) || shape.n <= 0 || shape.k <= 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("shape '", item, "' is not NxK with N, K > 0"));
    }
    shapes.push_back(shape);
  }
  return shapes;
}

}  // namespace hummingd::bench
