// Inspect: list every frame of a snapshot file with its byte offset and
// length, and the element type and dimensions of each literal, read
// through SnapshotReader (reader.h):
//
//   decomposed  region [0], each count box, each element's length box and
//               body.
//   classic     the classic mapping (classic.h): the HloSnapshot is the
//               "snapshot", its inputs and outputs are the literals unpack
//               would write, each at the offset and length of its bytes in
//               the file (no boxes). A literal made of several merged
//               occurrences (a repeated `result`) is listed at its first
//               occurrence with the sum of their lengths.
//
// Example:
//   absl::StatusOr<decomposed::InspectReport> r =
//       decomposed::InspectFile("x.decomposed_hlo_snapshot");
//   std::cout << decomposed::JsonText(decomposed::InspectReportJson(*r));
#ifndef DECOMPOSED_SNAPSHOT_INSPECT_H_
#define DECOMPOSED_SNAPSHOT_INSPECT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "decomposed/container/box.h"
#include "decomposed/container/framing.h"
#include "decomposed/snapshot/snapshot_type.h"
#include "decomposed/xla/shape.h"
#include "nlohmann/json.hpp"

namespace decomposed {

struct InspectedLiteral {
  ElementInfo frame;     // length box and body (classic: no box, length 0)
  bool has_shape = false;
  Shape shape;           // as read from the body
  uint64_t data_bytes = 0;  // payload bytes of the data fields
};

struct InspectedModule {
  std::string name;
  std::string entry_computation_name;
  std::vector<std::string> parameters;  // shapes, "F32[2,3]{1,0}"
  std::vector<std::string> parameter_names;
  std::string result;
  bool has_program_shape = false;
  // The program's only parameter is a TUPLE: inputs are its elements
  // (InputParameterOf, classic.h).
  bool single_tuple_parameter = false;
  // hlo::ModuleSummary::OneLine() of the module ("module m: 3 computations,
  // 41 instructions, entry main (2 parameters) -> f32[2,3]; 2 dot; 1.2
  // GFLOP"), empty when the module does not validate; then summary_error
  // says why (the validator's message, naming computation and instruction).
  std::string summary;
  std::string summary_error;
};

struct InspectReport {
  SnapshotType type = SnapshotType::kDecomposed;  // never kAuto
  // Decomposed: region [0], its length box and snapshot bytes. Classic: the
  // whole file (no box).
  ElementInfo snapshot;
  uint64_t input_count_offset = 0;  // decomposed only
  std::vector<InspectedLiteral> inputs;
  // Decomposed: region [2]'s count box (nullopt: region [2] absent).
  // Classic: the result's first byte (nullopt: no result).
  std::optional<uint64_t> output_count_offset;
  std::vector<InspectedLiteral> outputs;
  // The module's facts, when it parses (SnapshotReader::Facts). nullopt
  // with an empty module_error: the snapshot has no module (an
  // arguments-only snapshot, as XLA writes some); with module_error: why it
  // could not be read (with module_info).
  std::optional<InspectedModule> module;
  std::string module_error;
  uint64_t file_size = 0;
};

struct InspectOptions {
  // kAuto (the default: detect, docs/format.md §7.8; a damaged decomposed
  // file whose first boxes are broken is then read as classic, and the
  // error says so when the bytes look decomposed), kDecomposed or kClassic.
  SnapshotType snapshot_type = SnapshotType::kAuto;
  DecomposedReadOptions read;
  // Parse the module to report its facts (SnapshotReader::Module:
  // materialises the module, which is bounded by protobuf's 2 GiB limit).
  bool module_info = true;
};

// Walks a whole file. Errors name the frame and byte offset and the file.
absl::StatusOr<InspectReport> InspectFile(const std::string& path,
                                          const InspectOptions& options = {});

// {"type": "decomposed" or "snapshot", "snapshot": {"offset", "length",
//  "box"}, "inputs": [...], "outputs": [...] or null, ...}; inputs/outputs
// entries carry "offset", "length" (of the body), "element_type" (XLA
// name), "dims", and the box (null for a classic file); inputs also
// "parameter" (the program parameter's name, InputParameterOf in
// classic.h, as unpack --manifest gives it; null when the module names
// none) and "tuple_index" (null unless the program's one parameter is a
// tuple whose element this input is).
nlohmann::ordered_json InspectReportJson(const InspectReport& report);

// Human-readable listing, one line per frame.
std::string InspectReportText(const InspectReport& report);

}  // namespace decomposed

#endif  // DECOMPOSED_SNAPSHOT_INSPECT_H_
