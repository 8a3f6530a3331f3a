// libFuzzer target: the .pt reader (capture/pt_reader.h) and its two parts,
// the zip directory reader (zip_reader.h) and the unpickler (unpickler.h).
// Each input is used twice:
//   * as a pickle, straight into Unpickle (most mutations of a .pt land in
//     the zip structure, so the unpickler gets its own direct path);
//   * as a .pt file, written to a scratch file and read by ReadZipDirectory,
//     ZipEntryDataOffset and ReadPtTensor.
// Bad input must give a status (never a crash, a hang or an allocation of a
// declared size); a tensor that reads must lie inside the file, and its
// bytes must be readable there.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "decomposed/capture/pt_reader.h"
#include "decomposed/capture/regular_file.h"
#include "decomposed/capture/unpickler.h"
#include "decomposed/capture/zip_reader.h"
#include "decomposed/limits.h"
#include "fuzz_util.h"

using namespace decomposed;
using namespace decomposed::capture;

namespace {

std::string g_dir, g_path;

void WriteFile(const std::string& path, std::string_view bytes) {
  FILE* f = std::fopen(path.c_str(), "wb");
  FUZZ_CHECK(f != nullptr);
  if (!bytes.empty()) {
    FUZZ_CHECK(std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size());
  }
  FUZZ_CHECK(std::fclose(f) == 0);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // The scratch file is rewritten for every input: memory-backed /dev/shm
  // runs several times faster than a disk-backed /tmp.
  const char* tmp = std::getenv("TMPDIR");
  std::string base = tmp                                ? tmp
                     : ::access("/dev/shm", W_OK) == 0 ? "/dev/shm"
                                                        : "/tmp";
  g_dir = base + "/pt-fuzz-XXXXXX";
  FUZZ_CHECK(::mkdtemp(g_dir.data()) != nullptr);
  g_path = g_dir + "/tensor0.pt";
  std::atexit([] {
    ::unlink(g_path.c_str());
    ::rmdir(g_dir.c_str());
  });
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);

  absl::StatusOr<PicklePtr> root = Unpickle(in, "fuzz data.pkl");
  fuzz::CheckErrorShape(root.status());
  if (root.ok()) FUZZ_CHECK((*root)->depth <= limits::kMaxPickleDepth);

  WriteFile(g_path, in);
  absl::StatusOr<RegularFile> f = RegularFile::Open(g_path);
  FUZZ_CHECK(f.ok());
  FUZZ_CHECK(f->size() == size);
  absl::StatusOr<ZipDirectory> dir = ReadZipDirectory(*f);
  fuzz::CheckErrorShape(dir.status());
  if (dir.ok()) {
    FUZZ_CHECK(dir->size() <= limits::kMaxZipEntries);
    for (const auto& [name, e] : *dir) {
      absl::StatusOr<uint64_t> at = ZipEntryDataOffset(*f, name, e);
      fuzz::CheckErrorShape(at.status());
      if (at.ok()) FUZZ_CHECK(*at <= size && e.size <= size - *at);
    }
  }
  absl::StatusOr<PtTensor> t = ReadPtTensor(*f);
  fuzz::CheckErrorShape(t.status());
  if (t.ok()) {
    FUZZ_CHECK(dir.ok());
    FUZZ_CHECK(t->dtype != nullptr);
    FUZZ_CHECK(t->shape.size() <= limits::kMaxRank);
    FUZZ_CHECK(t->shape.size() == t->stride.size());
    uint64_t n = 1;
    for (int64_t d : t->shape) {
      FUZZ_CHECK(d >= 0);
      n *= static_cast<uint64_t>(d);
    }
    FUZZ_CHECK(n == t->element_count);
    FUZZ_CHECK(t->byte_size == n * t->dtype->element_bytes);
    FUZZ_CHECK(t->data_offset <= size && t->byte_size <= size - t->data_offset);
    std::string bytes;
    FUZZ_CHECK(f->ReadAt(t->data_offset, t->byte_size, &bytes).ok());
  }
  return 0;
}
