// The `<file>.npy.meta` sidecar: its reader (npy_reader.h) and writer
// (npy_sink.h), kept out of line so that no header pulls in nlohmann_json.
#include <sys/stat.h>

#include <cerrno>
#include <fstream>
#include <string>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "decomposed/io/byte_sink.h"
#include "decomposed/limits.h"
#include "decomposed/npy/json_text.h"
#include "decomposed/npy/npy_reader.h"
#include "decomposed/npy/npy_sink.h"
#include "decomposed/status.h"
#include "nlohmann/json.hpp"

namespace decomposed {

absl::StatusOr<std::optional<PrimitiveType>> ReadNpyMetaSidecar(
    const std::string& npy_path) {
  const std::string path = npy_path + ".meta";
  // stat first: a FIFO would block the open, and a device or a huge file
  // would be read without end; only a regular file of bounded size is read.
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return std::optional<PrimitiveType>();
    return ErrnoError(errno, absl::StrCat("stat ", path));
  }
  if (!S_ISREG(st.st_mode)) {
    return absl::FailedPreconditionError(
        absl::StrCat(path, ": expected a regular file for the sidecar"));
  }
  if (static_cast<uint64_t>(st.st_size) > limits::kMaxSidecarBytes) {
    return absl::ResourceExhaustedError(
        absl::StrCat(path, ": a sidecar over 1 MiB is not a dtype note"));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in.is_open()) {
    return absl::NotFoundError(absl::StrCat("cannot open ", path));
  }
  // One byte more than stat saw, to notice a file that grew past the limit.
  std::string text(static_cast<size_t>(st.st_size) + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));
  if (text.size() > limits::kMaxSidecarBytes) {
    return absl::ResourceExhaustedError(
        absl::StrCat(path, ": a sidecar over 1 MiB is not a dtype note"));
  }
  nlohmann::json j = nlohmann::json::parse(text, nullptr,
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


std::string NpyMetaSidecarText(std::string_view ml_dtype) {
  return absl::StrCat("{\"ml_dtype\": ",
                      JsonText(nlohmann::json(std::string(ml_dtype)), kJsonLine),
                      "}");
}

absl::Status WriteNpyMetaSidecar(const std::string& npy_path,
                                 std::string_view ml_dtype) {
  AtomicFileSink out;
  std::string path = npy_path + ".meta";
  if (absl::Status s = out.Open(path); !s.ok()) return s;
  out.Write(NpyMetaSidecarText(ml_dtype));
  return out.Commit();
}

}  // namespace decomposed
