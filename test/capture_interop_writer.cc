// Writes one bundle per (dtype, format, layout case) under ROOT for
// capture_interop.py to load with NumPy and PyTorch. Element bytes follow a
// formula the Python side recomputes independently:
//   byte k of the C-order data = (k * 37 + 11 * dtype_index + 5) % 256,
// except torch.bool, whose element k is k % 2.
// Usage: capture_interop_writer ROOT
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "decomposed/capture/bundle_writer.h"

using namespace decomposed::capture;

namespace {

uint8_t Pattern(size_t k, size_t dtype_index, const TorchDtype& d) {
  if (d.attr == "bool") return static_cast<uint8_t>(k % 2);
  return static_cast<uint8_t>((k * 37 + 11 * dtype_index + 5) % 256);
}

struct Layout {
  std::string name;
  std::vector<int64_t> shape;
  bool transposed;  // store as the transpose of a (shape[1], shape[0]) buffer
};

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: capture_interop_writer ROOT\n";
    return 2;
  }
  const std::string root = argv[1];
  const Layout layouts[] = {
      {"c", {2, 3, 4}, false},
      {"t", {3, 5}, true},
      {"scalar", {}, false},
      {"empty", {0, 3}, false},
  };
  int64_t call = 0;
  size_t di = 0;
  for (const TorchDtype& d : kTorchDtypes) {
    for (BundleFormat f : {BundleFormat::kNpy, BundleFormat::kPt}) {
      for (const Layout& l : layouts) {
        uint64_t n = 1;
        for (int64_t x : l.shape) n *= x;
        const size_t es = d.element_bytes;
        std::vector<uint8_t> logical(n * es);  // C order of the final tensor
        for (size_t k = 0; k < logical.size(); ++k) {
          logical[k] = d.attr == "bool" ? Pattern(k / es, di, d)
                                        : Pattern(k, di, d);
        }
        HostTensor t;
        t.dtype = d.type;
        t.shape = l.shape;
        std::vector<uint8_t> storage = logical;
        if (l.transposed) {
          // Physical buffer is (cols, rows) C-contiguous; the tensor views it
          // with strides (1, rows).
          const int64_t rows = l.shape[0], cols = l.shape[1];
          for (int64_t i = 0; i < rows; ++i)
            for (int64_t j = 0; j < cols; ++j)
              std::memcpy(&storage[(j * rows + i) * es],
                          &logical[(i * cols + j) * es], es);
          t.strides = {1, rows};
        }
        t.data = storage.data();
        CallMeta m;
        m.hash = "h_" + std::string(d.attr) + "_" + std::string(BundleFormatName(f)) + "_" + l.name;
        m.format = f;
        m.global_rank = 0;
        m.call_index = call;
        m.selected_by = {"call_index"};
        m.forward = ForwardInfo{{"req-1"}, {4}, false, 1, 9};
        std::string dir = absl::StrCat(root, "/", m.hash, "/rank0/call", call);
        absl::Status s = WriteBundle(dir, {&t, 1}, m);
        if (f == BundleFormat::kNpy && d.npy_descr.empty()) {
          if (s.code() != absl::StatusCode::kUnimplemented ||
              s.message().find("pt") == std::string::npos) {
            std::cerr << d.name << ": expected kUnimplemented asking for pt, got "
                      << s << "\n";
            return 1;
          }
          continue;
        }
        if (!s.ok()) {
          std::cerr << dir << ": " << s << "\n";
          return 1;
        }
        ++call;
      }
    }
    ++di;
  }
  // The ZIP64 path, forced on a small file: tensor values 0..9 as float32.
  {
    float v[10];
    for (int i = 0; i < 10; ++i) v[i] = static_cast<float>(i);
    HostTensor t{v, TorchType::kFloat32, {10}, {}};
    decomposed::AtomicFileSink out;
    PtWriteOptions o;
    o.archive_name = "zip64";
    o.zip.force_zip64 = true;
    absl::Status s = out.Open(root + "/zip64.pt");
    if (s.ok()) s = WritePtTensor(t, out, o);
    if (s.ok()) s = out.Commit();
    if (!s.ok()) {
      std::cerr << "zip64: " << s << "\n";
      return 1;
    }
  }
  std::cout << "wrote " << call << " bundles\n";
  return 0;
}
