// Lists the frames of a decomposed file with the header-only codec.
// Prints "inputs=N outputs=M snapshot=L" and exits 0, or the error and 1.
#include <iostream>

#include "decomposed/io/byte_source.h"
#include "decomposed/container/framing.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: codec_only FILE\n";
    return 2;
  }
  decomposed::MmapSource src(argv[1]);
  if (!src.status().ok()) {
    std::cerr << src.status() << "\n";
    return 1;
  }
  decomposed::DecomposedReader<decomposed::MmapSource> reader(src);
  auto header = reader.ReadHeader(nullptr);
  if (!header.ok()) {
    std::cerr << header.status() << "\n";
    return 1;
  }
  auto n = reader.StartInputs();
  if (!n.ok()) {
    std::cerr << n.status() << "\n";
    return 1;
  }
  auto m = reader.StartOutputs();
  if (!m.ok()) {
    std::cerr << m.status() << "\n";
    return 1;
  }
  absl::Status s = reader.Finish();
  if (!s.ok()) {
    std::cerr << s << "\n";
    return 1;
  }
  std::cout << "inputs=" << *n << " outputs="
            << (m->has_value() ? std::to_string(**m) : "absent")
            << " snapshot=" << header->length << "\n";
  return 0;
}
