// libFuzzer target: the bundle reader's meta.json and tensor checks
// (OpenBundle + VerifyBundle + StreamTensor). The input is split at the
// first "\0\0": the part before is written as meta.json, the part after as
// tensor0.npy, in a scratch call directory. A bundle that verifies streams
// exactly each input's byte_size.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "decomposed/capture/bundle_reader.h"
#include "fuzz_util.h"

using namespace decomposed;

namespace {

std::string g_dir;

void WriteFile(const std::string& path, std::string_view bytes) {
  FILE* f = std::fopen(path.c_str(), "wb");
  FUZZ_CHECK(f != nullptr);
  if (!bytes.empty()) {
    FUZZ_CHECK(std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size());
  }
  std::fclose(f);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  const char* tmp = std::getenv("TMPDIR");
  std::string base = std::string(tmp ? tmp : "/tmp") + "/bundle-fuzz-XXXXXX";
  FUZZ_CHECK(::mkdtemp(base.data()) != nullptr);
  g_dir = base + "/abc/rank0/call0";
  std::string cmd = "mkdir -p '" + g_dir + "'";
  FUZZ_CHECK(std::system(cmd.c_str()) == 0);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  size_t cut = in.find(std::string_view("\0\0", 2));
  std::string_view meta = in.substr(0, cut);
  std::string_view tensor =
      cut == std::string_view::npos ? std::string_view() : in.substr(cut + 2);
  WriteFile(g_dir + "/meta.json", meta);
  WriteFile(g_dir + "/tensor0.npy", tensor);
  absl::StatusOr<capture::Bundle> b = capture::OpenBundle(g_dir);
  fuzz::CheckErrorShape(b.status());
  if (!b.ok()) return 0;
  absl::Status v = capture::VerifyBundle(*b);
  fuzz::CheckErrorShape(v);
  if (!v.ok()) return 0;
  for (size_t i = 0; i < b->inputs.size(); ++i) {
    uint64_t got = 0;
    absl::Status s = capture::StreamTensor(*b, i, [&](std::string_view c) {
      got += c.size();
      return true;
    });
    fuzz::CheckErrorShape(s);
    if (s.ok()) FUZZ_CHECK(got == b->inputs[i].byte_size);
  }
  return 0;
}
