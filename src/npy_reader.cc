// The .npy.meta sidecar reader (npy_reader.h), kept out of line so the
// header-only codec does not depend on nlohmann_json.
#include <fstream>
#include <sstream>

#include "decomposed/npy_reader.h"
#include "nlohmann/json.hpp"

namespace decomposed {

absl::StatusOr<std::optional<PrimitiveType>> ReadNpyMetaSidecar(
    const std::string& npy_path) {
  const std::string path = npy_path + ".meta";
  std::ifstream in(path, std::ios::binary);
  if (!in.is_open()) return std::optional<PrimitiveType>();
  std::stringstream text;
  text << in.rdbuf();
  if (text.str().size() > (1 << 20)) {
    return absl::ResourceExhaustedError(
        absl::StrCat(path, ": a sidecar over 1 MiB is not a dtype note"));
  }
  nlohmann::json j = nlohmann::json::parse(text.str(), nullptr,
                                           /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": expected a JSON object {\"ml_dtype\": NAME}, found text that "
              "is not one"));
  }
  auto it = j.find("ml_dtype");
  if (it == j.end() || !it->is_string()) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": expected a string \"ml_dtype\" key, found none"));
  }
  std::string name = it->get<std::string>();
  std::optional<PrimitiveType> t = PrimitiveTypeFromMlDtype(name);
  if (!t) t = ParseDtypeName(name);
  if (!t) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": expected an ml_dtypes name such as \"bfloat16\", found \"",
        name, "\""));
  }
  return t;
}

}  // namespace decomposed
