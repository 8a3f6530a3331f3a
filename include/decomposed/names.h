// The spellings of an enum's values on the command line and in JSON, in one
// table per enum that both directions read (NameOf, ValueOf) and that the
// CLI binds its options to (examples/cli/command.h AddEnumOption), so that
// a spelling is written once.
//
// Example:
//   enum class Color { kRed, kBlue };
//   constexpr decomposed::EnumName<Color> kColorNames[] = {
//       {"red", Color::kRed}, {"blue", Color::kBlue}};
//   std::optional<Color> c = decomposed::ValueOf(kColorNames, "blue");  // kBlue
//   std::string_view n = decomposed::NameOf(kColorNames, Color::kRed);  // "red"
#ifndef DECOMPOSED_NAMES_H_
#define DECOMPOSED_NAMES_H_

#include <cstddef>
#include <optional>
#include <string_view>

namespace decomposed {

template <typename E>
struct EnumName {
  std::string_view name;
  E value;
};

// The value `name` spells (exactly, case-sensitive), or nullopt.
template <typename E, size_t N>
constexpr std::optional<E> ValueOf(const EnumName<E> (&names)[N], std::string_view name) {
  for (const EnumName<E>& n : names) {
    if (n.name == name) return n.value;
  }
  return std::nullopt;
}

// The first spelling of `value`, or "?" when the table has none.
template <typename E, size_t N>
constexpr std::string_view NameOf(const EnumName<E> (&names)[N], E value) {
  for (const EnumName<E>& n : names) {
    if (n.value == value) return n.name;
  }
  return "?";
}

}  // namespace decomposed

#endif  // DECOMPOSED_NAMES_H_
