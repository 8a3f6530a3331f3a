// decomposed bundle ls ROOT [--json]
// decomposed bundle verify CALL_DIR
#include <iostream>

#include "command.h"
#include "decomposed/capture/bundle_reader.h"
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
                              " inputs, selected_by " + j["selected_by"].dump())
                << "\n";
    }
  }
  if (args.Has("json")) std::cout << out.dump(2) << "\n";
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

const Registrar kLs({"bundle ls",
                     "bundle ls ROOT [--json]   list input-snapshot bundles",
                     &Ls});
const Registrar kVerify({"bundle verify",
                         "bundle verify CALL_DIR   check meta.json against "
                         "the tensor files",
                         &Verify});

}  // namespace
}  // namespace decomposed::cli
