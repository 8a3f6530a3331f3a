// The HLO text parser's state, shared by src/hlo/parse.cc (module,
// computations, instructions, operands), parse_attributes.cc (attribute
// values) and parse_literal.cc (shapes and literals). Not part of the API:
// ParseHloText (hlo/parse.h) is.
//
// Every Parse* method returns false after recording the first error in
// status_ (`line L, column C: expected X, found Y`); callers return false
// at once, so the first error is the one reported.
#ifndef DECOMPOSED_SRC_HLO_PARSER_H_
#define DECOMPOSED_SRC_HLO_PARSER_H_

#include <bitset>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include "absl/strings/string_view.h"
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "decomposed/hlo/opcode.h"
#include "decomposed/hlo/parse.h"
#include "decomposed/hlo/text.h"
#include "decomposed/proto/hlo.pb.h"
#include "google/protobuf/arena.h"
#include "lexer.h"

namespace decomposed::hlo::internal {

// Every attribute name an instruction may carry (attribute_table in
// parse_attributes.cc spells them).
enum class Attr : uint8_t {
  // Any opcode.
  kSharding, kFrontendAttributes, kStatistics, kParameterReplication,
  kControlPredecessors, kOrigin, kMetadata, kBackendConfig,
  // Opcode-specific.
  kResultAccuracy, kIotaDimension, kK, kLargest, kReplicaGroups, kChannelId,
  kDimensions, kConstrainLayout, kUseGlobalDeviceIds, kToApply, kMode,
  kSourceTargetPairs, kSliceSizes, kCalls, kAsyncExecutionThread,
  kOutputToOperandAliasing, kCrossProgramPrefetchIndex, kIsCrossProgramPrefetch,
  kInferredDimension,
  kIsStable, kCondition, kBody, kIsHostTransfer, kIndex, kIsComposite,
  kWindow, kDimLabels, kFeatureGroupCount, kBatchGroupCount, kConvKind,
  kOperandPrecision, kFftType, kFftLength, kLeftSide, kLower, kUnitDiagonal,
  kTransposeA, kDirection, kType, kSelect, kScatter, kSlice,
  kDynamicSliceSizes, kEpsilon, kFeatureIndex, kPadding, kKind,
  kInfeedConfig, kOutfeedConfig, kOutfeedShape, kDistribution, kDelta,
  kAlgorithm, kExponentBits, kMantissaBits, kTrueComputation,
  kFalseComputation, kBranchComputations, kCustomCallTarget,
  kOperandLayoutConstraints, kCustomCallHasSideEffect, kCalledComputations,
  kPaddingType, kLiteral, kSchedule, kApiVersion, kLhsContractingDims,
  kRhsContractingDims, kLhsBatchDims, kRhsBatchDims, kLhsRaggedDims,
  kRhsGroupDims, kSparsity, kOffsetDims, kCollapsedSliceDims,
  kStartIndexMap, kIndexVectorDim, kIndicesAreSorted,
  kOperandBatchingDims, kStartIndicesBatchingDims, kUpdateWindowDims,
  kInsertedWindowDims, kScatterDimsToOperandDims, kUniqueIndices,
  kInputBatchingDims, kScatterIndicesBatchingDims, kDomain,
  kNumAttrs,
};
using AttrSet = std::bitset<static_cast<size_t>(Attr::kNumAttrs)>;

// Where a serialized instruction is in a RecordStore.
struct StoredRecord {
  uint32_t chunk = 0, offset = 0;
};

// Serialized records, each its size's varint then its bytes, in chunks
// of 1 MiB (a larger record gets a chunk of its own): the parse's output
// grows without a reallocation's copy, a record stays where it was
// written, and once every record of a chunk is released the chunk is
// freed.
class RecordStore {
 public:
  // Room for `n` bytes at the end; *where says where they are.
  char* Append(size_t n, StoredRecord* where);
  absl::string_view View(const StoredRecord& r) const;
  // No record is appended after this; Release frees each chunk whose
  // records have all been released.
  void Seal() { sealed_ = true; }
  void Release(const StoredRecord& r);

 private:
  static constexpr size_t kChunkBytes = size_t{1} << 20;
  std::vector<std::unique_ptr<char[]>> chunks_;
  std::vector<uint32_t> live_;  // per chunk, records not released
  size_t used_ = 0, capacity_ = 0;
  bool sealed_ = false;
};

// A shape as written: its offset and size in the text (which is at most
// 4 GiB, HloParseOptions).
struct TextSpan {
  uint32_t offset = 0, size = 0;
};

// One computation being parsed: its proto (instructions hold, until the
// end, the positions of their operands in this list and of their called
// computations in the finished list) and its name scope. Parsing to bytes
// (ParseHloTextToProto), the proto holds no instructions: each is
// serialized into the parser's RecordStore as it ends (`stored`, with its
// name in `names`).
struct ComputationState {
  std::unique_ptr<xla::HloComputationProto> proto =
      std::make_unique<xla::HloComputationProto>();
  // Per instruction (deques: no reallocation's slack or copy on a
  // computation of a million instructions).
  absl::flat_hash_map<absl::string_view, int64_t> scope;  // name -> position
  std::deque<uint32_t> name_offsets;  // for messages
  std::deque<TextSpan> shape_text;    // as written
  absl::flat_hash_map<int64_t, size_t> parameters;  // number -> offset
  int64_t root = -1;
  size_t root_offset = 0;
  std::deque<StoredRecord> stored;
  // The number a name ends in (`add.12`: 12), or -1: the ids XLA's names
  // give (Parser::AssignIds).
  std::deque<int64_t> name_numbers;
  std::vector<std::pair<int64_t, int64_t>> parameter_positions;  // number, position
};

// A finished computation's parameters, and parsing to bytes its
// instructions.
struct StoredComputation {
  std::deque<StoredRecord> stored;
  std::deque<int64_t> name_numbers;
  std::vector<std::pair<int64_t, int64_t>> parameter_positions;
};

// Called computations by role, put in XLA's order once all attributes are
// read (a while's body before its condition, whatever the text's order).
struct CalledComputations {
  int64_t to_apply = -1, condition = -1, body = -1, select = -1, scatter = -1,
          true_computation = -1, false_computation = -1, calls = -1;
  std::vector<int64_t> branches, called;
};

class Parser {
 public:
  // `to_bytes`: instructions are serialized as they end, for RunToBytes.
  Parser(absl::string_view text, const HloParseOptions& options,
         bool to_bytes = false);

  absl::Status Run(ParsedHloText* out);
  // The module serialized through `write`, field by field in protobuf's
  // order (deterministic: as SerializeToString with deterministic
  // serialization writes the module Run gives).
  absl::Status RunToBytes(absl::FunctionRef<bool(absl::string_view)> write,
                          HloModuleTextExtras* extras);

  // --- Errors ---------------------------------------------------------------
  // Records `line L, column C: expected <expected>, found <found>` at the
  // byte offset (the first error wins) and returns false.
  bool Fail(size_t offset, absl::string_view expected, absl::string_view found);
  // Expected <expected> at the current token, found that token.
  bool Expect(absl::string_view expected);
  std::string Found() const { return DescribeToken(lexer_, lexer_.current()); }

  // --- Tokens ---------------------------------------------------------------
  Tok kind() const { return lexer_.kind(); }
  absl::string_view text() const { return lexer_.text(); }
  size_t offset() const { return lexer_.current().begin; }
  bool IsIdent(absl::string_view s) const {
    return kind() == Tok::kIdent && text() == s;
  }
  // Consumes a token of `k` or fails with "expected <what>".
  bool Consume(Tok k, absl::string_view what);
  bool EatIf(Tok k) {
    if (kind() != k) return false;
    lexer_.Advance();
    return true;
  }
  // Depth guard: false (with an error) past options_.max_depth.
  bool Enter();
  bool ParseLiteralWithShape(xla::LiteralProto* out);
  void Leave() { --depth_; }

  // --- Scalars and lists (parse_attributes.cc) -------------------------------
  bool ParseInt64(int64_t* out, absl::string_view what = "an integer");
  bool ParseInt32(int32_t* out, absl::string_view what = "an integer");
  bool ParseBool(bool* out);
  bool ParseDouble(double* out, absl::string_view what = "a number");
  bool ParseString(std::string* out);
  // `{1,2,3}` (or `[...]` with kLsquare/kRsquare).
  bool ParseInt64List(std::vector<int64_t>* out, Tok open = Tok::kLbrace,
                      Tok close = Tok::kRbrace);
  bool ParseInt64ListList(std::vector<std::vector<int64_t>>* out);
  bool ParseIotaPerm(size_t rank, std::vector<int64_t>* perm);
  template <class Field>
  bool ParseInt64ListInto(Field* field) {
    std::vector<int64_t> v;
    if (!ParseInt64List(&v)) return false;
    field->Reserve(static_cast<int>(v.size()));
    for (int64_t x : v) field->Add(x);
    return true;
  }
  bool ParseShapeIndex(std::vector<int64_t>* out);
  bool ParseName(absl::string_view* out, absl::string_view what);

  // --- Shapes and literals (parse_literal.cc) -------------------------------
  bool CanBeShape() const;
  bool ParseShape(xla::ShapeProto* out);
  bool ParseLayout(xla::ShapeProto* shape);
  bool ParseShapeList(google::protobuf::RepeatedPtrField<xla::ShapeProto>* out);
  // The literal of a constant of `shape` (a `(` has been consumed).
  bool ParseLiteral(const xla::ShapeProto& shape, xla::LiteralProto* out);
  bool ParseArrayLiteral(const xla::ShapeProto& shape, xla::LiteralProto* out);

  // --- Attributes (parse_attributes.cc) -------------------------------------
  // After the operands: `, name=value` pairs into `instr`.
  bool ParseAttributes(ComputationState& comp, HloOpcode opcode,
                       xla::HloInstructionProto* instr, AttrSet* seen,
                       CalledComputations* called);
  bool ParseAttributeValue(ComputationState& comp, HloOpcode opcode, Attr attr,
                           xla::HloInstructionProto* instr,
                           CalledComputations* called);
  // Required attributes present, called computations in XLA's order, and
  // the fields XLA always sets for the opcode.
  bool FinishAttributes(HloOpcode opcode, xla::HloInstructionProto* instr,
                        const ComputationState& comp, const AttrSet& seen,
                        const CalledComputations& called, size_t opcode_offset);
  bool ParseSharding(xla::OpSharding* out);
  bool ParseSingleSharding(xla::OpSharding* out);
  bool ParseMetadata(xla::OpMetadata* out);
  bool ParseMetadataList(google::protobuf::RepeatedPtrField<xla::OpMetadata>* out);
  bool ParseFrontendAttributes(xla::FrontendAttributes* out);
  bool ParseWindow(xla::Window* out);
  bool ParseDimLabels(xla::ConvolutionDimensionNumbers* out);
  bool ParsePaddingConfig(xla::PaddingConfig* out);
  bool ParseReplicaGroups(xla::HloInstructionProto* instr);
  bool ParseOutputOperandAliasing(
      google::protobuf::RepeatedPtrField<xla::OutputOperandAliasing>* out);
  bool ParseStringOrJson(std::string* out);
  bool ParseOriginalValue(xla::OriginalValueProto* out);
  // A called computation: a name defined before, or `{...}` written here.
  bool ParseComputationRef(int64_t* index);
  bool ParseComputationRefList(std::vector<int64_t>* out);
  // The raw text of a header attribute value (module config attributes).
  bool SkipValue();

  // --- Structure (parse.cc) -------------------------------------------------
  bool ParseModule();
  bool ParseHeaderAttributes();
  bool ParseStackFrameIndex();
  bool ParseComputation();
  // `{ instructions }` into a new computation named `name`; on success its
  // position in the finished list.
  bool ParseInstructionList(absl::string_view name, size_t name_offset,
                            int64_t* index);
  bool ParseInstruction(ComputationState& comp);
  // The rest of an instruction after `name =` (and the shape, when
  // `shape_parsed`): its position in comp.
  // `instr` (its shape set) is NewInstruction's.
  bool ParseInstructionBody(ComputationState& comp, absl::string_view name,
                            size_t name_offset, xla::HloInstructionProto* instr,
                            std::unique_ptr<xla::HloInstructionProto> owner,
                            absl::string_view shape_text, bool allow_attributes,
                            int64_t* position);
  // An instruction to fill: on the heap (owned by *owner), or parsing to
  // bytes on the parser's arena, which is reset when no instruction is
  // open (*owner stays null).
  xla::HloInstructionProto* NewInstruction(
      std::unique_ptr<xla::HloInstructionProto>* owner);
  // Appends a finished instruction named `name` (a view that stays valid)
  // to comp: moved into its proto (from `owner`), or serialized (false when
  // it is over protobuf's 2 GiB).
  bool AddInstruction(ComputationState& comp, const xla::HloInstructionProto& instr,
                      std::unique_ptr<xla::HloInstructionProto> owner,
                      absl::string_view name);
  int64_t Count(const ComputationState& comp) const {
    return to_bytes_ ? static_cast<int64_t>(comp.stored.size())
                     : comp.proto->instructions_size();
  }
  // Ends comp: its root, and its place in the finished list (returned).
  int64_t FinishComputation(ComputationState& comp);
  bool ParseOperands(ComputationState& comp, xla::HloInstructionProto* instr);
  bool SkipKnownOperandShape(const ComputationState& comp, int64_t* position);
  // `<op>-start(...)`, `<op>-update(...)`, `<op>-done(...)`: XLA's async
  // syntax sugar. A start gets a computation of one `<op>` made for it.
  bool ParseSugaredAsync(ComputationState& comp, HloOpcode async_opcode,
                         HloOpcode wrapped, xla::HloInstructionProto* instr,
                         size_t opcode_offset, bool allow_attributes);
  // The position of `name` in comp, or fail.
  bool LookUp(const ComputationState& comp, absl::string_view name,
              size_t name_offset, int64_t* position);
  // An instruction of comp, or of a finished computation (by index): the
  // proto's, or parsed back from its record into a lookup object (valid
  // until the next lookup of the same kind).
  const xla::HloInstructionProto& At(const ComputationState& comp,
                                     int64_t position) const;
  const xla::HloInstructionProto& DoneAt(int64_t computation,
                                         int64_t position) const;
  void ReadBack(absl::string_view record, xla::HloInstructionProto* out) const;
  // The name itself, or a new one made unique; stays valid while the
  // parser lives.
  absl::string_view UniqueInstructionName(absl::string_view name);
  bool Finish(ParsedHloText* out);
  // Finish's ids: XLA's, by the rule Finish explains.
  void AssignIds(std::vector<std::vector<int64_t>>* instr_id,
                 std::vector<int64_t>* comp_id);
  absl::string_view ShapeText(const ComputationState& comp, int64_t position) const {
    const TextSpan& t = comp.shape_text[static_cast<size_t>(position)];
    return lexer_.source().substr(t.offset, t.size);
  }
  // The module's own fields once the computations are done (entry, host
  // program shape).
  void FinishComputationProto(int64_t c, const std::vector<int64_t>& ids, int64_t id);
  void FinishModule();
  bool FinishToBytes(absl::FunctionRef<bool(absl::string_view)> write,
                     HloModuleTextExtras* extras);

  Lexer lexer_;
  HloParseOptions options_;
  const bool to_bytes_;
  // Parsing to bytes: instructions are built on arena_ (its first block
  // kept across resets) and serialized into store_.
  std::unique_ptr<char[]> arena_block_;
  std::unique_ptr<google::protobuf::Arena> arena_;
  int open_instructions_ = 0;
  RecordStore store_;
  std::vector<StoredComputation> stored_;  // per finished computation (done_)
  mutable xla::HloInstructionProto lookup_, done_lookup_;
  mutable const char* lookup_record_ = nullptr;
  mutable const char* done_lookup_record_ = nullptr;
  xla::ShapeProto scratch_shape_;  // operand shapes, reused
  // Reading the attributes of a sugared async-start (`negate-start(...)`):
  // the wrapped op's, and the start's own.
  bool sugared_start_ = false;
  absl::Status status_;
  int depth_ = 0;

  xla::HloModuleProto module_;
  HloModuleTextExtras extras_;
  bool is_scheduled_ = false;
  bool has_layout_ = false;
  xla::ProgramShapeProto entry_layout_;
  // Computations in the order they end: their protos move into module_
  // at the end.
  std::vector<std::unique_ptr<xla::HloComputationProto>> done_;
  absl::flat_hash_map<absl::string_view, int64_t> computation_by_name_;
  int64_t entry_ = -1;
  size_t entry_offset_ = 0;
  // Names made up by the parser (anonymous operands, computations written
  // inside attributes, renamed duplicates); stable addresses.
  std::deque<std::string> made_names_;
  absl::flat_hash_set<absl::string_view> instruction_names_;
  absl::flat_hash_map<std::string, int64_t> next_suffix_;
  int64_t inline_computations_ = 0;
};

}  // namespace decomposed::hlo::internal

#endif  // DECOMPOSED_SRC_HLO_PARSER_H_
