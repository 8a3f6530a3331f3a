// decomposed convert IN OUT --to snapshot|decomposed
#include <sys/stat.h>

#include <iostream>

#include "command.h"
#include "progress.h"
#include "decomposed/snapshot/convert.h"

namespace decomposed::cli {
namespace {

constexpr char kUsage[] =
    "usage: decomposed convert IN OUT --to snapshot|decomposed\n"
    "         [--lenient-length-byte] [--no-output-block] [--no-validate]\n"
    "  --to snapshot    decomposed IN -> one classic HloSnapshot (< 2 GiB):\n"
    "                   inputs -> arguments, outputs -> a TUPLE result\n"
    "  --to decomposed  classic IN -> decomposed: arguments -> inputs, the\n"
    "                   result's tuple elements -> outputs\n";

int Run(const std::vector<std::string>& argv) {
  Args args(argv, {"to"},
            {"lenient-length-byte", "no-output-block", "no-validate"});
  auto usage = [](const std::string& why) {
    std::cerr << "decomposed convert: " << why << "\n" << kUsage;
    return 2;
  };
  if (!args.ok()) return usage(args.error());
  if (args.positional().size() != 2) return usage("expected IN and OUT");
  std::string to = args.Get("to");
  if (to != "snapshot" && to != "decomposed") {
    return usage("--to must be snapshot or decomposed");
  }
  ConvertOptions options;
  options.read.box.lenient_length_byte = args.Has("lenient-length-byte");
  options.write.write_output_count = !args.Has("no-output-block");
  options.validate = !args.Has("no-validate");
  const std::string& in = args.positional()[0];
  const std::string& out = args.positional()[1];
  struct stat st;
  ProgressLine progress("convert",
                        ::stat(in.c_str(), &st) == 0 ? st.st_size : 0);
  options.progress = [&progress](uint64_t done) { progress.Update(done); };
  absl::Status s = to == "snapshot"
                       ? ConvertDecomposedToClassic(in, out, options)
                       : ConvertClassicToDecomposed(in, out, options);
  progress.Done();
  if (!s.ok()) {
    std::cerr << "decomposed convert: " << s.message() << "\n";
    return 1;
  }
  return 0;
}

const Registrar kRegistrar(
    {"convert",
     "convert IN OUT --to snapshot|decomposed   between the decomposed and "
     "classic HloSnapshot forms",
     &Run});

}  // namespace
}  // namespace decomposed::cli
