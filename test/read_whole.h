// ReadWhole: reads a whole decomposed stream through DecomposedReader,
// copying every body, so that tests can compare results across sources.
#ifndef DECOMPOSED_TEST_READ_WHOLE_H_
#define DECOMPOSED_TEST_READ_WHOLE_H_

#include <optional>
#include <string>
#include <vector>

#include "decomposed/container/framing.h"

namespace decomposed::test {

struct WholeFile {
  ElementInfo header;
  std::string snapshot;
  std::vector<ElementInfo> inputs;
  std::vector<std::string> input_bodies;
  bool outputs_present = false;
  std::vector<ElementInfo> outputs;
  std::vector<std::string> output_bodies;
  uint64_t end_position = 0;

  friend bool operator==(const WholeFile& a, const WholeFile& b) {
    auto same = [](const std::vector<ElementInfo>& x,
                   const std::vector<ElementInfo>& y) {
      if (x.size() != y.size()) return false;
      for (size_t i = 0; i < x.size(); ++i) {
        if (x[i].box_offset != y[i].box_offset ||
            x[i].box_length != y[i].box_length ||
            x[i].offset != y[i].offset || x[i].length != y[i].length) {
          return false;
        }
      }
      return true;
    };
    return same({a.header}, {b.header}) && a.snapshot == b.snapshot &&
           same(a.inputs, b.inputs) && a.input_bodies == b.input_bodies &&
           a.outputs_present == b.outputs_present &&
           same(a.outputs, b.outputs) && a.output_bodies == b.output_bodies &&
           a.end_position == b.end_position;
  }
};

template <ByteSource S>
absl::Status ReadListBodies(BlockReader<S>& list,
                            std::vector<ElementInfo>* infos,
                            std::vector<std::string>* bodies) {
  ElementInfo e;
  for (;;) {
    absl::StatusOr<bool> more = list.Next(&e);
    if (!more.ok()) return more.status();
    if (!*more) return absl::OkStatus();
    infos->push_back(e);
    bodies->emplace_back();
    absl::Status s = ReadToString(list.body(), e.length, list.BodyFrame(),
                                  &bodies->back());
    if (!s.ok()) return s;
  }
}

template <ByteSource S>
absl::StatusOr<WholeFile> ReadWhole(S& src,
                                    DecomposedReadOptions options = {}) {
  WholeFile f;
  DecomposedReader<S> reader(src, options);
  absl::StatusOr<ElementInfo> h = reader.ReadHeader(&f.snapshot);
  if (!h.ok()) return h.status();
  f.header = *h;
  absl::StatusOr<uint64_t> n = reader.StartInputs();
  if (!n.ok()) return n.status();
  absl::Status s =
      ReadListBodies(reader.inputs(), &f.inputs, &f.input_bodies);
  if (!s.ok()) return s;
  absl::StatusOr<std::optional<uint64_t>> m = reader.StartOutputs();
  if (!m.ok()) return m.status();
  f.outputs_present = m->has_value();
  if (f.outputs_present) {
    s = ReadListBodies(reader.outputs(), &f.outputs, &f.output_bodies);
    if (!s.ok()) return s;
  }
  s = reader.Finish();
  if (!s.ok()) return s;
  f.end_position = src.position();
  return f;
}

}  // namespace decomposed::test

#endif  // DECOMPOSED_TEST_READ_WHOLE_H_
