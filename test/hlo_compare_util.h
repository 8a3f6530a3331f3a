// Compares two HloModuleProtos field by field with ids renumbered: what a
// module read back from text must equal. Instructions are matched by name
// within computations matched by name; operands, control predecessors,
// called computations, roots, the entry and schedules are compared by the
// names they refer to; every other field (shapes, literals, attributes,
// metadata, ...) with protobuf's MessageDifferencer. DiffModules returns ""
// when they agree, else every difference found (the first 20), one a line.
#ifndef DECOMPOSED_TEST_HLO_COMPARE_UTIL_H_
#define DECOMPOSED_TEST_HLO_COMPARE_UTIL_H_

#include <map>
#include <string>
#include <vector>

#include <google/protobuf/util/field_comparator.h>
#include <google/protobuf/util/message_differencer.h>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "decomposed/proto/hlo.pb.h"

namespace decomposed::hlo::testing {

struct DiffOptions {
  // Fields of HloInstructionProto left out of the comparison (by name).
  std::vector<std::string> ignored_instruction_fields;
  // Compare unset and default-valued fields as equal (MessageDifferencer's
  // EQUIVALENT): for protos whose writer sets defaults explicitly.
  bool equivalent = false;
  // Leave control predecessors out (the short style does not print them).
  bool ignore_control_predecessors = false;
};

inline std::string DiffModules(const xla::HloModuleProto& a,
                               const xla::HloModuleProto& b,
                               const DiffOptions& options = {}) {
  std::vector<std::string> diffs;
  auto add = [&](std::string s) {
    if (diffs.size() < 20) diffs.push_back(std::move(s));
  };
  auto comp_names = [](const xla::HloModuleProto& m) {
    absl::flat_hash_map<int64_t, std::string> out;
    for (const auto& c : m.computations()) out[c.id()] = c.name();
    return out;
  };
  const auto ca = comp_names(a), cb = comp_names(b);
  auto name_of = [](const absl::flat_hash_map<int64_t, std::string>& m,
                    int64_t id) {
    auto it = m.find(id);
    return it == m.end() ? absl::StrCat("<id ", id, ">") : it->second;
  };
  google::protobuf::util::MessageDifferencer md;
  // NaN equals NaN here (literals of real modules hold NaN constants).
  google::protobuf::util::DefaultFieldComparator comparator;
  comparator.set_treat_nan_as_equal(true);
  md.set_field_comparator(&comparator);
  if (options.equivalent) {
    md.set_message_field_comparison(
        google::protobuf::util::MessageDifferencer::EQUIVALENT);
  }
  std::string report;
  md.ReportDifferencesToString(&report);
  auto compare = [&](const google::protobuf::Message& x,
                     const google::protobuf::Message& y, const std::string& where) {
    report.clear();
    if (!md.Compare(x, y)) add(absl::StrCat(where, ":\n", report));
  };

  // Module fields but computations, ids and the schedule.
  {
    xla::HloModuleProto x = a, y = b;
    for (auto* m : {&x, &y}) {
      m->clear_computations();
      m->clear_id();
      m->clear_entry_computation_id();
      m->clear_schedule();
    }
    compare(x, y, "module");
  }
  if (name_of(ca, a.entry_computation_id()) != name_of(cb, b.entry_computation_id())) {
    add("entry computations differ");
  }
  // Schedules by names.
  auto schedule = [&](const xla::HloModuleProto& m,
                      const absl::flat_hash_map<int64_t, std::string>& cn) {
    std::map<std::string, std::vector<std::string>> out;
    absl::flat_hash_map<int64_t, std::string> in;
    for (const auto& c : m.computations()) {
      for (const auto& i : c.instructions()) in[i.id()] = i.name();
    }
    for (const auto& [cid, seq] : m.schedule().sequences()) {
      auto& v = out[cn.contains(cid) ? cn.at(cid) : absl::StrCat(cid)];
      for (int64_t id : seq.instruction_ids()) {
        v.push_back(in.contains(id) ? in.at(id) : absl::StrCat(id));
      }
    }
    return out;
  };
  if (schedule(a, ca) != schedule(b, cb)) add("schedules differ");

  std::map<std::string, const xla::HloComputationProto*> by_name_b;
  for (const auto& c : b.computations()) by_name_b[c.name()] = &c;
  if (a.computations_size() != b.computations_size()) {
    add(absl::StrCat("computation counts differ: ", a.computations_size(),
                     " and ", b.computations_size()));
  }
  for (const auto& c : a.computations()) {
    auto it = by_name_b.find(c.name());
    if (it == by_name_b.end()) {
      add(absl::StrCat("computation ", c.name(), " missing from the second"));
      continue;
    }
    const xla::HloComputationProto& d = *it->second;
    absl::flat_hash_map<int64_t, std::string> ia, ib;
    for (const auto& i : c.instructions()) ia[i.id()] = i.name();
    for (const auto& i : d.instructions()) ib[i.id()] = i.name();
    const std::string where = absl::StrCat("computation ", c.name());
    {
      xla::HloComputationProto x = c, y = d;
      for (auto* p : {&x, &y}) {
        p->clear_instructions();
        p->clear_id();
        p->clear_root_id();
      }
      compare(x, y, where);
    }
    if (name_of(ia, c.root_id()) != name_of(ib, d.root_id())) {
      add(absl::StrCat(where, ": roots differ: ", name_of(ia, c.root_id()),
                       " and ", name_of(ib, d.root_id())));
    }
    if (c.instructions_size() != d.instructions_size()) {
      add(absl::StrCat(where, ": instruction counts differ: ",
                       c.instructions_size(), " and ", d.instructions_size()));
    }
    std::map<std::string, const xla::HloInstructionProto*> ib_by_name;
    for (const auto& i : d.instructions()) ib_by_name[i.name()] = &i;
    for (const auto& i : c.instructions()) {
      auto jt = ib_by_name.find(i.name());
      const std::string iw = absl::StrCat(where, ", instruction ", i.name());
      if (jt == ib_by_name.end()) {
        add(absl::StrCat(iw, " missing from the second"));
        continue;
      }
      const xla::HloInstructionProto& j = *jt->second;
      auto names = [&](const google::protobuf::RepeatedField<int64_t>& ids,
                       const absl::flat_hash_map<int64_t, std::string>& m) {
        std::vector<std::string> out;
        for (int64_t id : ids) out.push_back(name_of(m, id));
        return absl::StrJoin(out, ",");
      };
      if (names(i.operand_ids(), ia) != names(j.operand_ids(), ib)) {
        add(absl::StrCat(iw, ": operands differ: ", names(i.operand_ids(), ia),
                         " and ", names(j.operand_ids(), ib)));
      }
      if (!options.ignore_control_predecessors &&
          names(i.control_predecessor_ids(), ia) !=
              names(j.control_predecessor_ids(), ib)) {
        add(absl::StrCat(iw, ": control predecessors differ"));
      }
      if (names(i.called_computation_ids(), ca) !=
          names(j.called_computation_ids(), cb)) {
        add(absl::StrCat(iw, ": called computations differ: ",
                         names(i.called_computation_ids(), ca), " and ",
                         names(j.called_computation_ids(), cb)));
      }
      xla::HloInstructionProto x = i, y = j;
      for (auto* p : {&x, &y}) {
        p->clear_id();
        p->clear_operand_ids();
        p->clear_control_predecessor_ids();
        p->clear_called_computation_ids();
        const auto* desc = p->GetDescriptor();
        for (const std::string& f : options.ignored_instruction_fields) {
          if (const auto* fd = desc->FindFieldByName(f)) {
            p->GetReflection()->ClearField(p, fd);
          }
        }
      }
      compare(x, y, iw);
    }
  }
  return absl::StrJoin(diffs, "\n");
}

}  // namespace decomposed::hlo::testing

#endif  // DECOMPOSED_TEST_HLO_COMPARE_UTIL_H_
