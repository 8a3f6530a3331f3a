#!/usr/bin/env python3
"""Every public header's `Example:` compiles.

Each header under include/decomposed/ says what it does with an example in
its contract comment (`// Example:` or `// Example (what it shows):`, then
the code, indented, on `//` lines). This script takes every such block out,
makes it the body of a function in one translation unit that includes every
public header, declares before it the values the example takes as given
(GIVENS below: a path, the bytes of a body, the options of the caller), and
compiles the unit with -fsyntax-only: a renamed function, a wrong argument,
a member that is not there, fails the test. What an example elides it writes
as a comment (`// ...`), never as code.

Usage: header_examples.py SOURCE_DIR CXX [-I DIR ...]
  (ctest passes the compiler and the generated protobuf headers' folder)
  --list prints the examples found and the generated unit, and compiles
  nothing.
"""
import os
import re
import subprocess
import sys
import tempfile

# What each example takes as given, by "<header under include/>#<n>" (n: the
# example's number in that header, from 0): declarations placed before the
# example's code, in the same function. The function returns absl::Status
# unless RETURNS says otherwise.
GIVENS = {
    "decomposed/analysis/divergence.h#0": """
        std::unique_ptr<decomposed::hlo::HloModule> module;
        std::vector<decomposed::eval::Value> inputs;""",
    "decomposed/capture/bundle_reader.h#1": """
        using namespace decomposed::capture;""",
    "decomposed/capture/plan.h#0": """
        using namespace decomposed::capture;""",
    "decomposed/capture/selector.h#1": """
        using namespace decomposed::capture;""",
    "decomposed/eval/evaluate.h#1": """
        std::unique_ptr<decomposed::hlo::HloModule> module;
        std::vector<decomposed::eval::Value> inputs;
        decomposed::eval::EvalOptions options;""",
    "decomposed/eval/replicas.h#0": """
        std::unique_ptr<decomposed::hlo::HloModule> m0, m1;
        decomposed::eval::Value x0, x1;""",
    "decomposed/hlo/print.h#0": """
        std::unique_ptr<decomposed::hlo::HloModule> module;""",
    "decomposed/analysis/compare.h#0": """
        decomposed::CompareOptions options;
        constexpr auto kF32 = decomposed::PrimitiveType::kF32;
        const char* expected_bytes = nullptr;
        const char* actual_bytes = nullptr;
        uint64_t n = 0;""",
    "decomposed/analysis/error_histogram.h#0": """
        std::vector<float> target, reference;""",
    "decomposed/analysis/plots.h#0": """
        std::vector<decomposed::ThreeWayRun> runs;""",
    "decomposed/analysis/scatter.h#0": """
        absl::StatusOr<std::unique_ptr<decomposed::TensorSet>> expected, actual;
        decomposed::CompareOptions options;""",
    "decomposed/analysis/stats.h#0": """
        const char* bytes = nullptr;
        uint64_t n = 0;""",
    "decomposed/capture/budget.h#0": """
        using namespace decomposed::capture;
        SnapshotConfig config;
        Verdict verdict;
        auto write_bundle = [] {};""",
    "decomposed/capture/bundle_reader.h#0": """
        using namespace decomposed::capture;""",
    "decomposed/capture/bundle_writer.h#0": """
        using namespace decomposed::capture;
        using decomposed::DecodeLiteral;
        const void* ptr = nullptr;
        decomposed::MemorySource src(std::string_view{});
        uint64_t body = 0;
        decomposed::Frame frame{"input", 0, "body"};""",
    "decomposed/capture/capturer.h#0": """
        using namespace decomposed::capture;
        SnapshotConfig config;
        ForwardInfo forward;
        std::vector<HostTensor> inputs;""",
    "decomposed/capture/config.h#0": """
        using namespace decomposed::capture;""",
    "decomposed/capture/pt_reader.h#0": """
        using namespace decomposed::capture;""",
    "decomposed/capture/regular_file.h#0": """
        using namespace decomposed::capture;
        absl::Status s;""",
    "decomposed/capture/replay.h#0": """
        using namespace decomposed::capture;""",
    "decomposed/capture/selector.h#0": """
        using namespace decomposed::capture;
        SnapshotConfig config;
        ForwardInfo forward;""",
    "decomposed/capture/torch_dtype.h#0": """
        using namespace decomposed::capture;""",
    "decomposed/capture/unpickler.h#0": """
        using namespace decomposed::capture;
        std::string data_pkl;""",
    "decomposed/capture/zip_reader.h#0": """
        using namespace decomposed::capture;""",
    "decomposed/container/block.h#0": """
        decomposed::MemorySource src(std::string_view{});
        uint64_t total = 0;""",
    "decomposed/container/element.h#0": """
        std::string_view bytes;
        auto decode_something = [](auto&) {};""",
    "decomposed/container/element.h#1": """
        std::string out;
        decomposed::StringSink sink(&out);
        std::string_view body;""",
    "decomposed/container/framing.h#0": """
        std::string path;""",
    "decomposed/eval/custom_call.h#0": """
        decomposed::eval::EvalOptions options;""",
    "decomposed/eval/evaluate.h#0": """
        decomposed::xla::HloModuleProto proto;""",
    "decomposed/eval/literal.h#0": """
        const decomposed::hlo::HloInstruction& instr =
            *static_cast<const decomposed::hlo::HloInstruction*>(nullptr);""",
    "decomposed/eval/numerics.h#0": """
        using decomposed::PrimitiveType;""",
    "decomposed/hlo/module.h#0": """
        decomposed::xla::HloModuleProto proto;""",
    "decomposed/hlo/builder.h#0": """
        namespace xla = decomposed::xla;""",
    "decomposed/hlo/opcode.h#0": """
        using decomposed::hlo::HloOpcode;""",
    "decomposed/hlo/random_module.h#0": """
        namespace xla = decomposed::xla;""",
    "decomposed/hlo/shape_inference.h#0": """
        namespace xla = decomposed::xla;""",
    "decomposed/hlo/text.h#0": """
        std::string text;
        decomposed::hlo::HloPrintOptions options;
        auto module_of = [](const decomposed::xla::HloModuleProto& p) {
          return decomposed::hlo::HloModule::Create(p).value();
        };""",
    "decomposed/hlo/validate.h#0": """
        decomposed::xla::HloModuleProto proto;""",
    "decomposed/io/limited_source.h#0": """
        decomposed::MemorySource src(std::string_view{});
        decomposed::ElementInfo e;
        auto decode_something = [](auto&) { return absl::OkStatus(); };""",
    "decomposed/io/byte_sink.h#0": """
        std::string_view header, payload;""",
    "decomposed/io/chunk_pipe.h#0": """
        auto decode_into = [](decomposed::ChunkPipe& out) {
          return out.Write("bytes") ? absl::OkStatus() : out.status();
        };
        auto use = [](const char*) {};""",
    "decomposed/io/splice_copy.h#0": """
        int in_fd = 0, out_fd = 1;
        uint64_t offset = 0, length = 0;""",
    "decomposed/npy/literal_to_npy.h#0": """
        std::string_view body;""",
    "decomposed/npy/npy_reader.h#0": """
        int fd = 0;""",
    "decomposed/npy/npy_sink.h#0": """
        const char* bytes = nullptr;""",
    "decomposed/npy/npz_writer.h#0": """
        decomposed::MemorySource src(std::string_view{});
        uint64_t length = 0;
        decomposed::Frame frame{"input", 0, "body"};""",
    "decomposed/npy/stored_zip.h#0": """
        using namespace decomposed;
        std::string out;
        StringSink sink(&out);""",
    "decomposed/snapshot/classic.h#0": """
        std::string path;""",
    "decomposed/snapshot/classic_writer.h#0": """
        std::string snapshot;
        std::vector<decomposed::LiteralSource*> args;
        decomposed::LiteralSource* result = nullptr;""",
    "decomposed/snapshot/each.h#0": """
        std::vector<std::string> paths;""",
    "decomposed/snapshot/producer.h#0": """
        std::string module_bytes;""",
    "decomposed/snapshot/reader.h#0": """
        std::string path;""",
    "decomposed/snapshot/unpack.h#1": """
        std::string_view bytes;
        decomposed::UnpackOptions options;
        uint64_t offset = 0, length = 0;""",
    "decomposed/testing/fault_source.h#0": """
        std::string bytes;""",
    "decomposed/wire/format.h#0": """
        namespace wire = decomposed::wire;
        std::string_view bytes;""",
    "decomposed/wire/reader.h#0": """
        namespace wire = decomposed::wire;
        std::string_view bytes;
        uint64_t base_offset = 0;
        int32_t type = 0;
        std::vector<uint64_t> dims;""",
    "decomposed/wire/writer.h#0": """
        namespace wire = decomposed::wire;""",
    "decomposed/xla/array_buffer.h#0": """
        decomposed::MemorySource src(std::string_view{});
        std::string_view body;
        decomposed::Frame frame{"input", 0, "body"};""",
    "decomposed/xla/array_sink.h#0": """
        decomposed::MemorySource src(std::string_view{});
        std::string_view body;
        decomposed::Frame frame{"input", 0, "body"};""",
    "decomposed/xla/literal_decoder.h#0": """
        std::string_view body;""",
    "decomposed/xla/literal_plan.h#0": """
        std::string_view body;
        decomposed::Frame frame{"input", 0, "body"};""",
    "decomposed/xla/payload_copy.h#0": """
        decomposed::ArrayBuffer sink;
        decomposed::MemorySource src(std::string_view{});
        decomposed::ArrayHeader header;
        char buf[256];
        decomposed::Frame frame{"input", 0, "body"};""",
    "decomposed/xla/shape.h#0": """
        std::string_view bytes;
        uint64_t base_offset = 0;""",
    "decomposed/xla/transpose.h#0": """
        std::string_view physical_bytes;
        decomposed::Shape shape;
        struct {
          absl::Status Put(std::string_view) { return absl::OkStatus(); }
        } out;""",
    "decomposed/xla/varint_decode.h#0": """
        struct Out {  // what DecodePackedVarintsFor writes into
          explicit Out(uint64_t n) : left(n) {}
          uint64_t remaining() const { return left; }
          absl::Status Put(std::string_view d) {
            left -= d.size();
            return absl::OkStatus();
          }
          uint64_t left;
        };
        decomposed::Frame frame{"input", 0, "body"};""",
}
# Examples of an API that is being written: listed, not compiled, until it
# lands (then the entry goes). Each says what it waits for.
PENDING = {}
# Examples that return something other than absl::Status.
RETURNS = {
    "decomposed/analysis/report.h#0": "int",
    "decomposed/analysis/three_way.h#0": "int",
}

EXAMPLE = re.compile(r"^// Example\b[^:]*:")


def examples_of(text):
    """The code of each example block of a header, dedented."""
    lines = text.split("\n")
    out = []
    i = 0
    while i < len(lines):
        if not EXAMPLE.match(lines[i]):
            i += 1
            continue
        block = []
        i += 1
        while i < len(lines):
            line = lines[i]
            if line == "//":
                block.append("")
            elif line.startswith("//  "):
                block.append(line[2:])
            else:
                break
            i += 1
        while block and not block[-1].strip():
            block.pop()
        indent = min((len(l) - len(l.lstrip()) for l in block if l.strip()),
                     default=0)
        out.append("\n".join(l[indent:] for l in block))
    return out


def main(argv):
    listing = "--list" in argv
    argv = [a for a in argv if a != "--list"]
    src, cxx, flags = argv[1], argv[2], argv[3:]
    inc = os.path.join(src, "include")
    headers = []
    for dirpath, _, files in os.walk(os.path.join(inc, "decomposed")):
        for f in files:
            if f.endswith(".h"):
                headers.append(os.path.relpath(os.path.join(dirpath, f), inc))
    headers.sort()
    unit = ["// Generated by test/header_examples.py: every header's Example.",
            "#include <cmath>", "#include <cstdint>", "#include <iostream>",
            "#include <memory>", "#include <optional>", "#include <string>",
            "#include <string_view>", "#include <vector>",
            '#include "absl/status/status.h"',
            '#include "absl/status/statusor.h"',
            '#include "nlohmann/json.hpp"']
    unit += [f'#include "{h}"' for h in headers]
    found = []
    used = set()
    for h in headers:
        with open(os.path.join(inc, h), encoding="utf-8") as f:
            blocks = examples_of(f.read())
        for n, code in enumerate(blocks):
            key = f"{h}#{n}"
            found.append(key)
            used.add(key)
            if key in PENDING:
                print(f"header_examples: {key} not compiled: {PENDING[key]}")
                continue
            ret = RETURNS.get(key, "absl::Status")
            name = re.sub(r"\W", "_", key)
            unit.append(f"\n#line 1 \"{key} (given)\"")
            unit.append(f"[[maybe_unused]] static {ret} Example_{name}() {{")
            unit.append(GIVENS.get(key, ""))
            unit.append(f"#line 1 \"{key}\"")
            unit.append("{\n" + code + "\n}")
            unit.append("return {};\n}")
    stale = sorted((set(GIVENS) | set(PENDING)) - used)
    if stale:
        print("header_examples: GIVENS for examples that are not there:", stale)
        return 1
    text = "\n".join(unit) + "\n"
    if listing:
        print(text)
        return 0
    with tempfile.TemporaryDirectory(prefix="header_examples_") as tmp:
        path = os.path.join(tmp, "examples.cc")
        with open(path, "w") as f:
            f.write(text)
        # An example may ignore a status it shows (-Wno-unused-result).
        cmd = [cxx, "-std=c++20", "-fsyntax-only", "-Wno-unused-result",
               "-I", inc] + flags + [path]
        r = subprocess.run(cmd, capture_output=True, text=True)
    errors = [l for l in r.stderr.splitlines() if ": error:" in l]
    if r.returncode != 0:
        for l in r.stderr.splitlines()[:200]:
            print(l)
    print(f"header_examples: {len(found) - len(PENDING)} of {len(found)} "
          f"examples in {len(headers)} headers compiled, {len(errors)} errors")
    return 0 if r.returncode == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
