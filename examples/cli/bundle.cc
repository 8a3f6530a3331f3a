// decomposed bundle ls ROOT [--json]
// decomposed bundle verify CALL_DIR
// decomposed bundle to-decomposed CALL_DIR --module model.hlo -o FILE
// decomposed bundle from-decomposed FILE -o CALL_DIR [--format npy|pt]
//     [--hash H] [--global-rank G --tp-rank T --dp-rank D] [--call-index N]
#include <iostream>

#include "command.h"
#include "absl/strings/numbers.h"
#include "decomposed/capture/bundle_reader.h"
#include "decomposed/capture/replay.h"
#include "nlohmann/json.hpp"

namespace decomposed::cli {
namespace {

using namespace decomposed::capture;

int Ls(const std::vector<std::string>& argv) {
  Args args(argv, {}, {"json"});
  if (!args.ok() || args.positional().size() != 1) {
    std::cerr << "decomposed bundle ls: "
              << (args.ok() ? "expected one ROOT" : args.error())
              << "\nusage: decomposed bundle ls ROOT [--json]\n";
    return 2;
  }
  absl::StatusOr<std::vector<BundleRef>> refs = ListBundles(args.positional()[0]);
  if (!refs.ok()) {
    std::cerr << "decomposed bundle ls: " << refs.status().message() << "\n";
    return 1;
  }
  nlohmann::json out = nlohmann::json::array();
  for (const BundleRef& r : *refs) {
    nlohmann::json j{{"path", r.path},
                     {"hash", r.hash},
                     {"global_rank", r.global_rank},
                     {"call_index", r.call_index},
                     {"complete", r.complete}};
    if (r.complete) {
      absl::StatusOr<Bundle> b = OpenBundle(r.path);
      if (b.ok()) {
        j["format"] = std::string(BundleFormatName(b->format));
        j["inputs"] = b->inputs.size();
        if (b->meta.contains("selected_by")) j["selected_by"] = b->meta["selected_by"];
      } else {
        j["error"] = std::string(b.status().message());
      }
    }
    if (args.Has("json")) {
      out.push_back(std::move(j));
    } else {
      std::cout << r.hash << "\trank" << r.global_rank << "\tcall"
                << r.call_index << "\t"
                << (!r.complete ? "incomplete (no meta.json)"
                    : j.contains("error")
                        ? "invalid: " + j["error"].get<std::string>()
                        : j["format"].get<std::string>() + ", " +
                              std::to_string(j["inputs"].get<size_t>()) +
                              " inputs, selected_by " + DumpJson(j["selected_by"], -1))
                << "\n";
    }
  }
  if (args.Has("json")) std::cout << DumpJson(out) << "\n";
  return 0;
}

int Verify(const std::vector<std::string>& argv) {
  Args args(argv, {}, {});
  if (!args.ok() || args.positional().size() != 1) {
    std::cerr << "decomposed bundle verify: "
              << (args.ok() ? "expected one CALL_DIR" : args.error())
              << "\nusage: decomposed bundle verify CALL_DIR\n";
    return 2;
  }
  absl::StatusOr<Bundle> b = OpenBundle(args.positional()[0]);
  absl::Status s = b.ok() ? VerifyBundle(*b) : b.status();
  if (!s.ok()) {
    std::cerr << "decomposed bundle verify: " << s.message() << "\n";
    return 1;
  }
  std::cout << b->path << ": ok, " << b->inputs.size() << " "
            << BundleFormatName(b->format) << " inputs\n";
  for (const BundleInput& in : b->inputs) {
    std::cout << "  tensor" << in.index << " " << in.dtype->name << " "
              << nlohmann::json(in.shape).dump() << " " << in.byte_size
              << " bytes\n";
  }
  return 0;
}

int ToDecomposed(const std::vector<std::string>& argv) {
  Args args(argv, {"module", "o"}, {});
  if (!args.ok() || args.positional().size() != 1 || !args.Has("module") ||
      !args.Has("o")) {
    std::cerr << "decomposed bundle to-decomposed: "
              << (args.ok() ? "expected CALL_DIR, --module and -o" : args.error())
              << "\nusage: decomposed bundle to-decomposed CALL_DIR --module "
                 "model.hlo -o FILE\n";
    return 2;
  }
  absl::Status s = BundleToDecomposed(args.positional()[0], args.Get("module"),
                                      args.Get("o"));
  if (!s.ok()) {
    std::cerr << "decomposed bundle to-decomposed: " << s.message() << "\n";
    return 1;
  }
  return 0;
}

int FromDecomposed(const std::vector<std::string>& argv) {
  Args args(argv,
            {"o", "format", "hash", "global-rank", "tp-rank", "dp-rank",
             "call-index"},
            {"lenient-length-byte"});
  DecomposedToBundleOptions o;
  bool ok = args.ok() && args.positional().size() == 1 && args.Has("o");
  std::string fmt = args.Get("format", "pt");
  if (fmt == "npy") {
    o.format = BundleFormat::kNpy;
  } else if (fmt != "pt") {
    ok = false;
  }
  auto num = [&](std::string_view name, int64_t* out) {
    if (!args.Has(name)) return true;
    return absl::SimpleAtoi(args.Get(name), out) && *out >= 0;
  };
  ok = ok && num("global-rank", &o.global_rank) && num("tp-rank", &o.tp_rank) &&
       num("dp-rank", &o.dp_rank) && num("call-index", &o.call_index);
  if (!ok) {
    std::cerr << "decomposed bundle from-decomposed: "
              << (args.ok() ? "expected FILE and -o CALL_DIR (format npy|pt, "
                              "non-negative ranks)"
                            : args.error())
              << "\nusage: decomposed bundle from-decomposed FILE -o CALL_DIR "
                 "[--format npy|pt] [--hash H] [--global-rank G --tp-rank T "
                 "--dp-rank D] [--call-index N]\n";
    return 2;
  }
  o.hash = args.Get("hash");
  o.lenient_length_byte = args.Has("lenient-length-byte");
  absl::Status s = DecomposedToBundle(args.positional()[0], args.Get("o"), o);
  if (!s.ok()) {
    std::cerr << "decomposed bundle from-decomposed: " << s.message() << "\n";
    return 1;
  }
  return 0;
}

const Registrar kLs({"bundle ls",
                     "bundle ls ROOT [--json]   list input-snapshot bundles",
                     &Ls});
const Registrar kVerify({"bundle verify",
                         "bundle verify CALL_DIR   check meta.json against "
                         "the tensor files",
                         &Verify});
const Registrar kTo({"bundle to-decomposed",
                     "bundle to-decomposed CALL_DIR --module model.hlo -o FILE"
                     "   bundle tensors -> decomposed inputs",
                     &ToDecomposed});
const Registrar kFrom({"bundle from-decomposed",
                       "bundle from-decomposed FILE -o CALL_DIR [--format "
                       "npy|pt]   decomposed inputs -> bundle",
                       &FromDecomposed});

}  // namespace
}  // namespace decomposed::cli
