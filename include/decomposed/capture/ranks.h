// The ranks of one tensor-parallel step, told apart by the names their
// tools give the files, for a replay of all of them together
// (eval/replicas.h, docs/eval.md §10):
//   * libneuronxla's snapshots
//     `<module>-process<P>-executable<E>-device<D>-execution<N>.<kind>.decomposed_hlo_snapshot`:
//     the files of one execution differ only in device<D>;
//   * vLLM-Neuron's bundles `<root>/<hash>/rank<G>/call<N>`: the call
//     directories of one forward share the hash and the call index, one
//     per global rank (capture/bundle_reader.h).
//
// Contract: OrderRankFiles sorts the paths by device (or global rank); the
// replay's rank r is the r-th (the ids need not start at 0 or be
// consecutive: a rank is a position). Paths of neither naming keep the
// order given. Errors (kInvalidArgument, naming both paths): two files of
// one naming that differ in more than the rank (two executions, two
// modules, inputs and outputs, two calls, two hashes), a rank given twice
// (or one path twice), a mix of namings; no paths at all.
//
// Example:
//   std::vector<std::string> files = {
//       "dump/m-process000000-executable000003-device000001-execution000496.inputs.decomposed_hlo_snapshot",
//       "dump/m-process000000-executable000003-device000000-execution000496.inputs.decomposed_hlo_snapshot"};
//   absl::StatusOr<std::vector<decomposed::capture::RankFile>> r =
//       decomposed::capture::OrderRankFiles(files);
//   // (*r)[0].path ends in device000000..., (*r)[0].id == 0
#ifndef DECOMPOSED_CAPTURE_RANKS_H_
#define DECOMPOSED_CAPTURE_RANKS_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace decomposed::capture {

enum class RankNaming : uint8_t {
  kNone,         // neither naming: the order given
  kDevice,       // libneuronxla's device<D>
  kBundleRank,   // rank<G>/call<N>
};

struct RankFile {
  int64_t rank = 0;  // the position: the replay's rank
  int64_t id = 0;    // the device or the global rank (the position for kNone)
  std::string path;
};

// What a path's name says: its naming, its rank id, and the rest of the
// name (what the ranks of one step share). nullopt id for kNone.
struct RankName {
  RankNaming naming = RankNaming::kNone;
  std::optional<int64_t> id;
  std::string shared;
};
RankName ParseRankName(std::string_view path);

absl::StatusOr<std::vector<RankFile>> OrderRankFiles(std::span<const std::string> paths);

}  // namespace decomposed::capture

#endif  // DECOMPOSED_CAPTURE_RANKS_H_
