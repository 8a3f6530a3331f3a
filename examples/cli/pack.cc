// decomposed pack (--module FILE | --snapshot FILE) [--input FILE]...
//                 [--output FILE]... [--dtype I=TYPE]... [--output-dtype J=TYPE]...
//                 [--format decomposed|snapshot] [--no-output-block]
//                 [--tf211-layout] [--box-shape] -o OUT
#include <iostream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include <sys/stat.h>

#include "command.h"
#include "progress.h"
#include "decomposed/snapshot/producer.h"

namespace decomposed::cli {
namespace {

constexpr char kUsage[] =
    "usage: decomposed pack (--module MODULE.hlo | --snapshot SNAPSHOT.pb)\n"
    "         [--input A.npy]... [--output O.npy]... [--dtype I=TYPE]...\n"
    "         [--output-dtype J=TYPE]... [--format decomposed|snapshot]\n"
    "         [--no-output-block] [--tf211-layout] [--box-shape] -o OUT\n"
    "  --module     a serialized HloModuleProto (snapshot-unpack's model.hlo)\n"
    "  --snapshot   take the module from an HloSnapshot file, classic or\n"
    "               decomposed (its literals are dropped)\n"
    "  --input/--output  .npy files (streamed), or any other file holding\n"
    "               one serialized LiteralProto; in order, numbered from 0\n"
    "  --dtype 1=bf16   true type of input 1 (void |V2/|V1 descrs need one\n"
    "               unless FILE.npy.meta names it); --output-dtype for "
    "outputs\n"
    "  --format snapshot  write one classic HloSnapshot (< 2 GiB) instead\n"
    "  --no-output-block  omit region [2] when there are no outputs\n"
    "  --tf211-layout     layouts without tail_padding_alignment (TF 2.11 "
    "form)\n"
    "  --box-shape        length boxes carry a U64 scalar shape\n";

bool ParseDtypes(const std::vector<std::string>& specs, size_t count,
                 std::string_view what,
                 std::vector<std::optional<PrimitiveType>>* out,
                 std::string* error) {
  out->assign(count, std::nullopt);
  for (const std::string& s : specs) {
    size_t eq = s.find('=');
    size_t index;
    if (eq == std::string::npos ||
        !absl::SimpleAtoi(absl::string_view(s.data(), eq), &index)) {
      *error = "expected INDEX=TYPE, found '" + s + "'";
      return false;
    }
    if (index >= count) {
      *error = "'" + s + "': there are only " + std::to_string(count) + " " +
               std::string(what) + "s (numbered from 0)";
      return false;
    }
    std::optional<PrimitiveType> t = ParseDtypeName(s.substr(eq + 1));
    if (!t) {
      *error = "'" + s + "': unknown type (use an XLA name such as bf16, "
               "f8e4m3fn, s4, or a NumPy name such as float32)";
      return false;
    }
    (*out)[index] = t;
  }
  return true;
}

bool EndsWith(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

absl::Status AddLiterals(const std::vector<std::string>& files,
                         const std::vector<std::optional<PrimitiveType>>& types,
                         std::string_view region,
                         const ShapeEncodeOptions& shape,
                         std::vector<std::unique_ptr<LiteralBody>>* out) {
  for (size_t i = 0; i < files.size(); ++i) {
    std::string name = absl::StrCat(Sv(region), " ", i, " (", files[i], ")");
    if (EndsWith(files[i], ".npy")) {
      LiteralEncodeOptions o;
      o.shape = shape;
      o.name = name;
      out->push_back(NpyInputBody(files[i], types[i], o));
    } else {
      if (types[i]) {
        return absl::InvalidArgumentError(
            absl::StrCat(name, ": --dtype applies to .npy files only"));
      }
      absl::StatusOr<std::string> body = ReadMessageFile(files[i]);
      if (!body.ok()) return Prefix(body.status(), name);
      out->push_back(SerializedBody(*std::move(body), true, name));
    }
  }
  return absl::OkStatus();
}

int Run(const std::vector<std::string>& argv) {
  Args args(argv,
            {"module", "snapshot", "input", "output", "dtype", "output-dtype",
             "format", "o", "out"},
            {"no-output-block", "tf211-layout", "box-shape"});
  auto usage = [](const std::string& why) {
    std::cerr << "decomposed pack: " << why << "\n" << kUsage;
    return 2;
  };
  if (!args.ok()) return usage(args.error());
  if (!args.positional().empty()) {
    return usage("unexpected argument '" + args.positional()[0] + "'");
  }
  std::string out = args.Get("o", args.Get("out"));
  if (out.empty()) return usage("missing -o OUT");
  if (args.Has("module") == args.Has("snapshot")) {
    return usage("give exactly one of --module and --snapshot");
  }
  std::string format = args.Get("format", "decomposed");
  if (format != "decomposed" && format != "snapshot") {
    return usage("--format must be decomposed or snapshot");
  }
  std::vector<std::string> inputs = args.GetAll("input");
  std::vector<std::string> outputs = args.GetAll("output");
  std::vector<std::optional<PrimitiveType>> in_types, out_types;
  std::string error;
  if (!ParseDtypes(args.GetAll("dtype"), inputs.size(), "input", &in_types,
                   &error) ||
      !ParseDtypes(args.GetAll("output-dtype"), outputs.size(), "output",
                   &out_types, &error)) {
    return usage(error);
  }
  auto fail = [](const absl::Status& s) {
    std::cerr << "decomposed pack: " << s.message() << "\n";
    return 1;
  };
  PackRequest req;
  req.format = format == "snapshot" ? SnapshotType::kClassic
                                    : SnapshotType::kDecomposed;
  req.write.write_output_count = !args.Has("no-output-block");
  req.write.box.with_shape = args.Has("box-shape");
  ShapeEncodeOptions shape;
  shape.tail_padding_alignment = !args.Has("tf211-layout");
  if (args.Has("module")) {
    absl::StatusOr<std::string> module = ReadMessageFile(args.Get("module"));
    if (!module.ok()) return fail(module.status());
    absl::StatusOr<std::string> snap = SnapshotFromModule(*module);
    if (!snap.ok()) return fail(WithFile(snap.status(), args.Get("module")));
    req.snapshot = *std::move(snap);
  } else {
    absl::StatusOr<std::string> snap =
        LiteralEmptySnapshotOfFile(args.Get("snapshot"));
    if (!snap.ok()) return fail(snap.status());
    req.snapshot = *std::move(snap);
  }
  if (absl::Status s = AddLiterals(inputs, in_types, "input", shape,
                                   &req.inputs);
      !s.ok()) {
    return fail(s);
  }
  if (absl::Status s = AddLiterals(outputs, out_types, "output", shape,
                                   &req.outputs);
      !s.ok()) {
    return fail(s);
  }
  // Estimated output size for the progress line: the header plus every
  // input file (close enough: headers are small, varints differ).
  uint64_t estimate = req.snapshot.size();
  for (const auto* list : {&inputs, &outputs}) {
    for (const std::string& f : *list) {
      struct stat st;
      if (::stat(f.c_str(), &st) == 0) estimate += st.st_size;
    }
  }
  ProgressLine progress("pack", estimate);
  req.progress = [&progress](uint64_t done) { progress.Update(done); };
  absl::Status s = PackToFile(req, out);
  progress.Done();
  if (!s.ok()) return fail(s);
  return 0;
}

const Registrar kRegistrar(
    {"pack",
     "pack --module M.hlo --input A.npy... [--output O.npy...] -o OUT   "
     "write a decomposed (or --format snapshot) file",
     &Run});

}  // namespace
}  // namespace decomposed::cli
