#include "decomposed/capture/torch_dtype.h"

#include <utility>

namespace decomposed::capture {

namespace {
constexpr std::pair<std::string_view, std::string_view> kAliases[] = {
    {"float", "float32"},   {"double", "float64"}, {"half", "float16"},
    {"long", "int64"},      {"int", "int32"},      {"short", "int16"},
    {"cfloat", "complex64"}, {"cdouble", "complex128"},
    {"chalf", "complex32"},
};
}  // namespace

const TorchDtype* FindTorchDtype(std::string_view name) {
  std::string_view attr = name;
  if (attr.substr(0, 6) == "torch.") attr.remove_prefix(6);
  for (const auto& [alias, target] : kAliases) {
    if (attr == alias) {
      attr = target;
      break;
    }
  }
  for (const TorchDtype& d : kTorchDtypes) {
    if (d.attr == attr) return &d;
  }
  return nullptr;
}

const TorchDtype* TorchDtypeForXla(PrimitiveType t) {
  if (t == PrimitiveType::kInvalid) return nullptr;
  for (const TorchDtype& d : kTorchDtypes) {
    if (d.xla_type == t) return &d;
  }
  return nullptr;
}

}  // namespace decomposed::capture
