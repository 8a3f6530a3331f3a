// Scratch files for the analysis fuzz targets (compare_fuzz, stats_fuzz):
// fuzz bytes written as one side of `decomposed compare` / `stats` in the
// form a selector picks, so OpenTensorSet's detection, every reader and the
// analysis layer run on them exactly as the CLI runs them.
#ifndef DECOMPOSED_TEST_FUZZ_ANALYSIS_SIDES_H_
#define DECOMPOSED_TEST_FUZZ_ANALYSIS_SIDES_H_

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "fuzz_util.h"

namespace decomposed::fuzz {

// A scratch directory made once per process.
inline const std::string& ScratchDir(const char* name) {
  static std::string dir = [&] {
    const char* tmp = std::getenv("TMPDIR");
    std::string base = std::string(tmp ? tmp : "/tmp") + "/" + name + "-XXXXXX";
    FUZZ_CHECK(::mkdtemp(base.data()) != nullptr);
    return base;
  }();
  return dir;
}

inline void WriteFile(const std::string& path, std::string_view bytes) {
  FILE* f = std::fopen(path.c_str(), "wb");
  FUZZ_CHECK(f != nullptr);
  if (!bytes.empty()) {
    FUZZ_CHECK(std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size());
  }
  std::fclose(f);
}

// Writes `bytes` as side `tag` in form `form` (0..3) under `dir` and
// returns the path to hand to OpenTensorSet:
//   0  a snapshot file (decomposed or classic: detected)
//   1  a .npy file
//   2  a .pt file
//   3  an unpack directory holding the bytes as snapshot_output0.npy and
//      value_input0.npy
inline std::string WriteSide(const std::string& dir, const std::string& tag, int form,
                             std::string_view bytes) {
  switch (form & 3) {
    case 0: {
      std::string p = dir + "/" + tag + ".snapshot";
      WriteFile(p, bytes);
      return p;
    }
    case 1: {
      std::string p = dir + "/" + tag + ".npy";
      WriteFile(p, bytes);
      return p;
    }
    case 2: {
      std::string p = dir + "/" + tag + ".pt";
      WriteFile(p, bytes);
      return p;
    }
    default: {
      std::string d = dir + "/" + tag + "_dir";
      ::mkdir(d.c_str(), 0700);
      WriteFile(d + "/snapshot_output0.npy", bytes);
      WriteFile(d + "/value_input0.npy", bytes);
      return d;
    }
  }
}

}  // namespace decomposed::fuzz

#endif  // DECOMPOSED_TEST_FUZZ_ANALYSIS_SIDES_H_
