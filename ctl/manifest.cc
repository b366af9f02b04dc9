#include "ctl/manifest.h"

#include <fstream>
#include <limits>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "yaml-cpp/yaml.h"

namespace hummingd {
namespace {

struct LayerDefaults {
  std::string arch;
  std::string family = "dequant";
  std::string spec;
  std::string kind = "dense";
  uint32_t max_m = 0;
};

absl::Status Invalid(const std::string& where, absl::string_view rule) {
  return absl::InvalidArgumentError(absl::StrCat(where, ": ", rule));
}

// A mapping's key as text. YAML allows a sequence or a mapping as a key,
// and as<std::string>() throws on one; the key is quoted as YAML, clipped.
absl::StatusOr<std::string> KeyName(const YAML::Node& key,
                                    const std::string& where) {
  if (key.IsScalar()) return key.as<std::string>();
  YAML::Emitter shown;
  shown << YAML::Flow << key;
  std::string text = shown.c_str();
  if (text.size() > 64) text = text.substr(0, 61) + "...";
  return Invalid(where, absl::StrCat("key ", text, " must be a string"));
}

absl::StatusOr<std::string> ScalarString(const YAML::Node& node,
                                         const std::string& where) {
  if (!node.IsScalar()) return Invalid(where, "must be a string");
  return node.as<std::string>();
}

absl::StatusOr<int64_t> ScalarInt(const YAML::Node& node,
                                  const std::string& where) {
  if (!node.IsScalar()) return Invalid(where, "must be an integer");
  try {
    return node.as<int64_t>();
  } catch (const YAML::Exception&) {
    return Invalid(where, absl::StrCat("must be an integer (got '",
                                       node.as<std::string>(), "')"));
  }
}

// KernelRequest.max_m: 0 (every range) or the largest M to serve.
absl::StatusOr<uint32_t> ScalarMaxM(const YAML::Node& node,
                                    const std::string& where) {
  ASSIGN_OR_RETURN(int64_t value, ScalarInt(node, where));
  if (value < 0 || value > std::numeric_limits<uint32_t>::max()) {
    return Invalid(where, absl::StrCat("must be 0 (every M range) or a "
                                       "positive 32-bit token count (got ",
                                       value, ")"));
  }
  return static_cast<uint32_t>(value);
}

absl::StatusOr<v1::KernelFamily> FamilyFromText(const std::string& text,
                                                const std::string& where) {
  if (text == "dequant") return v1::KERNEL_FAMILY_DEQUANT;
  if (text == "gemm") return v1::KERNEL_FAMILY_GEMM;
  return Invalid(where,
                 absl::StrCat("must be dequant or gemm (got '", text, "')"));
}

absl::StatusOr<v1::GemmKind> KindFromText(const std::string& text,
                                          const std::string& where) {
  if (text == "dense") return v1::GEMM_KIND_DENSE;
  if (text == "moe_indexed") return v1::GEMM_KIND_MOE_INDEXED;
  if (text == "moe_grouped") return v1::GEMM_KIND_MOE_GROUPED;
  return Invalid(
      where, absl::StrCat("must be dense, moe_indexed or moe_grouped (got '",
                          text, "')"));
}

absl::StatusOr<v1::KernelRequest> ParseLayer(const YAML::Node& layer,
                                             const std::string& where,
                                             const LayerDefaults& defaults,
                                             const ManifestOptions& options) {
  if (!layer.IsMap()) return Invalid(where, "must be a mapping");
  static const char* const kKeys[] = {"name",    "n",     "k",    "kind",
                                      "experts", "top_k", "spec", "family",
                                      "arch",    "max_m"};
  for (const auto& item : layer) {
    ASSIGN_OR_RETURN(const std::string key, KeyName(item.first, where));
    bool known = false;
    for (const char* allowed : kKeys) known |= key == allowed;
    if (!known) return Invalid(where, absl::StrCat("unknown key '", key, "'"));
  }
  v1::KernelRequest request;
  if (layer["name"]) {
    ASSIGN_OR_RETURN(std::string name,
                     ScalarString(layer["name"], where + ".name"));
    request.set_name(name);
  }
  for (const char* required : {"n", "k"}) {
    if (!layer[required]) {
      return Invalid(absl::StrCat(where, ".", required), "is required");
    }
  }
  ASSIGN_OR_RETURN(int64_t n, ScalarInt(layer["n"], where + ".n"));
  ASSIGN_OR_RETURN(int64_t k, ScalarInt(layer["k"], where + ".k"));
  request.mutable_shape()->set_n(n);
  request.mutable_shape()->set_k(k);

  std::string kind = defaults.kind;
  if (layer["kind"]) {
    ASSIGN_OR_RETURN(kind, ScalarString(layer["kind"], where + ".kind"));
  }
  ASSIGN_OR_RETURN(v1::GemmKind gemm_kind, KindFromText(kind, where + ".kind"));
  request.mutable_shape()->set_kind(gemm_kind);
  if (layer["experts"]) {
    ASSIGN_OR_RETURN(int64_t experts,
                     ScalarInt(layer["experts"], where + ".experts"));
    request.mutable_shape()->set_experts(experts);
  }
  if (layer["top_k"]) {
    ASSIGN_OR_RETURN(int64_t top_k,
                     ScalarInt(layer["top_k"], where + ".top_k"));
    request.mutable_shape()->set_top_k(top_k);
  }

  std::string spec = defaults.spec;
  if (layer["spec"]) {
    ASSIGN_OR_RETURN(spec, ScalarString(layer["spec"], where + ".spec"));
  }
  if (spec.empty()) return Invalid(where + ".spec", "is required");
  request.mutable_spec()->set_text(spec);

  std::string family = defaults.family;
  if (layer["family"]) {
    ASSIGN_OR_RETURN(family, ScalarString(layer["family"], where + ".family"));
  }
  ASSIGN_OR_RETURN(v1::KernelFamily family_value,
                   FamilyFromText(family, where + ".family"));
  request.set_family(family_value);

  std::string arch = defaults.arch;
  if (layer["arch"]) {
    ASSIGN_OR_RETURN(arch, ScalarString(layer["arch"], where + ".arch"));
  }
  if (!options.arch_override.empty()) arch = options.arch_override;
  if (arch.empty()) {
    return Invalid(where + ".arch", "is required (or pass --arch)");
  }
  request.mutable_gpu()->set_arch(arch);
  request.set_launch_abi(options.launch_abi);

  uint32_t max_m = defaults.max_m;
  if (layer["max_m"]) {
    ASSIGN_OR_RETURN(max_m, ScalarMaxM(layer["max_m"], where + ".max_m"));
  }
  if (options.max_m_override.has_value()) max_m = *options.max_m_override;
  request.set_max_m(max_m);
  return request;
}

// `root` is taken by value, not const: a const lookup of a missing key
// yields an invalid node that throws when assigned, a non-const one an
// undefined node that tests false.
absl::StatusOr<std::vector<v1::KernelRequest>> ParseManifestNode(
    YAML::Node root, const ManifestOptions& options) {
  LayerDefaults defaults;
  YAML::Node layers = root;
  if (root.IsMap()) {
    static const char* const kKeys[] = {"model", "arch",   "family", "spec",
                                        "kind",  "layers", "max_m"};
    for (const auto& item : root) {
      ASSIGN_OR_RETURN(const std::string key, KeyName(item.first, "manifest"));
      bool known = false;
      for (const char* allowed : kKeys) known |= key == allowed;
      if (!known) {
        return Invalid("manifest", absl::StrCat("unknown key '", key, "'"));
      }
    }
    for (auto [key, field] :
         {std::pair<const char*, std::string*>{"arch", &defaults.arch},
          {"family", &defaults.family},
          {"spec", &defaults.spec},
          {"kind", &defaults.kind}}) {
      if (root[key]) {
        ASSIGN_OR_RETURN(*field, ScalarString(root[key], key));
      }
    }
    if (root["max_m"]) {
      ASSIGN_OR_RETURN(defaults.max_m, ScalarMaxM(root["max_m"], "max_m"));
    }
    layers = root["layers"];
    if (!layers) return Invalid("layers", "is required");
  }
  if (!layers.IsSequence()) {
    return Invalid("layers", "must be a list of layers");
  }
  if (layers.size() == 0) return Invalid("layers", "must not be empty");
  std::vector<v1::KernelRequest> requests;
  for (size_t i = 0; i < layers.size(); ++i) {
    ASSIGN_OR_RETURN(v1::KernelRequest request,
                     ParseLayer(layers[i], absl::StrCat("layers[", i, "]"),
                                defaults, options));
    requests.push_back(std::move(request));
  }
  return requests;
}

}  // namespace

absl::StatusOr<std::vector<v1::KernelRequest>> ParseManifest(
    const std::string& text, const ManifestOptions& options) {
  // No exception crosses this API (it reaches Python through the C ABI):
  // the checks above cover the shapes a manifest may take, and this net
  // turns any other yaml-cpp conversion error into a status.
  try {
    return ParseManifestNode(YAML::Load(text), options);
  } catch (const YAML::ParserException& error) {
    return absl::InvalidArgumentError(
        absl::StrCat("manifest: not valid YAML/JSON: ", error.what()));
  } catch (const YAML::Exception& error) {
    return absl::InvalidArgumentError(
        absl::StrCat("manifest: unexpected structure: ", error.what()));
  }
}

absl::StatusOr<std::vector<v1::KernelRequest>> LoadManifestFile(
    const std::string& path, const ManifestOptions& options) {
  std::ifstream file(path);
  if (!file) {
    return absl::NotFoundError(absl::StrCat("manifest: cannot open ", path));
  }
  std::stringstream contents;
  contents << file.rdbuf();
  absl::StatusOr<std::vector<v1::KernelRequest>> requests =
      ParseManifest(contents.str(), options);
  if (!requests.ok()) {
    return absl::Status(requests.status().code(),
                        absl::StrCat(path, ": ", requests.status().message()));
  }
  return requests;
}

}  // namespace hummingd
