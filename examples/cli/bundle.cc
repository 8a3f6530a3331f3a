// decomposed bundle ls ROOT [--json]
// decomposed bundle verify CALL_DIR
// decomposed bundle to-decomposed CALL_DIR --module model.hlo -o FILE
// decomposed bundle from-decomposed FILE -o CALL_DIR [--format npy|pt]
//     [--hash H] [--global-rank G --tp-rank T --dp-rank D] [--call-index N]
//     [--lenient-length-byte]
#include <iostream>
#include <memory>

#include "command.h"
#include "decomposed/capture/bundle_reader.h"
#include "decomposed/capture/replay.h"
#include "nlohmann/json.hpp"

namespace decomposed::cli {
namespace {

using namespace decomposed::capture;

Action SetupLs(CLI::App& app) {
  struct State {
    std::string root;
    bool json = false;
  };
  auto st = std::make_shared<State>();
  app.add_option("ROOT", st->root, "<root>/<hash>/rank<G>/call<N>/")
      ->required();
  app.add_flag("--json", st->json, "print JSON");
  return [st, &app] {
    absl::StatusOr<nlohmann::json> list = ListBundlesJson(st->root);
    if (!list.ok()) return Fail(app, list.status());
    if (st->json) {
      std::cout << DumpJson(*list) << "\n";
      return kExitOk;
    }
    for (const nlohmann::json& j : *list) {
      std::cout << j["hash"].get<std::string>() << "\trank"
                << j["global_rank"].get<int64_t>() << "\tcall"
                << j["call_index"].get<int64_t>() << "\t"
                << (!j["complete"].get<bool>() ? "incomplete (no meta.json)"
                    : j.contains("error")
                        ? "invalid: " + j["error"].get<std::string>()
                        : j["format"].get<std::string>() + ", " +
                              Counted(j["inputs"].get<size_t>(), "input") +
                              ", selected_by " +
                              DumpJson(j.value("selected_by", nlohmann::json()), -1))
                << "\n";
    }
    return kExitOk;
  };
}

Action SetupVerify(CLI::App& app) {
  auto dir = std::make_shared<std::string>();
  app.add_option("CALL_DIR", *dir, "one bundle's call directory")->required();
  return [dir, &app] {
    absl::StatusOr<Bundle> b = OpenBundle(*dir);
    absl::Status s = b.ok() ? VerifyBundle(*b) : b.status();
    if (!s.ok()) return Fail(app, s);
    std::cout << b->path << ": ok, " << b->inputs.size() << " "
              << BundleFormatName(b->format)
              << (b->inputs.size() == 1 ? " input\n" : " inputs\n");
    for (const BundleInput& in : b->inputs) {
      std::cout << "  tensor" << in.index << " " << in.dtype->name << " "
                << nlohmann::json(in.shape).dump() << " "
                << Counted(in.byte_size, "byte") << "\n";
    }
    return kExitOk;
  };
}

Action SetupToDecomposed(CLI::App& app) {
  struct State {
    std::string dir, module, out;
  };
  auto st = std::make_shared<State>();
  app.add_option("CALL_DIR", st->dir, "one bundle's call directory")
      ->required();
  app.add_option("--module", st->module, "a serialized HloModuleProto")
      ->required();
  app.add_option("-o", st->out, "the decomposed file to write")->required();
  return [st, &app] {
    absl::Status s = BundleToDecomposed(st->dir, st->module, st->out);
    if (!s.ok()) return Fail(app, s);
    return kExitOk;
  };
}

Action SetupFromDecomposed(CLI::App& app) {
  struct State {
    std::string file, dir, format = "pt";
    DecomposedToBundleOptions options;
  };
  auto st = std::make_shared<State>();
  DecomposedToBundleOptions& o = st->options;
  app.add_option("FILE", st->file, "a decomposed file")->required();
  app.add_option("-o", st->dir, "the call directory to write")->required();
  app.add_option("--format", st->format, "tensor file format")
      ->check(CLI::IsMember({"npy", "pt"}))
      ->capture_default_str();
  app.add_option("--hash", o.hash,
                 "meta.json's hash (default: FILE's base name)");
  AddRankOptions(app, &o.global_rank, &o.tp_rank, &o.dp_rank);
  app.add_option("--call-index", o.call_index,
                 "meta.json's call index (default: from a call<N> directory "
                 "name, else 0)")
      ->check(kNonNegative);
  app.add_flag("--lenient-length-byte", o.lenient_length_byte,
               "read a box length byte >= 0x80 unsigned (AWS's reader)");
  return [st, &app] {
    st->options.format =
        st->format == "npy" ? BundleFormat::kNpy : BundleFormat::kPt;
    absl::Status s = DecomposedToBundle(st->file, st->dir, st->options);
    if (!s.ok()) return Fail(app, s);
    return kExitOk;
  };
}

const Registrar kLs({"bundle ls", "list input-snapshot bundles", &SetupLs});
const Registrar kVerify({"bundle verify",
                         "check meta.json against the tensor files",
                         &SetupVerify});
const Registrar kTo({"bundle to-decomposed",
                     "bundle tensors -> decomposed inputs",
                     &SetupToDecomposed});
const Registrar kFrom({"bundle from-decomposed",
                       "decomposed inputs -> bundle", &SetupFromDecomposed});

}  // namespace
}  // namespace decomposed::cli
