// ParseHloText (hlo/parse.h): the module, its computations, instructions
// and operands, names, and the ids XLA gives a parsed module. Attribute
// values are in parse_attributes.cc, shapes and literals in
// parse_literal.cc.
#include "decomposed/hlo/parse.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "absl/algorithm/container.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "decomposed/hlo/serialize.h"
#include "decomposed/hlo/shape_inference.h"
#include "decomposed/limits.h"
#include "decomposed/status.h"
#include "decomposed/wire/format.h"
#include "decomposed/wire/writer.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "parser.h"

namespace decomposed::hlo {
namespace internal {

namespace {

std::string Quote(absl::string_view s) { return absl::StrCat("\"", s, "\""); }

// The number a name ends in, `.` then at most 10 digits that fit XLA's
// 32-bit unique ids (`add.12`: 12), or -1.
int64_t NameNumber(absl::string_view name) {
  const size_t dot = name.rfind('.');
  if (dot == absl::string_view::npos || dot == 0 || dot + 1 == name.size()) return -1;
  const absl::string_view digits = name.substr(dot + 1);
  int64_t id = 0;
  if (digits.size() > 10 || !absl::c_all_of(digits, absl::ascii_isdigit) ||
      !absl::SimpleAtoi(digits, &id) || id > std::numeric_limits<int32_t>::max()) {
    return -1;
  }
  return id;
}

// Calls f(number, wire_type, field, payload, value) for each top-level
// field of `bytes` (field: its whole encoding, tag included; payload: a
// length-delimited field's bytes; value: a varint's value); false on bytes
// that are not a message (the parser's own serialization always is one).
template <class F>
bool ForEachField(absl::string_view bytes, F f) {
  const char* p = bytes.data();
  const char* const end = p + bytes.size();
  while (p < end) {
    const char* begin = p;
    uint64_t tag = 0, v = 0;
    absl::string_view payload;
    if (wire::ReadVarint(&p, end, &tag) != wire::VarintResult::kOk) return false;
    const auto type = static_cast<wire::WireType>(tag & 7);
    switch (type) {
      case wire::kVarint:
        if (wire::ReadVarint(&p, end, &v) != wire::VarintResult::kOk) return false;
        break;
      case wire::kFixed64:
        if (end - p < 8) return false;
        p += 8;
        break;
      case wire::kFixed32:
        if (end - p < 4) return false;
        p += 4;
        break;
      case wire::kLen:
        if (wire::ReadVarint(&p, end, &v) != wire::VarintResult::kOk ||
            v > static_cast<uint64_t>(end - p)) {
          return false;
        }
        payload = absl::string_view(p, static_cast<size_t>(v));
        p += v;
        break;
      default:
        return false;
    }
    f(static_cast<uint32_t>(tag >> 3), type,
      absl::string_view(begin, static_cast<size_t>(p - begin)), payload, v);
  }
  return true;
}

// Instruction fields the parser stores by position (HloInstructionProto).
constexpr uint32_t kIdField = 35, kOperandIdsField = 36,
                   kControlPredecessorIdsField = 37, kCalledComputationIdsField = 38;

}  // namespace

// --- Errors and tokens --------------------------------------------------------------

bool Parser::Fail(size_t offset, absl::string_view expected,
                  absl::string_view found) {
  if (status_.ok()) {
    size_t line = 0, column = 0;
    lexer_.LineColumn(offset, &line, &column);
    status_ = absl::InvalidArgumentError(absl::StrCat(
        "line ", line, ", column ", column, ": expected ", expected,
        ", found ", found));
  }
  return false;
}

bool Parser::Expect(absl::string_view expected) {
  return Fail(offset(), expected, Found());
}

bool Parser::Consume(Tok k, absl::string_view what) {
  if (kind() != k) return Expect(what);
  lexer_.Advance();
  return true;
}

bool Parser::Enter() {
  if (++depth_ > options_.max_depth) {
    --depth_;
    return Fail(offset(),
                absl::StrCat("nesting at most ", options_.max_depth, " deep"),
                absl::StrCat(Found(), " one level deeper"));
  }
  return true;
}

bool Parser::ParseName(absl::string_view* out, absl::string_view what) {
  if (kind() != Tok::kName && kind() != Tok::kIdent) return Expect(what);
  // `-inf`, `-nan` lex as identifiers for literals; no name starts with `-`.
  if (text()[0] == '-') return Expect(what);
  *out = text();
  lexer_.Advance();
  return true;
}

// --- Module -------------------------------------------------------------------------------

Parser::Parser(absl::string_view text, const HloParseOptions& options,
               bool to_bytes)
    : lexer_(text), options_(options), to_bytes_(to_bytes) {
  if (to_bytes_) {
    constexpr size_t kBlock = size_t{64} << 10;
    arena_block_ = std::make_unique<char[]>(kBlock);
    google::protobuf::ArenaOptions o;
    o.initial_block = arena_block_.get();
    o.initial_block_size = kBlock;
    arena_ = std::make_unique<google::protobuf::Arena>(o);
  }
}

absl::Status Parser::Run(ParsedHloText* out) {
  if (!ParseModule() || !Finish(out)) return status_;
  return absl::OkStatus();
}

absl::Status Parser::RunToBytes(absl::FunctionRef<bool(absl::string_view)> write,
                                HloModuleTextExtras* extras) {
  if (!ParseModule() || !FinishToBytes(write, extras)) return status_;
  return absl::OkStatus();
}

char* RecordStore::Append(size_t n, StoredRecord* where) {
  const size_t need = wire::VarintSize(n) + n;
  if (capacity_ - used_ < need) {
    capacity_ = std::max(need, kChunkBytes);
    chunks_.push_back(std::unique_ptr<char[]>(new char[capacity_]));
    live_.push_back(0);
    used_ = 0;
  }
  where->chunk = static_cast<uint32_t>(chunks_.size() - 1);
  where->offset = static_cast<uint32_t>(used_);
  ++live_.back();
  char* p = wire::WriteVarint(n, chunks_.back().get() + used_);
  used_ += need;
  return p;
}

absl::string_view RecordStore::View(const StoredRecord& r) const {
  const char* p = chunks_[r.chunk].get() + r.offset;
  uint64_t n = 0;
  wire::ReadVarint(&p, p + wire::kMaxVarintBytes, &n);
  return absl::string_view(p, static_cast<size_t>(n));
}

void RecordStore::Release(const StoredRecord& r) {
  if (--live_[r.chunk] == 0 && sealed_) chunks_[r.chunk].reset();
}

bool Parser::ParseModule() {
  if (IsIdent("HloModule")) {
    lexer_.Advance();
    absl::string_view name;
    if (!ParseName(&name, "the module's name after HloModule")) return false;
    module_.set_name(std::string(name));
    if (!ParseHeaderAttributes()) return false;
  }
  if (IsIdent("FileNames") && !ParseStackFrameIndex()) return false;
  if (kind() == Tok::kEof) return Expect("a computation");
  while (kind() != Tok::kEof) {
    if (!ParseComputation()) return false;
  }
  return true;
}

bool Parser::ParseHeaderAttributes() {
  absl::flat_hash_set<absl::string_view> seen;
  while (kind() == Tok::kComma) {
    lexer_.Advance();
    const size_t name_offset = offset();
    if (kind() != Tok::kIdent) return Expect("a module attribute name");
    const absl::string_view name = text();
    lexer_.Advance();
    if (kind() != Tok::kEqual) return Expect(absl::StrCat("\"=\" after ", name));
    lexer_.Advance();
    if (!seen.insert(name).second) {
      return Fail(name_offset, "each module attribute once",
                  absl::StrCat(Quote(name), " again"));
    }
    const size_t value_offset = offset();
    if (name == "is_scheduled") {
      if (!ParseBool(&is_scheduled_)) return false;
    } else if (name == "entry_computation_layout") {
      if (!Consume(Tok::kLbrace, "\"{\" to start entry_computation_layout") ||
          !Consume(Tok::kLparen, "\"(\" before the parameter layouts")) {
        return false;
      }
      if (kind() != Tok::kRparen) {
        // XLA's spelling until 2023 joins the parameters with "," alone
        // (no space, no index comments); remembered so it prints back so.
        bool compact = true;
        do {
          if (!ParseShape(entry_layout_.add_parameters())) return false;
          if (kind() != Tok::kComma) break;
          lexer_.Advance();
          compact = compact && offset() == lexer_.prev_end();
        } while (true);
        extras_.compact_entry_layout_parameters = compact && entry_layout_.parameters_size() > 1;
      }
      if (!Consume(Tok::kRparen, "\")\" after the parameter layouts") ||
          !Consume(Tok::kArrow, "\"->\" before the result layout") ||
          !ParseShape(entry_layout_.mutable_result()) ||
          !Consume(Tok::kRbrace, "\"}\" to end entry_computation_layout")) {
        return false;
      }
      has_layout_ = true;
    } else if (name == "input_output_alias") {
      xla::HloInputOutputAliasProto* alias = module_.mutable_input_output_alias();
      if (!Consume(Tok::kLbrace, "\"{\" to start input_output_alias")) return false;
      while (kind() != Tok::kRbrace) {
        xla::HloInputOutputAliasProto::AliasEntryProto* e = alias->add_entries();
        std::vector<int64_t> out_index, param_index;
        int64_t param = 0;
        if (!ParseShapeIndex(&out_index) ||
            !Consume(Tok::kColon, "\":\" after the output shape index") ||
            !Consume(Tok::kLparen, "\"(\" before the aliased parameter") ||
            !ParseInt64(&param, "a parameter number") ||
            !Consume(Tok::kComma, "\",\" after the parameter number") ||
            !ParseShapeIndex(&param_index)) {
          return false;
        }
        e->mutable_output_shape_index()->Add(out_index.begin(), out_index.end());
        e->set_parameter_number(param);
        e->mutable_parameter_shape_index()->Add(param_index.begin(),
                                                param_index.end());
        e->set_kind(xla::MAY_ALIAS);
        if (EatIf(Tok::kComma)) {
          if (IsIdent("must-alias")) {
            e->set_kind(xla::MUST_ALIAS);
          } else if (!IsIdent("may-alias")) {
            return Expect("must-alias or may-alias");
          }
          lexer_.Advance();
        }
        if (!Consume(Tok::kRparen, "\")\" after the aliased parameter")) return false;
        if (!EatIf(Tok::kComma)) break;
      }
      if (!Consume(Tok::kRbrace, "\"}\" to end input_output_alias")) return false;
    } else if (name == "buffer_donor") {
      xla::HloBufferDonorProto* donor = module_.mutable_buffer_donor();
      if (!Consume(Tok::kLbrace, "\"{\" to start buffer_donor")) return false;
      while (kind() != Tok::kRbrace) {
        int64_t param = 0;
        std::vector<int64_t> index;
        if (!Consume(Tok::kLparen, "\"(\" before a buffer donor") ||
            !ParseInt64(&param, "a parameter number") ||
            !Consume(Tok::kComma, "\",\" after the parameter number") ||
            !ParseShapeIndex(&index) ||
            !Consume(Tok::kRparen, "\")\" after the buffer donor")) {
          return false;
        }
        auto* e = donor->add_entries();
        e->set_parameter_number(param);
        e->mutable_parameter_shape_index()->Add(index.begin(), index.end());
        if (!EatIf(Tok::kComma)) break;
      }
      if (!Consume(Tok::kRbrace, "\"}\" to end buffer_donor")) return false;
    } else if (name == "frontend_attributes") {
      if (!ParseFrontendAttributes(module_.mutable_frontend_attributes())) {
        return false;
      }
    } else if (name == "replica_count" || name == "num_partitions") {
      int64_t v = 0;
      if (!ParseInt64(&v)) return false;
    } else if (name == "alias_passthrough_params") {
      bool b = false;
      if (!ParseBool(&b)) return false;
    } else if (name == "allow_spmd_sharding_propagation_to_parameters" ||
               name == "allow_spmd_sharding_propagation_to_output") {
      bool b = false;
      if (kind() == Tok::kLbrace) {
        lexer_.Advance();
        if (kind() != Tok::kRbrace) {
          do {
            if (!ParseBool(&b)) return false;
          } while (EatIf(Tok::kComma));
        }
        if (!Consume(Tok::kRbrace, "\"}\" to end the list of booleans")) {
          return false;
        }
      } else if (!ParseBool(&b)) {
        return false;
      }
    } else if (name == "origin_recovery_table") {
      if (kind() != Tok::kLbrace) return Expect("\"{\" to start origin_recovery_table");
      if (lexer_.ScanBraces().empty()) {
        return Fail(value_offset, "a \"}\" closing origin_recovery_table",
                    "end of input");
      }
    } else {
      return Fail(name_offset,
                  "a module attribute (is_scheduled, entry_computation_layout, "
                  "input_output_alias, buffer_donor, frontend_attributes, "
                  "replica_count, num_partitions, alias_passthrough_params, "
                  "allow_spmd_sharding_propagation_to_parameters, "
                  "allow_spmd_sharding_propagation_to_output, "
                  "origin_recovery_table)",
                  Quote(name));
    }
    if (name == "replica_count" || name == "num_partitions" ||
        name == "alias_passthrough_params" ||
        name == "allow_spmd_sharding_propagation_to_parameters" ||
        name == "allow_spmd_sharding_propagation_to_output" ||
        name == "origin_recovery_table") {
      extras_.config_attributes.emplace_back(
          std::string(name),
          std::string(lexer_.source().substr(value_offset,
                                             lexer_.prev_end() - value_offset)));
    }
  }
  return true;
}

// FileNames / FunctionNames / FileLocations / StackFrames, as XLA prints a
// module's stack frame index before its computations.
bool Parser::ParseStackFrameIndex() {
  xla::StackFrameIndexProto* index = module_.mutable_stack_frame_index();
  lexer_.Advance();  // FileNames
  while (kind() == Tok::kInt) {
    lexer_.Advance();
    if (!ParseString(index->add_file_names())) return false;
  }
  if (!IsIdent("FunctionNames")) return Expect("FunctionNames");
  lexer_.Advance();
  while (kind() == Tok::kInt) {
    lexer_.Advance();
    if (!ParseString(index->add_function_names())) return false;
  }
  if (!IsIdent("FileLocations")) return Expect("FileLocations");
  lexer_.Advance();
  auto sub_attributes =
      [&](std::initializer_list<std::pair<absl::string_view, int32_t*>> fields) {
        if (!Consume(Tok::kLbrace, "\"{\" to start the entry")) return false;
        while (kind() != Tok::kRbrace) {
          EatIf(Tok::kComma);
          if (kind() != Tok::kIdent) return Expect("a field name");
          const absl::string_view f = text();
          const size_t f_offset = offset();
          lexer_.Advance();
          if (!Consume(Tok::kEqual, "\"=\"")) return false;
          int32_t* slot = nullptr;
          for (const auto& [n, p] : fields) {
            if (n == f) slot = p;
          }
          if (slot == nullptr) return Fail(f_offset, "a field of the entry", Quote(f));
          if (!ParseInt32(slot)) return false;
        }
        lexer_.Advance();
        return true;
      };
  while (kind() == Tok::kInt) {
    lexer_.Advance();
    int32_t file = 0, function = 0, line = 0, column = 0, end_line = 0, end_column = 0;
    if (!sub_attributes({{"file_name_id", &file},
                         {"function_name_id", &function},
                         {"line", &line},
                         {"end_line", &end_line},
                         {"column", &column},
                         {"end_column", &end_column}})) {
      return false;
    }
    auto* l = index->add_file_locations();
    l->set_file_name_id(file);
    l->set_function_name_id(function);
    l->set_line(line);
    l->set_end_line(end_line);
    l->set_column(column);
    l->set_end_column(end_column);
  }
  if (!IsIdent("StackFrames")) return Expect("StackFrames");
  lexer_.Advance();
  while (kind() == Tok::kInt) {
    lexer_.Advance();
    int32_t location = 0, parent = 0;
    if (!sub_attributes(
            {{"file_location_id", &location}, {"parent_frame_id", &parent}})) {
      return false;
    }
    auto* f = index->add_stack_frames();
    f->set_file_location_id(location);
    // XLA's printer writes the parent's position + 1 and its parser takes
    // the 1 off again.
    f->set_parent_frame_id(parent - 1);
  }
  return true;
}

// --- Computations --------------------------------------------------------------------

bool Parser::ParseComputation() {
  const size_t begin = offset();
  const bool is_entry = IsIdent("ENTRY");
  if (is_entry) lexer_.Advance();
  const size_t name_offset = offset();
  absl::string_view name;
  if (!ParseName(&name, is_entry ? "the entry computation's name"
                                 : "a computation name or ENTRY")) {
    return false;
  }
  xla::ShapeProto declared;
  size_t declared_offset = 0;
  bool has_declared = false;
  if (kind() == Tok::kLparen) {
    // The program shape: `(p0: f32[2], p1: s32[]) -> f32[2]`, checked
    // against the root.
    lexer_.Advance();
    if (kind() != Tok::kRparen) {
      do {
        absl::string_view param;
        xla::ShapeProto ignored;
        if (!ParseName(&param, "a parameter name") ||
            !Consume(Tok::kColon, "\":\" after the parameter name") ||
            !ParseShape(&ignored)) {
          return false;
        }
      } while (EatIf(Tok::kComma));
    }
    if (!Consume(Tok::kRparen, "\")\" after the parameters") ||
        !Consume(Tok::kArrow, "\"->\" before the result shape")) {
      return false;
    }
    declared_offset = offset();
    if (!ParseShape(&declared)) return false;
    has_declared = true;
  }
  if (auto it = computation_by_name_.find(name); it != computation_by_name_.end()) {
    return Fail(name_offset, "a computation name not used before",
                Quote(name));
  }
  int64_t index = -1;
  if (!ParseInstructionList(name, name_offset, &index)) return false;
  xla::HloComputationProto& c = *done_[static_cast<size_t>(index)];
  if (has_declared) {
    const xla::ShapeProto& root = DoneAt(index, c.root_id()).shape();
    if (!ShapesCompatible(declared, root)) {
      return Fail(declared_offset,
                  absl::StrCat("the result shape of computation ", Quote(name),
                               " to be its root's, ", DescribeShape(root)),
                  DescribeShape(declared));
    }
  }
  while (kind() == Tok::kComma) {
    lexer_.Advance();
    if (!IsIdent("execution_thread")) {
      return Expect("execution_thread, the one attribute of a computation");
    }
    lexer_.Advance();
    std::string thread;
    if (!Consume(Tok::kEqual, "\"=\" after execution_thread") ||
        !ParseString(&thread)) {
      return false;
    }
    c.set_execution_thread(std::move(thread));
  }
  // `} // name` (after the execution thread, if any): XLA's
  // print_name_after_closing_brace, printed again so.
  {
    const absl::string_view after = lexer_.source().substr(lexer_.prev_end());
    if (absl::StartsWith(after, " // ") && absl::StartsWith(after.substr(4), name) &&
        (after.size() == 4 + name.size() || after[4 + name.size()] == '\n' ||
         after[4 + name.size()] == '\r')) {
      extras_.name_after_closing_brace = true;
    }
  }
  if (is_entry) {
    if (entry_ >= 0) {
      return Fail(begin, "one ENTRY computation",
                  absl::StrCat("a second, ", Quote(name)));
    }
    entry_ = index;
    entry_offset_ = begin;
  }
  return true;
}

bool Parser::ParseInstructionList(absl::string_view name, size_t name_offset,
                                  int64_t* index) {
  if (!Enter()) return false;
  if (!Consume(Tok::kLbrace, "\"{\" to start the computation's instructions")) {
    return false;
  }
  ComputationState comp;
  comp.proto->set_name(std::string(name));
  do {
    if (kind() == Tok::kEof) {
      return Expect(absl::StrCat("\"}\" to end computation ", Quote(name)));
    }
    if (!ParseInstruction(comp)) return false;
  } while (kind() != Tok::kRbrace);
  lexer_.Advance();
  *index = FinishComputation(comp);
  computation_by_name_.emplace(name, *index);
  (void)name_offset;
  Leave();
  return true;
}

int64_t Parser::FinishComputation(ComputationState& comp) {
  const int64_t n = Count(comp);
  comp.proto->set_root_id(comp.root >= 0 ? comp.root : n - 1);
  const int64_t index = static_cast<int64_t>(done_.size());
  done_.push_back(std::move(comp.proto));
  stored_.push_back(StoredComputation{std::move(comp.stored),
                                      std::move(comp.name_numbers),
                                      std::move(comp.parameter_positions)});
  return index;
}

xla::HloInstructionProto* Parser::NewInstruction(
    std::unique_ptr<xla::HloInstructionProto>* owner) {
  if (!to_bytes_) {
    *owner = std::make_unique<xla::HloInstructionProto>();
    return owner->get();
  }
  if (open_instructions_++ == 0) arena_->Reset();
  return google::protobuf::Arena::CreateMessage<xla::HloInstructionProto>(arena_.get());
}

bool Parser::AddInstruction(ComputationState& comp,
                            const xla::HloInstructionProto& instr,
                            std::unique_ptr<xla::HloInstructionProto> owner,
                            absl::string_view name) {
  if (instr.opcode() == "parameter") {
    comp.parameter_positions.emplace_back(instr.parameter_number(), Count(comp));
  } else if (instr.opcode() == "fusion") {
    // Also the fusion a sugared fusion-start wraps.
    for (int64_t callee : instr.called_computation_ids()) {
      done_[static_cast<size_t>(callee)]->set_is_fusion_computation(true);
    }
  }
  if (!to_bytes_) {
    comp.proto->mutable_instructions()->AddAllocated(owner.release());
    return true;
  }
  const size_t n = instr.ByteSizeLong();
  if (n > limits::kMaxMessageBytes) {
    status_ = absl::ResourceExhaustedError(absl::StrCat(
        "HLO text to bytes: instruction \"", name, "\" serializes to ", n,
        " bytes, over protobuf's limit of ", limits::kMaxMessageBytes));
    return false;
  }
  StoredRecord where;
  char* p = store_.Append(n, &where);
  google::protobuf::io::ArrayOutputStream array(p, static_cast<int>(n));
  google::protobuf::io::CodedOutputStream out(&array);
  out.SetSerializationDeterministic(true);
  instr.SerializeWithCachedSizes(&out);
  comp.stored.push_back(where);
  comp.name_numbers.push_back(NameNumber(name));
  return true;
}

const xla::HloInstructionProto& Parser::At(const ComputationState& comp,
                                           int64_t position) const {
  if (!to_bytes_) return comp.proto->instructions(static_cast<int>(position));
  const absl::string_view r = store_.View(comp.stored[static_cast<size_t>(position)]);
  if (lookup_record_ != r.data()) {
    ReadBack(r, &lookup_);
    lookup_record_ = r.data();
  }
  return lookup_;
}

const xla::HloInstructionProto& Parser::DoneAt(int64_t computation,
                                               int64_t position) const {
  if (!to_bytes_) {
    return done_[static_cast<size_t>(computation)]->instructions(
        static_cast<int>(position));
  }
  const absl::string_view r = store_.View(
      stored_[static_cast<size_t>(computation)].stored[static_cast<size_t>(position)]);
  if (done_lookup_record_ != r.data()) {
    ReadBack(r, &done_lookup_);
    done_lookup_record_ = r.data();
  }
  return done_lookup_;
}

// What the parser reads of a finished instruction (its name, opcode,
// shape, parameter number, called computations and async thread), from its
// record: not a parse of the whole record, which protobuf may refuse (a
// string that is not UTF-8, nesting past its recursion limit: the text
// may have both).
void Parser::ReadBack(absl::string_view record, xla::HloInstructionProto* out) const {
  out->Clear();
  ForEachField(record, [&](uint32_t number, wire::WireType type, absl::string_view,
                           absl::string_view payload, uint64_t value) {
    switch (number) {
      case 1:
        out->set_name(payload.data(), payload.size());
        break;
      case 2:
        out->set_opcode(payload.data(), payload.size());
        break;
      case 3: {
        google::protobuf::io::CodedInputStream in(
            reinterpret_cast<const uint8_t*>(payload.data()), static_cast<int>(payload.size()));
        in.SetRecursionLimit(static_cast<int>(std::min<int64_t>(
            4 * static_cast<int64_t>(options_.max_depth) + 64,
            std::numeric_limits<int>::max())));
        out->mutable_shape()->MergePartialFromCodedStream(&in);
        break;
      }
      case 9:
        out->set_parameter_number(static_cast<int64_t>(value));
        break;
      case kCalledComputationIdsField:
        if (type == wire::kVarint) {
          out->add_called_computation_ids(static_cast<int64_t>(value));
        } else {
          const char* p = payload.data();
          const char* const end = p + payload.size();
          uint64_t v = 0;
          while (p < end && wire::ReadVarint(&p, end, &v) == wire::VarintResult::kOk) {
            out->add_called_computation_ids(static_cast<int64_t>(v));
          }
        }
        break;
      case 79:
        out->set_async_execution_thread(payload.data(), payload.size());
        break;
      default:
        break;
    }
  });
}

// --- Instructions -------------------------------------------------------------------

bool Parser::ParseInstruction(ComputationState& comp) {
  const size_t begin = offset();
  const bool is_root = IsIdent("ROOT");
  if (is_root) lexer_.Advance();
  const size_t name_offset = offset();
  absl::string_view name;
  if (!ParseName(&name, is_root ? "the root instruction's name"
                                : "an instruction name, ROOT or \"}\"")) {
    return false;
  }
  if (!Consume(Tok::kEqual, "\"=\" after the instruction name")) return false;
  if (!CanBeShape()) return Expect("the instruction's shape");
  const size_t shape_begin = offset();
  std::unique_ptr<xla::HloInstructionProto> owner;
  xla::HloInstructionProto* instr = NewInstruction(&owner);
  if (!ParseShape(instr->mutable_shape())) return false;
  const absl::string_view shape_text =
      lexer_.source().substr(shape_begin, lexer_.prev_end() - shape_begin);
  int64_t position = -1;
  if (!ParseInstructionBody(comp, name, name_offset, instr, std::move(owner),
                            shape_text, /*allow_attributes=*/true, &position)) {
    return false;
  }
  if (is_root) {
    if (comp.root >= 0) {
      return Fail(begin,
                  absl::StrCat("one ROOT in computation ",
                               Quote(comp.proto->name())),
                  absl::StrCat("a second, ", Quote(name)));
    }
    comp.root = position;
    comp.root_offset = begin;
  }
  return true;
}

bool Parser::ParseInstructionBody(ComputationState& comp, absl::string_view name,
                                  size_t name_offset, xla::HloInstructionProto* instr,
                                  std::unique_ptr<xla::HloInstructionProto> owner,
                                  absl::string_view shape_text,
                                  bool allow_attributes, int64_t* position) {
  if (!Enter()) return false;
  const size_t opcode_offset = offset();
  if (kind() != Tok::kIdent) return Expect("an opcode");
  std::optional<HloOpcode> op =
      HloOpcodeFromString(std::string_view(text().data(), text().size()));
  std::optional<HloOpcode> wrapped;
  if (!op.has_value()) {
    // XLA's async syntax sugar: `negate-start(...)` for an async-start of
    // a computation that is one negate.
    const absl::string_view t = text();
    for (const auto& [suffix, async] :
         {std::pair<absl::string_view, HloOpcode>{"-start", HloOpcode::kAsyncStart},
          {"-update", HloOpcode::kAsyncUpdate},
          {"-done", HloOpcode::kAsyncDone}}) {
      if (t.size() > suffix.size() && absl::EndsWith(t, suffix)) {
        const absl::string_view w = t.substr(0, t.size() - suffix.size());
        wrapped = HloOpcodeFromString(std::string_view(w.data(), w.size()));
        if (wrapped.has_value()) {
          op = async;
          break;
        }
      }
    }
    if (!op.has_value()) return Expect("an opcode");
  }
  const std::string_view opcode_name = HloOpcodeString(*op);
  instr->set_opcode(opcode_name.data(), opcode_name.size());
  lexer_.Advance();
  const HloOpcode opcode = *op;
  const size_t operands_offset = offset();
  if (wrapped.has_value()) {
    if (!ParseOperands(comp, instr) ||
        !ParseSugaredAsync(comp, opcode, *wrapped, instr, opcode_offset,
                           allow_attributes)) {
      return false;
    }
  } else if (opcode == HloOpcode::kParameter) {
    int64_t number = 0;
    const size_t number_offset =
        kind() == Tok::kLparen ? lexer_.PeekNext().begin : offset();
    if (!Consume(Tok::kLparen, "\"(\" before the parameter number") ||
        !ParseInt64(&number, "a parameter number") ||
        !Consume(Tok::kRparen, "\")\" after the parameter number")) {
      return false;
    }
    if (number < 0) {
      return Fail(number_offset, "a parameter number >= 0",
                  absl::StrCat(number));
    }
    if (!comp.parameters.emplace(number, number_offset).second) {
      return Fail(number_offset,
                  absl::StrCat("each parameter number once in computation ",
                               Quote(comp.proto->name())),
                  absl::StrCat(number, " again"));
    }
    instr->set_parameter_number(number);
  } else if (opcode == HloOpcode::kConstant) {
    if (!Consume(Tok::kLparen, "\"(\" before the constant's value") ||
        !ParseLiteral(instr->shape(), instr->mutable_literal()) ||
        !Consume(Tok::kRparen, "\")\" after the constant's value")) {
      return false;
    }
  } else {
    if (!ParseOperands(comp, instr)) return false;
    // A sparse dot carries its metadata as more operands.
    const std::optional<int> arity = HloOpcodeArity(opcode);
    if (arity.has_value() && opcode != HloOpcode::kDot &&
        *arity != instr->operand_ids_size()) {
      return Fail(operands_offset,
                  absl::StrCat(*arity, *arity == 1 ? " operand" : " operands",
                               " for ", instr->opcode()),
                  absl::StrCat(instr->operand_ids_size()));
    }
  }
  if (!wrapped.has_value()) {
    AttrSet seen;
    CalledComputations called;
    if (allow_attributes &&
        !ParseAttributes(comp, opcode, instr, &seen, &called)) {
      return false;
    }
    if (!FinishAttributes(opcode, instr, comp, seen, called,
                          opcode_offset)) {
      return false;
    }
  }
  absl::string_view scope_name = name;
  if (name.empty()) {
    made_names_.push_back(absl::StrCat(instr->opcode(), ".anon"));
    scope_name = absl::string_view();
    name = made_names_.back();
  } else if (auto it = comp.scope.find(name); it != comp.scope.end()) {
    size_t line = 0, column = 0;
    lexer_.LineColumn(comp.name_offsets[static_cast<size_t>(it->second)], &line,
                      &column);
    return Fail(name_offset,
                absl::StrCat("an instruction name not used before in "
                             "computation ",
                             Quote(comp.proto->name())),
                absl::StrCat(Quote(name), ", defined at line ", line,
                             ", column ", column));
  }
  const absl::string_view unique = UniqueInstructionName(name);
  instr->set_name(unique.data(), unique.size());
  *position = Count(comp);
  if (!AddInstruction(comp, *instr, std::move(owner), unique)) return false;
  if (to_bytes_) --open_instructions_;
  if (!scope_name.empty()) comp.scope.emplace(scope_name, *position);
  comp.name_offsets.push_back(static_cast<uint32_t>(name_offset));
  comp.shape_text.push_back(
      TextSpan{static_cast<uint32_t>(shape_text.data() - lexer_.source().data()),
               static_cast<uint32_t>(shape_text.size())});
  Leave();
  return true;
}

bool Parser::ParseSugaredAsync(ComputationState& comp, HloOpcode async_opcode,
                               HloOpcode wrapped, xla::HloInstructionProto* instr,
                               size_t opcode_offset, bool allow_attributes) {
  const std::string wrapped_name(HloOpcodeString(wrapped));
  if (async_opcode != HloOpcode::kAsyncStart) {
    // An update or done continues the chain its operand starts; it calls
    // what the start calls.
    if (instr->operand_ids_size() != 1) {
      return Fail(opcode_offset,
                  absl::StrCat("one async operand for ", wrapped_name, "-",
                               async_opcode == HloOpcode::kAsyncDone ? "done"
                                                                     : "update"),
                  absl::StrCat(instr->operand_ids_size(), " operands"));
    }
    const xla::HloInstructionProto& start = At(comp, instr->operand_ids(0));
    const bool is_async = start.opcode() == "async-start" ||
                          start.opcode() == "async-update";
    std::string found = "none";
    if (is_async && start.called_computation_ids_size() == 1) {
      const int64_t c = start.called_computation_ids(0);
      found = DoneAt(c, done_[static_cast<size_t>(c)]->root_id()).opcode();
    }
    if (found != wrapped_name) {
      return Fail(opcode_offset,
                  absl::StrCat("an async operand wrapping ", wrapped_name),
                  is_async ? absl::StrCat("one wrapping ", found)
                           : absl::StrCat(Quote(start.name()), ", a ",
                                          start.opcode()));
    }
    AttrSet seen;
    CalledComputations called;
    if (allow_attributes &&
        !ParseAttributes(comp, async_opcode, instr, &seen, &called)) {
      return false;
    }
    return FinishAttributes(async_opcode, instr, comp, seen, called,
                            opcode_offset);
  }
  // The start's shape: ((operands), result, state...).
  const xla::ShapeProto& shape = instr->shape();
  if (shape.element_type() != xla::TUPLE || shape.tuple_shapes_size() < 2 ||
      shape.tuple_shapes(0).element_type() != xla::TUPLE) {
    return Fail(opcode_offset,
                absl::StrCat("the shape ((operands), result, ...) of ",
                             wrapped_name, "-start"),
                DescribeShape(shape));
  }
  // The wrapped computation, named as XLA's parser names it: parameters
  // async_param, the op async_op, the computation async_wrapped (each made
  // unique).
  ComputationState w;
  std::string name = "async_wrapped";
  for (int64_t k = 1; computation_by_name_.contains(name); ++k) {
    name = absl::StrCat("async_wrapped.", k);
  }
  made_names_.push_back(name);
  const absl::string_view computation_name = made_names_.back();
  w.proto->set_name(name);
  for (int i = 0; i < instr->operand_ids_size(); ++i) {
    auto p = std::make_unique<xla::HloInstructionProto>();
    p->set_opcode("parameter");
    p->set_parameter_number(i);
    *p->mutable_shape() = At(comp, instr->operand_ids(i)).shape();
    const absl::string_view param_name = UniqueInstructionName("async_param");
    p->set_name(param_name.data(), param_name.size());
    const xla::HloInstructionProto& added = *p;
    if (!AddInstruction(w, added, std::move(p), param_name)) return false;
    w.name_offsets.push_back(static_cast<uint32_t>(opcode_offset));
    w.shape_text.emplace_back();
  }
  auto op = std::make_unique<xla::HloInstructionProto>();
  op->set_opcode(wrapped_name);
  *op->mutable_shape() = shape.tuple_shapes(1);
  for (int i = 0; i < instr->operand_ids_size(); ++i) op->add_operand_ids(i);
  AttrSet seen;
  CalledComputations called;
  sugared_start_ = true;
  const bool ok = !allow_attributes ||
                  ParseAttributes(comp, wrapped, op.get(), &seen, &called);
  sugared_start_ = false;
  if (!ok || !FinishAttributes(wrapped, op.get(), w, seen, called, opcode_offset)) {
    return false;
  }
  // The start's own attributes, and those XLA keeps on both.
  instr->set_async_execution_thread(op->async_execution_thread());
  op->clear_async_execution_thread();
  instr->mutable_output_operand_aliasing()->Swap(
      op->mutable_output_operand_aliasing());
  if (op->has_sharding()) instr->mutable_sharding()->Swap(op->mutable_sharding());
  op->clear_sharding();
  instr->mutable_control_predecessor_ids()->Swap(op->mutable_control_predecessor_ids());
  if (op->has_parameter_replication()) {
    instr->mutable_parameter_replication()->Swap(op->mutable_parameter_replication());
    op->clear_parameter_replication();
  }
  // The wrapped op keeps copies of metadata, backend_config and origin,
  // as XLA's parser gives them. Frontend attributes and statistics stay on
  // the start alone: the sugared line prints the wrapped op's beside the
  // start's, so copies would print twice.
  if (op->has_frontend_attributes()) {
    instr->mutable_frontend_attributes()->Swap(op->mutable_frontend_attributes());
    op->clear_frontend_attributes();
  }
  if (op->has_statistics_viz()) {
    instr->mutable_statistics_viz()->Swap(op->mutable_statistics_viz());
    op->clear_statistics_viz();
  }
  if (op->has_metadata()) *instr->mutable_metadata() = op->metadata();
  if (!op->backend_config().empty()) instr->set_backend_config(op->backend_config());
  if (op->has_original_value()) *instr->mutable_original_value() = op->original_value();
  const absl::string_view op_name = UniqueInstructionName("async_op");
  op->set_name(op_name.data(), op_name.size());
  w.root = Count(w);
  const xla::HloInstructionProto& added = *op;
  if (!AddInstruction(w, added, std::move(op), op_name)) return false;
  const int64_t index = FinishComputation(w);
  computation_by_name_.emplace(computation_name, index);
  instr->add_called_computation_ids(index);
  return true;
}

bool Parser::LookUp(const ComputationState& comp, absl::string_view name,
                    size_t name_offset, int64_t* position) {
  auto it = comp.scope.find(name);
  if (it == comp.scope.end()) {
    return Fail(name_offset,
                absl::StrCat("an instruction defined before in computation ",
                             Quote(comp.proto->name())),
                Quote(name));
  }
  *position = it->second;
  return true;
}

bool Parser::ParseOperands(ComputationState& comp,
                           xla::HloInstructionProto* instr) {
  if (!Consume(Tok::kLparen, "\"(\" before the operands")) return false;
  if (EatIf(Tok::kRparen)) return true;
  do {
    const size_t operand_offset = offset();
    if (instr->operand_ids_size() == 5 && kind() == Tok::kIdent && !CanBeShape() &&
        absl::EndsWith(lexer_.source().substr(0, operand_offset), "/*index=5*/")) {
      // `/*index=5*/` before a short-style operand (no `%`, no shape): a
      // dump with XLA's operand index annotations in the short style.
      extras_.operand_index_annotations = true;
    }
    int64_t position = -1;
    xla::ShapeProto* declared = nullptr;
    size_t declared_offset = 0;
    absl::string_view declared_text;
    if (CanBeShape() && SkipKnownOperandShape(comp, &position)) {
      instr->add_operand_ids(position);
      continue;
    }
    if (CanBeShape()) {
      declared_offset = offset();
      declared = &scratch_shape_;
      declared->Clear();
      if (!ParseShape(declared)) return false;
      declared_text = lexer_.source().substr(
          declared_offset, lexer_.prev_end() - declared_offset);
    }
    if (kind() == Tok::kIdent && lexer_.PeekNext().kind == Tok::kLparen) {
      // A nested anonymous instruction: `add(f32[] sqrt(%x), %y)`.
      if (declared == nullptr) {
        return Fail(operand_offset,
                    "a shape before the nested instruction (its shape is not "
                    "inferred)",
                    Found());
      }
      std::unique_ptr<xla::HloInstructionProto> owner;
      xla::HloInstructionProto* nested = NewInstruction(&owner);
      *nested->mutable_shape() = *declared;
      if (!ParseInstructionBody(comp, absl::string_view(), operand_offset,
                                nested, std::move(owner), declared_text,
                                /*allow_attributes=*/false, &position)) {
        return false;
      }
    } else {
      const size_t name_offset = offset();
      absl::string_view name;
      if (!ParseName(&name, "an operand") ||
          !LookUp(comp, name, name_offset, &position)) {
        return false;
      }
      if (declared != nullptr) {
        const xla::ShapeProto& actual = At(comp, position).shape();
        if (declared_text != ShapeText(comp, position) &&
            !ShapesCompatible(*declared, actual)) {
          return Fail(declared_offset,
                      absl::StrCat("the shape of operand ", Quote(name), ", ",
                                   DescribeShape(actual)),
                      DescribeShape(*declared));
        }
      }
    }
    instr->add_operand_ids(position);
  } while (EatIf(Tok::kComma));
  return Consume(Tok::kRparen, "\",\" or \")\" after an operand");
}

// The long style's operand: `f32[2,3]{1,0} %x`. When the shape is written
// as the operand's own definition wrote it, byte for byte, it is that
// shape: the operand is taken without parsing it again. Anything else
// (another spelling, a nested instruction, an unknown name) returns false
// with the lexer where it was, for the full path.
bool Parser::SkipKnownOperandShape(const ComputationState& comp,
                                   int64_t* position) {
  const absl::string_view src = lexer_.source();
  const size_t begin = offset();
  size_t p = begin;
  int depth = 0;
  for (; p < src.size(); ++p) {
    const char c = src[p];
    if (c == '(' || c == '[' || c == '{') {
      ++depth;
    } else if (c == ')' || c == ']' || c == '}') {
      if (--depth < 0) return false;
    } else if (depth == 0 && (IsSpace(static_cast<unsigned char>(c)) || c == ',')) {
      break;
    }
  }
  if (p >= src.size() || src[p] == ',') return false;
  const absl::string_view shape_text = src.substr(begin, p - begin);
  lexer_.Reset(p);
  if (kind() == Tok::kName ||
      (kind() == Tok::kIdent && lexer_.PeekNext().kind != Tok::kLparen)) {
    auto it = comp.scope.find(text());
    if (it != comp.scope.end() &&
        ShapeText(comp, it->second) == shape_text) {
      const Tok next = lexer_.PeekNext().kind;
      if (next == Tok::kComma || next == Tok::kRparen) {
        *position = it->second;
        lexer_.Advance();
        return true;
      }
    }
  }
  lexer_.Reset(begin);
  return false;
}

// XLA's NameUniquer: a name already used in the module gets the first free
// numeric suffix after its root (`x` -> `x.1`, `add.3` -> `add.4`).
absl::string_view Parser::UniqueInstructionName(absl::string_view name) {
  if (instruction_names_.insert(name).second) return name;
  absl::string_view root = name;
  if (const size_t dot = name.rfind('.');
      dot != absl::string_view::npos && dot > 0 && dot + 1 < name.size()) {
    int64_t suffix = 0;
    if (absl::SimpleAtoi(name.substr(dot + 1), &suffix)) root = name.substr(0, dot);
  }
  int64_t& next = next_suffix_[std::string(root)];
  if (next == 0) next = 1;
  while (true) {
    std::string candidate = absl::StrCat(root, ".", next++);
    if (!instruction_names_.contains(candidate)) {
      made_names_.push_back(std::move(candidate));
      instruction_names_.insert(made_names_.back());
      return made_names_.back();
    }
  }
}

// --- The finished module ---------------------------------------------------------------


void Parser::AssignIds(std::vector<std::vector<int64_t>>* instr_id,
                       std::vector<int64_t>* comp_id) {
  // Ids. XLA's parser numbers with one counter over the module, each
  // computation's instructions then the computation, in text order. But a
  // text XLA printed from a module XlaBuilder made (JAX, torch-xla,
  // TensorFlow) names every instruction and computation <name>.<id>, and
  // XLA ordered what it printed by those ids (a loaded module's
  // instructions and computations are sorted by id): when every name in
  // the module ends in such a number, distinct among the instructions and
  // among the computations, the numbers are the ids, so the text prints
  // back as it was.
  const size_t count = done_.size();
  instr_id->assign(count, {});
  comp_id->assign(count, 0);
  bool named_ids = true;
  absl::flat_hash_set<int64_t> comps;
  std::vector<int64_t> all;
  for (size_t c = 0; c < count && named_ids; ++c) {
    const int64_t id = NameNumber(done_[c]->name());
    named_ids = id >= 0 && comps.insert(id).second;
    (*comp_id)[c] = id;
    std::vector<int64_t>& ids = (*instr_id)[c];
    if (to_bytes_) {
      std::deque<int64_t>& numbers = stored_[c].name_numbers;
      ids.assign(numbers.begin(), numbers.end());
      numbers = {};
    } else {
      for (const xla::HloInstructionProto& i : done_[c]->instructions()) {
        ids.push_back(NameNumber(i.name()));
      }
    }
    named_ids = named_ids && absl::c_none_of(ids, [](int64_t i) { return i < 0; });
    all.insert(all.end(), ids.begin(), ids.end());
  }
  if (named_ids) {
    std::sort(all.begin(), all.end());
    named_ids = std::adjacent_find(all.begin(), all.end()) == all.end();
  }
  all = {};
  if (!named_ids) {
    int64_t next = 1;
    for (size_t c = 0; c < count; ++c) {
      const size_t n = to_bytes_ ? stored_[c].stored.size()
                                 : static_cast<size_t>(done_[c]->instructions_size());
      std::vector<int64_t>& ids = (*instr_id)[c];
      ids.resize(n);
      for (int64_t& id : ids) id = next++;
      (*comp_id)[c] = next++;
    }
  }
}

// A computation's id, program shape (parameters by number when they are
// 0..n-1, with their names; the root's shape), root id and schedule, once
// the ids are known.
void Parser::FinishComputationProto(int64_t c, const std::vector<int64_t>& ids,
                                    int64_t id) {
  xla::HloComputationProto& comp = *done_[static_cast<size_t>(c)];
  const std::vector<std::pair<int64_t, int64_t>>& positions =
      stored_[static_cast<size_t>(c)].parameter_positions;
  const int64_t n = static_cast<int64_t>(ids.size());
  std::vector<int64_t> params;  // number -> position
  bool dense = true;
  for (const auto& [number, position] : positions) {
    if (number >= n) {
      dense = false;
      break;
    }
    if (static_cast<int64_t>(params.size()) <= number) {
      params.resize(static_cast<size_t>(number) + 1, -1);
    }
    params[static_cast<size_t>(number)] = position;
  }
  for (int64_t p : params) dense = dense && p >= 0;
  comp.set_id(id);
  const int64_t root = comp.root_id();
  xla::ProgramShapeProto* ps = comp.mutable_program_shape();
  if (dense) {
    for (int64_t p : params) {
      const xla::HloInstructionProto& instr = DoneAt(c, p);
      *ps->add_parameters() = instr.shape();
      ps->add_parameter_names(instr.name());
    }
  }
  *ps->mutable_result() = DoneAt(c, root).shape();
  comp.set_root_id(ids[static_cast<size_t>(root)]);
  if (is_scheduled_ && !comp.is_fusion_computation()) {
    auto& seq = (*module_.mutable_schedule()->mutable_sequences())[id];
    seq.mutable_instruction_ids()->Add(ids.begin(), ids.end());
  }
}

void Parser::FinishModule() {
  const int64_t count = static_cast<int64_t>(done_.size());
  const int64_t entry = entry_ >= 0 ? entry_ : count - 1;
  const xla::HloComputationProto& e = *done_[static_cast<size_t>(entry)];
  if (module_.name().empty()) module_.set_name(absl::StrCat("module_", e.name()));
  module_.set_entry_computation_name(e.name());
  module_.set_entry_computation_id(e.id());
  module_.set_id(e.id());
  if (has_layout_) {
    *module_.mutable_host_program_shape() = std::move(entry_layout_);
  } else {
    xla::ProgramShapeProto host = e.program_shape();
    host.clear_parameter_names();
    *module_.mutable_host_program_shape() = std::move(host);
  }
  extras_.has_entry_computation_layout = has_layout_;
}

bool Parser::Finish(ParsedHloText* out) {
  std::vector<std::vector<int64_t>> instr_id;
  std::vector<int64_t> comp_id;
  AssignIds(&instr_id, &comp_id);
  const size_t count = done_.size();
  for (size_t c = 0; c < count; ++c) {
    xla::HloComputationProto& comp = *done_[c];
    const std::vector<int64_t>& ids = instr_id[c];
    for (int i = 0; i < comp.instructions_size(); ++i) {
      xla::HloInstructionProto& instr = *comp.mutable_instructions(i);
      instr.set_id(ids[static_cast<size_t>(i)]);
      for (int64_t& o : *instr.mutable_operand_ids()) o = ids[static_cast<size_t>(o)];
      for (int64_t& o : *instr.mutable_control_predecessor_ids()) {
        o = ids[static_cast<size_t>(o)];
      }
      for (int64_t& o : *instr.mutable_called_computation_ids()) {
        o = comp_id[static_cast<size_t>(o)];
      }
    }
    FinishComputationProto(static_cast<int64_t>(c), ids, comp_id[c]);
  }
  FinishModule();
  module_.mutable_computations()->Reserve(static_cast<int>(count));
  for (auto& c : done_) module_.mutable_computations()->AddAllocated(c.release());
  out->module = std::move(module_);
  out->extras = std::move(extras_);
  return true;
}

namespace {

// Output through `write` in pieces of about 256 KiB.
class PieceWriter {
 public:
  explicit PieceWriter(absl::FunctionRef<bool(absl::string_view)> write)
      : write_(write) {
    buffer_.reserve(kPieceBytes + 4096);
  }
  std::string* buffer() { return &buffer_; }
  // Writes the buffer once it is a piece; false when write refused.
  bool Maybe() { return buffer_.size() < kPieceBytes || Flush(); }
  bool Flush() {
    const bool ok = buffer_.empty() || write_(buffer_);
    buffer_.clear();
    return ok;
  }

 private:
  static constexpr size_t kPieceBytes = size_t{256} << 10;
  absl::FunctionRef<bool(absl::string_view)> write_;
  std::string buffer_;
};


// `record` (an instruction as the parser stored it: no id, operands and
// control predecessors by position in their computation, called
// computations by index) with its ids, appended to *out in protobuf's
// field order.
bool AppendWithIds(absl::string_view record, int64_t id,
                   const std::vector<int64_t>& ids,
                   const std::vector<int64_t>& comp_ids, std::string* out) {
  bool id_written = false;
  auto write_id = [&] {
    id_written = true;
    if (id != 0) wire::AppendVarintField(out, kIdField, static_cast<uint64_t>(id));
  };
  bool ok = true;
  std::string packed;
  const bool walked = ForEachField(record, [&](uint32_t number, wire::WireType type,
                                               absl::string_view field, absl::string_view,
                                               uint64_t) {
    if (!id_written && number > kIdField) write_id();
    if (number < kOperandIdsField || number > kCalledComputationIdsField) {
      out->append(field.data(), field.size());
      return;
    }
    const std::vector<int64_t>& map =
        number == kCalledComputationIdsField ? comp_ids : ids;
    auto mapped = [&](uint64_t v, uint64_t* m) {
      if (v >= map.size()) return false;
      *m = static_cast<uint64_t>(map[static_cast<size_t>(v)]);
      return true;
    };
    const char* p = field.data();
    const char* const end = p + field.size();
    uint64_t tag = 0, v = 0, m = 0;
    wire::ReadVarint(&p, end, &tag);
    if (type == wire::kVarint) {
      wire::ReadVarint(&p, end, &v);
      if (!mapped(v, &m)) {
        ok = false;
        return;
      }
      wire::AppendVarintField(out, number, m);
      return;
    }
    if (type != wire::kLen) {
      ok = false;
      return;
    }
    wire::ReadVarint(&p, end, &v);  // the payload's size: to the field's end
    packed.clear();
    while (p < end) {
      if (wire::ReadVarint(&p, end, &v) != wire::VarintResult::kOk || !mapped(v, &m)) {
        ok = false;
        return;
      }
      wire::AppendVarint(&packed, m);
    }
    wire::AppendLenField(out, number, packed);
  });
  if (!id_written) write_id();
  return ok && walked;
}


// Appends the fields of `shell` numbered below `field` (before == true)
// or above it.
void AppendFieldsAround(absl::string_view shell, uint32_t field, bool before,
                        std::string* out) {
  ForEachField(shell, [&](uint32_t number, wire::WireType, absl::string_view f,
                          absl::string_view, uint64_t) {
    if (before ? number < field : number > field) out->append(f.data(), f.size());
  });
}

}  // namespace

bool Parser::FinishToBytes(absl::FunctionRef<bool(absl::string_view)> write,
                           HloModuleTextExtras* extras) {
  std::vector<std::vector<int64_t>> instr_id;
  std::vector<int64_t> comp_id;
  AssignIds(&instr_id, &comp_id);
  const size_t count = done_.size();
  for (size_t c = 0; c < count; ++c) {
    FinishComputationProto(static_cast<int64_t>(c), instr_id[c], comp_id[c]);
  }
  FinishModule();
  auto broken = [&] {
    status_ = absl::InternalError(
        "HLO text to bytes: a stored instruction is not the message the "
        "parser serialized");
    return false;
  };
  auto refused = [&] {
    status_ = absl::UnavailableError(
        "HLO text to bytes: the output refused the serialized module");
    return false;
  };
  // The instructions' sizes with their ids, and each computation's, before
  // anything is written: a module protobuf could not read (over its 2 GiB
  // limit) is an error, not a file.
  const std::string module_shell = DeterministicSerialization(module_);
  std::vector<std::string> shells(count);
  std::vector<uint64_t> totals(count);
  std::vector<std::vector<uint32_t>> sizes(count);
  uint64_t module_bytes = module_shell.size();
  std::string scratch;
  for (size_t c = 0; c < count; ++c) {
    const StoredComputation& sc = stored_[c];
    const std::vector<int64_t>& ids = instr_id[c];
    shells[c] = DeterministicSerialization(*done_[c]);
    uint64_t total = shells[c].size();
    sizes[c].reserve(sc.stored.size());
    for (size_t i = 0; i < sc.stored.size(); ++i) {
      scratch.clear();
      if (!AppendWithIds(store_.View(sc.stored[i]), ids[i], ids, comp_id, &scratch)) {
        return broken();
      }
      if (scratch.size() > limits::kMaxMessageBytes) {
        status_ = absl::ResourceExhaustedError(absl::StrCat(
            "HLO text to bytes: an instruction of computation \"", done_[c]->name(),
            "\" serializes to ", scratch.size(), " bytes, over protobuf's limit of ",
            limits::kMaxMessageBytes));
        return false;
      }
      sizes[c].push_back(static_cast<uint32_t>(scratch.size()));
      total += wire::LenFieldSize(2, scratch.size());
    }
    totals[c] = total;
    module_bytes += wire::LenFieldSize(3, total);
  }
  if (module_bytes > limits::kMaxMessageBytes) {
    status_ = absl::ResourceExhaustedError(absl::StrCat(
        "HLO text to bytes: the module serializes to ", module_bytes,
        " bytes, over protobuf's limit of ", limits::kMaxMessageBytes,
        " for a message it can read"));
    return false;
  }
  store_.Seal();
  PieceWriter out(write);
  AppendFieldsAround(module_shell, 3, /*before=*/true, out.buffer());
  for (size_t c = 0; c < count; ++c) {
    const StoredComputation& sc = stored_[c];
    const std::vector<int64_t>& ids = instr_id[c];
    const std::string& shell = shells[c];
    wire::AppendLenHeader(out.buffer(), 3, totals[c]);
    AppendFieldsAround(shell, 2, /*before=*/true, out.buffer());
    for (size_t i = 0; i < sc.stored.size(); ++i) {
      wire::AppendLenHeader(out.buffer(), 2, sizes[c][i]);
      AppendWithIds(store_.View(sc.stored[i]), ids[i], ids, comp_id, out.buffer());
      store_.Release(sc.stored[i]);
      if (!out.Maybe()) return refused();
    }
    AppendFieldsAround(shell, 2, /*before=*/false, out.buffer());
  }
  AppendFieldsAround(module_shell, 3, /*before=*/false, out.buffer());
  if (!out.Flush()) return refused();
  *extras = std::move(extras_);
  return true;
}

}  // namespace internal

namespace {

absl::Status CheckTextSize(std::string_view text, const HloParseOptions& options) {
  const size_t max = std::min(options.max_text_bytes, HloParseOptions::kDefaultMaxTextBytes);
  if (text.size() > max) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "HLO text of ", text.size(), " bytes: expected at most ", max,
        " bytes (HloParseOptions::max_text_bytes)"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ParsedHloText> ParseHloText(std::string_view text,
                                           const HloParseOptions& options) {
  if (absl::Status s = CheckTextSize(text, options); !s.ok()) return s;
  internal::Parser parser(Sv(text), options);
  ParsedHloText out;
  if (absl::Status s = parser.Run(&out); !s.ok()) return s;
  return out;
}

absl::StatusOr<HloModuleTextExtras> ParseHloTextToProto(
    std::string_view text, absl::FunctionRef<bool(std::string_view)> write,
    const HloParseOptions& options) {
  if (absl::Status s = CheckTextSize(text, options); !s.ok()) return s;
  internal::Parser parser(Sv(text), options, /*to_bytes=*/true);
  HloModuleTextExtras extras;
  absl::Status s = parser.RunToBytes(
      [&](absl::string_view piece) { return write(std::string_view(piece.data(), piece.size())); },
      &extras);
  if (!s.ok()) return s;
  return extras;
}

}  // namespace decomposed::hlo
