// Inspect: list every frame of a decomposed file with its byte offset and
// length, and the element type and dimensions of each literal.
//
// Example:
//   absl::StatusOr<decomposed::InspectReport> r =
//       decomposed::InspectDecomposedFile("x.decomposed_hlo_snapshot");
//   std::cout << decomposed::InspectReportJson(*r).dump(2);
#ifndef DECOMPOSED_SNAPSHOT_INSPECT_H_
#define DECOMPOSED_SNAPSHOT_INSPECT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "decomposed/container/box.h"
#include "decomposed/container/framing.h"
#include "decomposed/xla/shape.h"
#include "nlohmann/json.hpp"

namespace decomposed {

struct InspectedLiteral {
  ElementInfo frame;     // length box and body
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
};

struct InspectReport {
  ElementInfo snapshot;  // region [0]: length box and snapshot bytes
  uint64_t input_count_offset = 0;
  std::vector<InspectedLiteral> inputs;
  std::optional<uint64_t> output_count_offset;  // nullopt: region [2] absent
  std::vector<InspectedLiteral> outputs;
  std::optional<InspectedModule> module;  // when the snapshot parses
  uint64_t file_size = 0;
};

struct InspectOptions {
  DecomposedReadOptions read;
  // Parse the region [0] HloSnapshot to report module facts (materialises
  // the snapshot, which is bounded by protobuf's 2 GiB limit).
  bool module_info = true;
};

// Walks a whole decomposed file. Errors name the frame and byte offset and
// the file.
absl::StatusOr<InspectReport> InspectDecomposedFile(
    const std::string& path, const InspectOptions& options = {});

// {"type": "decomposed", "snapshot": {"offset", "length"}, "inputs": [...],
//  "outputs": [...] or null, ...}; inputs/outputs entries carry "offset",
// "length" (of the body), "element_type" (XLA name), "dims", and the box.
nlohmann::ordered_json InspectReportJson(const InspectReport& report);

// Human-readable listing, one line per frame.
std::string InspectReportText(const InspectReport& report);

}  // namespace decomposed

#endif  // DECOMPOSED_SNAPSHOT_INSPECT_H_
