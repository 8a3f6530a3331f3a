// Inspects a decomposed file and parses its HloSnapshot with the installed
// generated classes. Prints the inspect JSON and the module name.
#include <fstream>
#include <iostream>
#include <string>

#include "decomposed/container/framing.h"
#include "decomposed/snapshot/inspect.h"
#include "decomposed/proto/hlo.pb.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: full FILE\n";
    return 2;
  }
  auto report = decomposed::InspectFile(argv[1]);
  if (!report.ok()) {
    std::cerr << report.status() << "\n";
    return 1;
  }
  std::cout << decomposed::InspectReportJson(*report).dump() << "\n";

  decomposed::MmapSource src(argv[1]);
  decomposed::DecomposedReader<decomposed::MmapSource> reader(src);
  std::string bytes;
  auto header = reader.ReadHeader(&bytes);
  if (!header.ok()) {
    std::cerr << header.status() << "\n";
    return 1;
  }
  decomposed::xla::HloSnapshot snapshot;
  if (!snapshot.ParseFromString(bytes)) {
    std::cerr << "HloSnapshot does not parse\n";
    return 1;
  }
  std::cout << "module=" << snapshot.hlo().hlo_module().name() << "\n";
  return 0;
}
