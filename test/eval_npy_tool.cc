// Test driver for test/eval_interop.py: evaluates a serialized
// HloModuleProto on .npy inputs and writes each output as a .npy.
//
//   eval_npy_tool MODULE.pb NUMERICS OUT_PREFIX [IN.npy[:TYPE]]...
//
// TYPE names the XLA type of a void-typed .npy ("bf16" for NumPy's |V2 or
// a uint16 view). Outputs: OUT_PREFIX<j>.npy, one per element of a tuple
// root; bf16 is written with its bits as <u2. Exit 0 on success; 1 with
// the status on stderr.
#include <fstream>
#include <iostream>
#include <sstream>

#include "decomposed/eval/evaluate.h"
#include "decomposed/io/byte_source.h"
#include "decomposed/npy/npy_reader.h"
#include "decomposed/npy/npy_sink.h"

namespace {

using decomposed::PrimitiveType;
using decomposed::eval::Array;
using decomposed::eval::Value;

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return absl::NotFoundError("cannot open " + path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

absl::StatusOr<Value> ReadNpy(const std::string& spec) {
  std::string path = spec;
  decomposed::NpyReadOptions opts;
  if (size_t colon = spec.rfind(':'); colon != std::string::npos) {
    path = spec.substr(0, colon);
    opts.dtype = decomposed::PrimitiveTypeFromName(spec.substr(colon + 1));
  }
  absl::StatusOr<std::string> bytes = ReadFile(path);
  if (!bytes.ok()) return bytes.status();
  decomposed::MemorySource src(*bytes);
  absl::StatusOr<decomposed::NpyArrayInfo> info = decomposed::ReadNpyArrayHeader(src, opts);
  if (!info.ok()) return info.status();
  return Array::Copy(info->type, info->dims(),
                     std::string_view(*bytes).substr(info->data_offset, info->data_bytes));
}

absl::Status WriteNpy(const std::string& path, const Array& in) {
  absl::StatusOr<Array> a = in.Contiguous();
  if (!a.ok()) return a.status();
  std::string descr(a->type_info().npy_descr);
  if (a->type() == PrimitiveType::kBF16 || a->type() == PrimitiveType::kF16) descr = "<u2";
  if (decomposed::Info(a->type()).element_bytes == 1 && descr == "|V1") descr = "|u1";
  decomposed::NpyHeader h;
  h.descr = descr;
  h.shape = a->dims();
  std::ofstream f(path, std::ios::binary);
  f << decomposed::FormatNpyHeader(h);
  f.write(a->data(), static_cast<std::streamsize>(a->byte_size()));
  return f ? absl::OkStatus() : absl::DataLossError("cannot write " + path);
}

int Main(int argc, char** argv) {
  if (argc < 4) {
    std::cerr << "usage: eval_npy_tool MODULE.pb NUMERICS OUT_PREFIX [IN.npy[:TYPE]]...\n";
    return 2;
  }
  absl::StatusOr<std::string> pb = ReadFile(argv[1]);
  if (!pb.ok()) { std::cerr << pb.status() << "\n"; return 1; }
  decomposed::xla::HloModuleProto proto;
  if (!proto.ParseFromString(*pb)) { std::cerr << "bad module\n"; return 1; }
  auto module = decomposed::hlo::HloModule::Create(std::move(proto));
  if (!module.ok()) { std::cerr << module.status() << "\n"; return 1; }
  decomposed::eval::EvalOptions options;
  auto numerics = decomposed::eval::NumericsFromName(argv[2]);
  if (!numerics) { std::cerr << "bad numerics\n"; return 2; }
  options.numerics = *numerics;
  std::vector<Value> inputs;
  for (int i = 4; i < argc; ++i) {
    absl::StatusOr<Value> v = ReadNpy(argv[i]);
    if (!v.ok()) { std::cerr << argv[i] << ": " << v.status() << "\n"; return 1; }
    inputs.push_back(*v);
  }
  absl::StatusOr<Value> out = decomposed::eval::Evaluate(**module, inputs, options);
  if (!out.ok()) { std::cerr << out.status() << "\n"; return 1; }
  std::vector<Value> outs = decomposed::eval::FlattenOutputs(*out);
  for (size_t j = 0; j < outs.size(); ++j) {
    if (!outs[j].is_array()) { std::cerr << "output " << j << " is a tuple\n"; return 1; }
    if (absl::Status s = WriteNpy(std::string(argv[3]) + std::to_string(j) + ".npy", outs[j].array()); !s.ok()) {
      std::cerr << s << "\n";
      return 1;
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return Main(argc, argv); }
