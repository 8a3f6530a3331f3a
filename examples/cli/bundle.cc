// decomposed bundle ls ROOT [--json]
// decomposed bundle verify CALL_DIR
// decomposed bundle to-decomposed CALL_DIR --module model.hlo -o FILE
// decomposed bundle from-decomposed FILE -o CALL_DIR [--format npy|pt]
//     [--hash H] [--global-rank G --tp-rank T --dp-rank D] [--call-index N]
//     [--lenient-length-byte]
#include <sys/stat.h>

#include <iostream>
#include <memory>
#include <string_view>

#include "command.h"
#include "decomposed/capture/bundle_reader.h"
#include "decomposed/analysis/report.h"
#include "decomposed/capture/replay.h"
#include "nlohmann/json.hpp"

namespace decomposed::cli {
namespace {

using namespace decomposed::capture;

// "<dir>: ok, 2 pt inputs" (verify) or "wrote <dir>: 2 pt inputs and
// meta.json" (written), and a line per tensor, its dtype spelt as every
// other command spells element types (f32, bf16; meta.json keeps PyTorch's
// torch.float32, and a type XLA lacks keeps that name).
void PrintBundle(const Bundle& b, bool written) {
  std::cout << (written ? "wrote " : "") << b.path
            << (written ? ": " : ": ok, ") << b.inputs.size() << " "
            << BundleFormatName(b.format)
            << (b.inputs.size() == 1 ? " input" : " inputs")
            << (written ? " and meta.json\n" : "\n");
  for (const BundleInput& in : b.inputs) {
    std::cout << "  tensor" << in.index << " "
              << (in.dtype->xla_type != PrimitiveType::kInvalid
                      ? LowerTypeName(in.dtype->xla_type)
                      : std::string(in.dtype->name))
              << " " << JsonText(nlohmann::json(in.shape), kJsonLine) << " "
              << Counted(in.byte_size, "byte") << "\n";
  }
}

Action SetupLs(CLI::App& app) {
  struct State {
    std::string root;
    bool json = false;
  };
  auto st = std::make_shared<State>();
  app.add_option("ROOT", st->root,
                 "<root> of <root>/<hash>/rank<G>/call<N>/, or a hash, rank or "
                 "call directory")
      ->required();
  app.add_flag("--json", st->json, "print JSON");
  return [st, &app] {
    absl::StatusOr<nlohmann::json> list = ListBundlesJson(st->root);
    if (!list.ok()) return Fail(app, list.status());
    if (st->json) {
      std::cout << JsonText(*list);
    } else {
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
                                JsonText(j.value("selected_by", nlohmann::json()),
                                         kJsonLine))
                  << "\n";
      }
    }
    if (list->empty()) {
      // Nothing to list is an answer, but rarely the one meant: say where
      // bundles were looked for (exit 1, the table's "the answer is no").
      std::cerr << CommandName(app) << ": no bundle under " << st->root
                << " (looked for <hash>/rank<G>/call<N>/ below it, rank<G>/"
                   "call<N>/, call<N>/, or a meta.json in it)\n";
      return ExitCode(ExitStyle::kTool, Outcome::kNo);
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
    PrintBundle(*b, /*written=*/false);
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
    // As pack lists what it wrote.
    struct stat sb;
    const uint64_t bytes = ::stat(st->out.c_str(), &sb) == 0 ? sb.st_size : 0;
    absl::StatusOr<Bundle> b = OpenBundle(st->dir);
    std::cout << "wrote " << st->out << " (decomposed snapshot, "
              << Counted(bytes, "byte") << "): "
              << (b.ok() ? Counted(b->inputs.size(), "input") + ", " : "")
              << "0 outputs, from " << st->dir << "\n";
    return kExitOk;
  };
}

Action SetupFromDecomposed(CLI::App& app) {
  struct State {
    std::string file, dir;
    BundleFormat format = BundleFormat::kPt;
    DecomposedToBundleOptions options;
  };
  auto st = std::make_shared<State>();
  DecomposedToBundleOptions& o = st->options;
  app.add_option("FILE", st->file, "a decomposed file")->required();
  app.add_option("-o", st->dir, "the call directory to write")->required();
  AddEnumOption(app, "--format", &st->format, kBundleFormatNames, "tensor file format");
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
    st->options.format = st->format;
    absl::Status s = DecomposedToBundle(st->file, st->dir, st->options);
    if (!s.ok()) return Fail(app, s);
    // What bundle verify shows of it, as pack and unpack list what they wrote.
    absl::StatusOr<Bundle> b = OpenBundle(st->dir);
    if (!b.ok()) return Fail(app, b.status());
    PrintBundle(*b, /*written=*/true);
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
