// The one JSON writer: every JSON text the library, the CLIs and the Python
// package write (`--json` reports, manifest.json, a bundle's meta.json, the
// `.npy.meta` sidecar) is serialised by JsonText, so every output has the
// same spelling and none can abort.
//
// Why one writer: nlohmann::json's dump() throws on a string that is not
// UTF-8 by default, and strings from outside the program (paths, file
// names, environment values, names read from files) are bytes on Linux. An
// exception escaping a command aborted the CLI (exit 134). JsonText
// replaces each invalid byte sequence with U+FFFD instead, and never throws.
//
// The project's spelling (README, "JSON"): indented by 2 spaces, keys in the
// order the writer put them, non-ASCII characters as UTF-8, a final newline.
// A style may ask for one line (indent -1, for JSON embedded in a text line
// or handed to Python's json.loads), for \uXXXX escapes (the meta.json of
// vLLM-Neuron bundles, as Python's json.dump writes it) or for no final
// newline.
//
// It lives in the npy layer, the lowest that links nlohmann_json, so that
// every layer that writes JSON (npy, snapshot, capture, analysis, the CLIs,
// Python) uses it. The header is a template over the JSON type and does not
// itself include nlohmann's header.
//
// Example:
//   nlohmann::ordered_json j{{"file", std::string("x-\xff.bin")}};
//   std::cout << decomposed::JsonText(j);  // the file name with U+FFFD
//   std::string line = decomposed::JsonText(j, decomposed::kJsonLine);
#ifndef DECOMPOSED_NPY_JSON_TEXT_H_
#define DECOMPOSED_NPY_JSON_TEXT_H_

#include <string>

namespace decomposed {

struct JsonStyle {
  int indent = 2;              // spaces per level; -1: all on one line
  bool ensure_ascii = false;   // escape non-ASCII characters as \uXXXX
  bool final_newline = true;   // end the text with "\n"
};

// One line, no final newline: JSON inside a line of text, or handed over
// to be parsed (Python's json.loads).
inline constexpr JsonStyle kJsonLine{.indent = -1, .final_newline = false};

// The text of `j` (a nlohmann::json or nlohmann::ordered_json) in `style`.
// Invalid UTF-8 in a string becomes U+FFFD; never throws.
template <class Json>
std::string JsonText(const Json& j, const JsonStyle& style = {}) {
  std::string out = j.dump(style.indent, ' ', style.ensure_ascii,
                           Json::error_handler_t::replace);
  if (style.final_newline) out += '\n';
  return out;
}

}  // namespace decomposed

#endif  // DECOMPOSED_NPY_JSON_TEXT_H_
