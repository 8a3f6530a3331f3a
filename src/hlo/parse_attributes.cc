// Instruction attributes of HLO text (`dimensions={0}`, `window={...}`,
// `sharding={...}`, ...) into their HloInstructionProto fields, as XLA's
// parser and HloInstruction::ToProto put them; scalars and lists shared by
// the rest of the parser.
#include <algorithm>
#include <cmath>
#include <charconv>
#include <cstdlib>
#include <limits>
#include <string>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "decomposed/hlo/module.h"
#include "parser.h"

namespace decomposed::hlo::internal {
namespace {

std::string Quote(absl::string_view s) { return absl::StrCat("\"", s, "\""); }

std::string Brackets(const std::vector<int64_t>& v) {
  return absl::StrCat("[", absl::StrJoin(v, ","), "]");
}

// The product of dimensions that are each at least 1, or -1 when one is
// not or the product overflows int64.
int64_t DeviceCount(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d < 1 || __builtin_mul_overflow(n, d, &n)) return -1;
  }
  return n;
}

// Each of 0..n-1 once.
bool IsPermutation(const std::vector<int64_t>& perm) {
  std::vector<bool> taken(perm.size(), false);
  for (int64_t p : perm) {
    if (p < 0 || p >= static_cast<int64_t>(perm.size()) ||
        taken[static_cast<size_t>(p)]) {
      return false;
    }
    taken[static_cast<size_t>(p)] = true;
  }
  return true;
}

struct AttrName {
  absl::string_view name;
  Attr attr;
};

constexpr AttrName kAttrNames[] = {
    {"sharding", Attr::kSharding},
    {"frontend_attributes", Attr::kFrontendAttributes},
    {"statistics", Attr::kStatistics},
    {"parameter_replication", Attr::kParameterReplication},
    {"control-predecessors", Attr::kControlPredecessors},
    {"origin", Attr::kOrigin},
    {"metadata", Attr::kMetadata},
    {"backend_config", Attr::kBackendConfig},
    {"result_accuracy", Attr::kResultAccuracy},
    {"iota_dimension", Attr::kIotaDimension},
    {"k", Attr::kK},
    {"largest", Attr::kLargest},
    {"replica_groups", Attr::kReplicaGroups},
    {"channel_id", Attr::kChannelId},
    {"dimensions", Attr::kDimensions},
    {"constrain_layout", Attr::kConstrainLayout},
    {"use_global_device_ids", Attr::kUseGlobalDeviceIds},
    {"to_apply", Attr::kToApply},
    {"mode", Attr::kMode},
    {"source_target_pairs", Attr::kSourceTargetPairs},
    {"slice_sizes", Attr::kSliceSizes},
    {"calls", Attr::kCalls},
    {"async_execution_thread", Attr::kAsyncExecutionThread},
    {"output_to_operand_aliasing", Attr::kOutputToOperandAliasing},
    {"cross_program_prefetch_index", Attr::kCrossProgramPrefetchIndex},
    {"is_cross_program_prefetch", Attr::kIsCrossProgramPrefetch},
    {"inferred_dimension", Attr::kInferredDimension},
    {"is_stable", Attr::kIsStable},
    {"condition", Attr::kCondition},
    {"body", Attr::kBody},
    {"is_host_transfer", Attr::kIsHostTransfer},
    {"index", Attr::kIndex},
    {"is_composite", Attr::kIsComposite},
    {"window", Attr::kWindow},
    {"dim_labels", Attr::kDimLabels},
    {"feature_group_count", Attr::kFeatureGroupCount},
    {"batch_group_count", Attr::kBatchGroupCount},
    {"conv_kind", Attr::kConvKind},
    {"operand_precision", Attr::kOperandPrecision},
    {"fft_type", Attr::kFftType},
    {"fft_length", Attr::kFftLength},
    {"left_side", Attr::kLeftSide},
    {"lower", Attr::kLower},
    {"unit_diagonal", Attr::kUnitDiagonal},
    {"transpose_a", Attr::kTransposeA},
    {"direction", Attr::kDirection},
    {"type", Attr::kType},
    {"select", Attr::kSelect},
    {"scatter", Attr::kScatter},
    {"slice", Attr::kSlice},
    {"dynamic_slice_sizes", Attr::kDynamicSliceSizes},
    {"epsilon", Attr::kEpsilon},
    {"feature_index", Attr::kFeatureIndex},
    {"padding", Attr::kPadding},
    {"kind", Attr::kKind},
    {"infeed_config", Attr::kInfeedConfig},
    {"outfeed_config", Attr::kOutfeedConfig},
    {"outfeed_shape", Attr::kOutfeedShape},
    {"distribution", Attr::kDistribution},
    {"delta", Attr::kDelta},
    {"algorithm", Attr::kAlgorithm},
    {"exponent_bits", Attr::kExponentBits},
    {"mantissa_bits", Attr::kMantissaBits},
    {"true_computation", Attr::kTrueComputation},
    {"false_computation", Attr::kFalseComputation},
    {"branch_computations", Attr::kBranchComputations},
    {"custom_call_target", Attr::kCustomCallTarget},
    {"operand_layout_constraints", Attr::kOperandLayoutConstraints},
    {"custom_call_has_side_effect", Attr::kCustomCallHasSideEffect},
    {"called_computations", Attr::kCalledComputations},
    {"padding_type", Attr::kPaddingType},
    {"literal", Attr::kLiteral},
    {"schedule", Attr::kSchedule},
    {"api_version", Attr::kApiVersion},
    {"lhs_contracting_dims", Attr::kLhsContractingDims},
    {"rhs_contracting_dims", Attr::kRhsContractingDims},
    {"lhs_batch_dims", Attr::kLhsBatchDims},
    {"rhs_batch_dims", Attr::kRhsBatchDims},
    {"lhs_ragged_dims", Attr::kLhsRaggedDims},
    {"rhs_group_dims", Attr::kRhsGroupDims},
    {"sparsity", Attr::kSparsity},
    {"offset_dims", Attr::kOffsetDims},
    {"collapsed_slice_dims", Attr::kCollapsedSliceDims},
    {"start_index_map", Attr::kStartIndexMap},
    {"index_vector_dim", Attr::kIndexVectorDim},
    {"indices_are_sorted", Attr::kIndicesAreSorted},
    {"operand_batching_dims", Attr::kOperandBatchingDims},
    {"start_indices_batching_dims", Attr::kStartIndicesBatchingDims},
    {"update_window_dims", Attr::kUpdateWindowDims},
    {"inserted_window_dims", Attr::kInsertedWindowDims},
    {"scatter_dims_to_operand_dims", Attr::kScatterDimsToOperandDims},
    {"unique_indices", Attr::kUniqueIndices},
    {"input_batching_dims", Attr::kInputBatchingDims},
    {"scatter_indices_batching_dims", Attr::kScatterIndicesBatchingDims},
    {"domain", Attr::kDomain},
};
static_assert(std::size(kAttrNames) == static_cast<size_t>(Attr::kNumAttrs));

const absl::flat_hash_map<absl::string_view, Attr>& AttrByName() {
  static const auto* m = [] {
    auto* m = new absl::flat_hash_map<absl::string_view, Attr>();
    for (const AttrName& a : kAttrNames) m->emplace(a.name, a.attr);
    return m;
  }();
  return *m;
}

absl::string_view AttrString(Attr a) {
  return kAttrNames[static_cast<size_t>(a)].name;
}

using O = HloOpcode;

bool In(O op, std::initializer_list<O> ops) {
  return std::find(ops.begin(), ops.end(), op) != ops.end();
}

// XLA's parser: the attributes each opcode takes (CreateInstruction in
// xla/hlo/parser/hlo_parser.cc).
bool Allowed(O op, Attr a) {
  switch (a) {
    case Attr::kSharding: case Attr::kFrontendAttributes:
    case Attr::kStatistics: case Attr::kParameterReplication:
    case Attr::kControlPredecessors: case Attr::kOrigin: case Attr::kMetadata:
    case Attr::kBackendConfig:
      return true;
    case Attr::kResultAccuracy:
      return In(op, {O::kAcos, O::kAcosh, O::kAsin, O::kAsinh, O::kAtanh,
                     O::kExpm1, O::kLog, O::kLog1p, O::kLogistic, O::kSqrt,
                     O::kCbrt, O::kRsqrt, O::kTanh, O::kErf, O::kSin, O::kSinh,
                     O::kCos, O::kCosh, O::kTan, O::kExp});
    case Attr::kIotaDimension: return op == O::kIota;
    case Attr::kK: case Attr::kLargest: return op == O::kTopK;
    case Attr::kReplicaGroups:
      return In(op, {O::kAllGather, O::kAllGatherStart, O::kAllReduce,
                     O::kAllReduceStart, O::kReduceScatter, O::kAllToAll,
                     O::kRaggedAllToAll, O::kCollectiveBroadcast});
    case Attr::kChannelId:
      return In(op, {O::kAllGather, O::kAllGatherStart, O::kAllReduce,
                     O::kAllReduceStart, O::kReduceScatter, O::kAllToAll,
                     O::kRaggedAllToAll, O::kCollectiveBroadcast,
                     O::kCollectivePermute, O::kCollectivePermuteStart,
                     O::kRecv, O::kRecvDone, O::kSend, O::kSendDone});
    case Attr::kDimensions:
      return In(op, {O::kAllGather, O::kAllGatherStart, O::kReduceScatter,
                     O::kAllToAll, O::kRaggedAllToAll, O::kSort, O::kBroadcast,
                     O::kConcatenate, O::kMap, O::kReduce, O::kReverse,
                     O::kTranspose, O::kGetDimensionSize,
                     O::kSetDimensionSize});
    case Attr::kConstrainLayout:
      return In(op, {O::kAllGather, O::kAllGatherStart, O::kAllReduce,
                     O::kAllReduceStart, O::kReduceScatter, O::kAllToAll});
    case Attr::kUseGlobalDeviceIds:
      return In(op, {O::kAllGather, O::kAllGatherStart, O::kAllReduce,
                     O::kAllReduceStart, O::kReduceScatter});
    case Attr::kToApply:
      return In(op, {O::kAllReduce, O::kAllReduceStart, O::kReduceScatter,
                     O::kSort, O::kCall, O::kReduceWindow, O::kMap, O::kReduce,
                     O::kScatter, O::kCustomCall, O::kScan});
    case Attr::kMode:
      return In(op, {O::kAllReduce, O::kAllReduceStart, O::kReduceScatter});
    case Attr::kSourceTargetPairs:
      return In(op, {O::kCollectivePermute, O::kCollectivePermuteStart});
    case Attr::kSliceSizes:
      return In(op, {O::kCollectivePermute, O::kCollectivePermuteStart,
                     O::kGather});
    case Attr::kCalls:
      return In(op, {O::kAsyncStart, O::kAsyncUpdate, O::kAsyncDone,
                     O::kFusion});
    case Attr::kAsyncExecutionThread:
      return In(op, {O::kAsyncStart, O::kAsyncUpdate, O::kAsyncDone});
    case Attr::kOutputToOperandAliasing:
      return In(op, {O::kAsyncStart, O::kFusion, O::kCustomCall});
    case Attr::kCrossProgramPrefetchIndex: case Attr::kIsCrossProgramPrefetch:
      return op == O::kCopyStart;
    case Attr::kInferredDimension: return op == O::kReshape;
    case Attr::kIsStable: return op == O::kSort;
    case Attr::kCondition: case Attr::kBody: return op == O::kWhile;
    case Attr::kIsHostTransfer:
      return In(op, {O::kSend, O::kSendDone, O::kRecv, O::kRecvDone});
    case Attr::kIndex: return op == O::kGetTupleElement;
    case Attr::kIsComposite: return op == O::kCall;
    case Attr::kWindow:
      return In(op, {O::kReduceWindow, O::kConvolution, O::kSelectAndScatter,
                     O::kCustomCall});
    case Attr::kDimLabels: case Attr::kFeatureGroupCount:
    case Attr::kBatchGroupCount:
      return In(op, {O::kConvolution, O::kCustomCall});
    case Attr::kConvKind: return op == O::kConvolution;
    case Attr::kOperandPrecision:
      return In(op, {O::kConvolution, O::kCustomCall, O::kDot, O::kRaggedDot,
                     O::kScaledDot});
    case Attr::kFftType: case Attr::kFftLength: return op == O::kFft;
    case Attr::kLeftSide: case Attr::kUnitDiagonal: case Attr::kTransposeA:
      return op == O::kTriangularSolve;
    case Attr::kLower: return In(op, {O::kTriangularSolve, O::kCholesky});
    case Attr::kDirection: case Attr::kType: return op == O::kCompare;
    case Attr::kSelect: case Attr::kScatter: return op == O::kSelectAndScatter;
    case Attr::kSlice: return op == O::kSlice;
    case Attr::kDynamicSliceSizes: return op == O::kDynamicSlice;
    case Attr::kEpsilon: case Attr::kFeatureIndex:
      return In(op, {O::kBatchNormTraining, O::kBatchNormInference,
                     O::kBatchNormGrad});
    case Attr::kPadding: return op == O::kPad;
    case Attr::kKind: return op == O::kFusion;
    case Attr::kInfeedConfig: return op == O::kInfeed;
    case Attr::kOutfeedConfig: case Attr::kOutfeedShape: return op == O::kOutfeed;
    case Attr::kDistribution: return op == O::kRng;
    case Attr::kDelta: return op == O::kRngGetAndUpdateState;
    case Attr::kAlgorithm:
      return In(op, {O::kRngBitGenerator, O::kDot, O::kScaledDot});
    case Attr::kExponentBits: case Attr::kMantissaBits:
      return op == O::kReducePrecision;
    case Attr::kTrueComputation: case Attr::kFalseComputation:
    case Attr::kBranchComputations:
      return op == O::kConditional;
    case Attr::kCustomCallTarget: case Attr::kOperandLayoutConstraints:
    case Attr::kCustomCallHasSideEffect: case Attr::kCalledComputations:
    case Attr::kPaddingType: case Attr::kLiteral: case Attr::kSchedule:
    case Attr::kApiVersion:
      return op == O::kCustomCall;
    case Attr::kLhsContractingDims: case Attr::kRhsContractingDims:
    case Attr::kLhsBatchDims: case Attr::kRhsBatchDims:
      return In(op, {O::kDot, O::kRaggedDot, O::kScaledDot});
    case Attr::kLhsRaggedDims: case Attr::kRhsGroupDims:
      return op == O::kRaggedDot;
    case Attr::kSparsity: return op == O::kDot;
    case Attr::kOffsetDims: case Attr::kCollapsedSliceDims:
    case Attr::kStartIndexMap: case Attr::kOperandBatchingDims:
    case Attr::kStartIndicesBatchingDims:
      return op == O::kGather;
    case Attr::kIndexVectorDim: case Attr::kIndicesAreSorted:
      return In(op, {O::kGather, O::kScatter});
    case Attr::kUpdateWindowDims: case Attr::kInsertedWindowDims:
    case Attr::kScatterDimsToOperandDims: case Attr::kUniqueIndices:
    case Attr::kInputBatchingDims: case Attr::kScatterIndicesBatchingDims:
      return op == O::kScatter;
    case Attr::kDomain: return op == O::kDomain;
    case Attr::kNumAttrs: return false;
  }
  return false;
}

std::string AllowedList(O op) {
  std::string out;
  for (const AttrName& a : kAttrNames) {
    if (!Allowed(op, a.attr)) continue;
    if (!out.empty()) out.append(", ");
    out.append(a.name.data(), a.name.size());
  }
  return out;
}

// An integer of decimal digits with an optional minus sign, exactly.
bool ParseIntText(absl::string_view s, int64_t* out) {
  if (s.empty()) return false;
  const char* b = s.data();
  const char* e = b + s.size();
  auto r = std::from_chars(b, e, *out);
  return r.ec == std::errc() && r.ptr == e;
}

// Enum values by their text spelling: the proto enum's name with `prefix`,
// upper-cased (`rng_three_fry` -> RNG_THREE_FRY, `dot_bf16_bf16_f32` ->
// ALG_DOT_BF16_BF16_F32).
template <class Enum, class ParseFn>
bool EnumFromText(absl::string_view text, absl::string_view prefix,
                  ParseFn parse, Enum* out) {
  std::string name = absl::StrCat(prefix, absl::AsciiStrToUpper(text));
  return parse(name, out);
}

}  // namespace

// --- Scalars ------------------------------------------------------------------------------

bool Parser::ParseInt64(int64_t* out, absl::string_view what) {
  if (kind() != Tok::kInt) return Expect(what);
  if (!ParseIntText(text(), out)) {
    return Expect(absl::StrCat(what, " in [-2^63, 2^63)"));
  }
  lexer_.Advance();
  return true;
}

bool Parser::ParseInt32(int32_t* out, absl::string_view what) {
  const Token token = lexer_.current();
  int64_t v = 0;
  if (!ParseInt64(&v, what)) return false;
  if (v < std::numeric_limits<int32_t>::min() ||
      v > std::numeric_limits<int32_t>::max()) {
    return Fail(token.begin, absl::StrCat(what, " in [-2^31, 2^31)"),
                DescribeToken(lexer_, token));
  }
  *out = static_cast<int32_t>(v);
  return true;
}

bool Parser::ParseBool(bool* out) {
  if (IsIdent("true")) {
    *out = true;
  } else if (IsIdent("false")) {
    *out = false;
  } else {
    return Expect("true or false");
  }
  lexer_.Advance();
  return true;
}

bool Parser::ParseDouble(double* out, absl::string_view what) {
  if (kind() == Tok::kInt || kind() == Tok::kDecimal) {
    const absl::string_view t = text();
    auto r = std::from_chars(t.data(), t.data() + t.size(), *out);
    if (r.ec == std::errc::result_out_of_range) {
      // Underflow reads as the nearest double; overflow is an error.
      const std::string copy(t);
      *out = std::strtod(copy.c_str(), nullptr);
      if (std::isinf(*out)) {
        return Expect(absl::StrCat(what, " within the range of f64"));
      }
    } else if (r.ec != std::errc() || r.ptr != t.data() + t.size()) {
      return Expect(what);
    }
  } else if (IsIdent("inf")) {
    *out = std::numeric_limits<double>::infinity();
  } else if (IsIdent("-inf")) {
    *out = -std::numeric_limits<double>::infinity();
  } else if (IsIdent("nan")) {
    *out = std::numeric_limits<double>::quiet_NaN();
  } else if (IsIdent("-nan")) {
    *out = -std::numeric_limits<double>::quiet_NaN();
  } else {
    return Expect(what);
  }
  lexer_.Advance();
  return true;
}

bool Parser::ParseString(std::string* out) {
  if (kind() != Tok::kString) return Expect("a quoted string");
  const absl::string_view t = text();
  const absl::string_view body = t.substr(1, t.size() - 2);
  if (body.find('\\') == absl::string_view::npos) {
    out->assign(body.data(), body.size());
  } else {
    std::string error;
    if (!absl::CUnescape(body, out, &error)) {
      return Expect(absl::StrCat("a string with valid escapes (", error, ")"));
    }
  }
  lexer_.Advance();
  return true;
}

bool Parser::ParseInt64List(std::vector<int64_t>* out, Tok open, Tok close) {
  const char* open_s = open == Tok::kLbrace    ? "\"{\""
                       : open == Tok::kLsquare ? "\"[\""
                                               : "\"(\"";
  const char* close_s = close == Tok::kRbrace    ? "\"}\""
                        : close == Tok::kRsquare ? "\"]\""
                                                 : "\")\"";
  if (kind() != open) {
    return Expect(absl::StrCat(open_s, " to start a list of integers"));
  }
  lexer_.Advance();
  if (kind() != close) {
    do {
      int64_t v = 0;
      if (!ParseInt64(&v)) return false;
      out->push_back(v);
    } while (EatIf(Tok::kComma));
  }
  if (kind() != close) {
    return Expect(absl::StrCat("\",\" or ", close_s, " in a list of integers"));
  }
  lexer_.Advance();
  return true;
}

bool Parser::ParseInt64ListList(std::vector<std::vector<int64_t>>* out) {
  if (!Consume(Tok::kLbrace, "\"{\" to start a list of lists")) return false;
  if (kind() != Tok::kRbrace) {
    do {
      out->emplace_back();
      if (!ParseInt64List(&out->back())) return false;
    } while (EatIf(Tok::kComma));
  }
  return Consume(Tok::kRbrace, "\",\" or \"}\" in a list of lists");
}

bool Parser::ParseShapeIndex(std::vector<int64_t>* out) {
  return ParseInt64List(out);
}

// --- Attributes ---------------------------------------------------------------------

bool Parser::ParseAttributes(ComputationState& comp, HloOpcode opcode,
                             xla::HloInstructionProto* instr, AttrSet* seen,
                             CalledComputations* called) {
  while (kind() == Tok::kComma) {
    lexer_.Advance();
    const size_t name_offset = offset();
    if (kind() != Tok::kIdent) return Expect("an attribute name");
    const absl::string_view name = text();
    auto it = AttrByName().find(name);
    const bool start_attr =
        sugared_start_ && it != AttrByName().end() &&
        (it->second == Attr::kAsyncExecutionThread ||
         it->second == Attr::kOutputToOperandAliasing);
    if (it == AttrByName().end() || (!Allowed(opcode, it->second) && !start_attr)) {
      return Fail(name_offset,
                  absl::StrCat("an attribute of ", instr->opcode(), " (",
                               AllowedList(opcode), ")"),
                  absl::StrCat(it == AttrByName().end() ? "unknown attribute "
                                                        : "attribute ",
                               Quote(name)));
    }
    const Attr attr = it == AttrByName().end() ? Attr::kNumAttrs : it->second;
    lexer_.Advance();
    if (kind() != Tok::kEqual) return Expect(absl::StrCat("\"=\" after ", name));
    lexer_.Advance();
    if ((*seen)[static_cast<size_t>(attr)]) {
      return Fail(name_offset, "each attribute once",
                  absl::StrCat(Quote(name), " again"));
    }
    seen->set(static_cast<size_t>(attr));
    if (!ParseAttributeValue(comp, opcode, attr, instr, called)) return false;
  }
  return true;
}

bool Parser::ParseComputationRef(int64_t* index) {
  if (kind() == Tok::kLbrace) {
    // A computation written here; XLA names it "_", made unique.
    std::string name = "_";
    while (computation_by_name_.contains(name)) {
      name = absl::StrCat("_.", ++inline_computations_);
    }
    made_names_.push_back(std::move(name));
    return ParseInstructionList(made_names_.back(), offset(), index);
  }
  const size_t at = offset();
  absl::string_view name;
  if (!ParseName(&name, "a computation name")) return false;
  auto it = computation_by_name_.find(name);
  if (it == computation_by_name_.end()) {
    return Fail(at, "a computation defined before", Quote(name));
  }
  *index = it->second;
  return true;
}

bool Parser::ParseComputationRefList(std::vector<int64_t>* out) {
  if (!Consume(Tok::kLbrace, "\"{\" to start a list of computations")) {
    return false;
  }
  if (kind() != Tok::kRbrace) {
    do {
      int64_t c = -1;
      if (!ParseComputationRef(&c)) return false;
      out->push_back(c);
    } while (EatIf(Tok::kComma));
  }
  return Consume(Tok::kRbrace, "\",\" or \"}\" in a list of computations");
}

bool Parser::ParseStringOrJson(std::string* out) {
  if (kind() == Tok::kString) return ParseString(out);
  if (kind() == Tok::kLbrace) {
    const size_t at = offset();
    absl::string_view json = lexer_.ScanBraces();
    if (json.empty()) return Fail(at, "a \"}\" closing the dictionary", "end of input");
    out->assign(json.data(), json.size());
    return true;
  }
  return Expect("a quoted string or a {...} dictionary");
}

bool Parser::ParseFrontendAttributes(xla::FrontendAttributes* out) {
  if (!Consume(Tok::kLbrace, "\"{\" to start frontend_attributes")) return false;
  if (kind() != Tok::kRbrace) {
    do {
      if (kind() != Tok::kIdent && kind() != Tok::kString) {
        return Expect("a frontend attribute name");
      }
      std::string key;
      if (kind() == Tok::kString) {
        if (!ParseString(&key)) return false;
      } else {
        key = std::string(text());
        lexer_.Advance();
      }
      std::string value;
      if (!Consume(Tok::kEqual, "\"=\" after the frontend attribute name") ||
          !ParseStringOrJson(&value)) {
        return false;
      }
      (*out->mutable_map())[key] = std::move(value);
    } while (EatIf(Tok::kComma));
  }
  return Consume(Tok::kRbrace, "\",\" or \"}\" in frontend_attributes");
}

bool Parser::ParseMetadata(xla::OpMetadata* out) {
  if (!Consume(Tok::kLbrace, "\"{\" to start metadata")) return false;
  absl::flat_hash_set<absl::string_view> seen;
  while (kind() != Tok::kRbrace) {
    EatIf(Tok::kComma);
    if (kind() == Tok::kRbrace) break;
    const size_t at = offset();
    if (kind() != Tok::kIdent) return Expect("a metadata field or \"}\"");
    const absl::string_view f = text();
    lexer_.Advance();
    if (kind() != Tok::kEqual) return Expect(absl::StrCat("\"=\" after ", f));
    lexer_.Advance();
    if (!seen.insert(f).second) {
      return Fail(at, "each metadata field once", absl::StrCat(Quote(f), " again"));
    }
    int32_t n = 0;
    if (f == "op_type") {
      if (!ParseString(out->mutable_op_type())) return false;
    } else if (f == "op_name") {
      if (!ParseString(out->mutable_op_name())) return false;
    } else if (f == "source_file") {
      if (!ParseString(out->mutable_source_file())) return false;
    } else if (f == "deduplicated_name") {
      if (!ParseString(out->mutable_deduplicated_name())) return false;
    } else if (f == "scheduling_name") {
      if (!ParseString(out->mutable_scheduling_name())) return false;
    } else if (f == "source_line") {
      if (!ParseInt32(&n)) return false;
      out->set_source_line(n);
    } else if (f == "source_end_line") {
      if (!ParseInt32(&n)) return false;
      out->set_source_end_line(n);
    } else if (f == "source_column") {
      if (!ParseInt32(&n)) return false;
      out->set_source_column(n);
    } else if (f == "source_end_column") {
      if (!ParseInt32(&n)) return false;
      out->set_source_end_column(n);
    } else if (f == "stack_frame_id") {
      if (!ParseInt32(&n)) return false;
      out->set_stack_frame_id(n);
    } else if (f == "profile_type") {
      const size_t list_at = offset();
      std::vector<int64_t> types;
      if (!ParseInt64List(&types)) return false;
      for (int64_t t : types) {
        if (!xla::ProfileType_IsValid(static_cast<int>(t))) {
          return Fail(list_at, "profile types 0 to 3", absl::StrCat(t));
        }
        out->add_profile_type(static_cast<xla::ProfileType>(t));
      }
    } else {
      return Fail(at,
                  "a metadata field (op_type, op_name, source_file, "
                  "source_line, source_end_line, source_column, "
                  "source_end_column, profile_type, deduplicated_name, "
                  "scheduling_name, stack_frame_id)",
                  Quote(f));
    }
  }
  lexer_.Advance();
  return true;
}

bool Parser::ParseMetadataList(
    google::protobuf::RepeatedPtrField<xla::OpMetadata>* out) {
  if (kind() == Tok::kLbrace && lexer_.PeekNext().kind == Tok::kLbrace) {
    lexer_.Advance();
    if (kind() != Tok::kRbrace) {
      do {
        if (!ParseMetadata(out->Add())) return false;
      } while (EatIf(Tok::kComma));
    }
    return Consume(Tok::kRbrace, "\",\" or \"}\" in the metadata list");
  }
  return ParseMetadata(out->Add());
}

bool Parser::ParseSharding(xla::OpSharding* out) {
  if (!Enter()) return false;
  if (kind() != Tok::kLbrace) return Expect("\"{\" to start a sharding");
  const Token next = lexer_.PeekNext();
  if (next.kind == Tok::kLbrace || next.kind == Tok::kRbrace) {
    // A tuple sharding: `{{replicated}, {maximal device=0}}`.
    lexer_.Advance();
    out->set_type(xla::OpSharding::TUPLE);
    if (kind() != Tok::kRbrace) {
      do {
        if (!ParseSharding(out->add_tuple_shardings())) return false;
      } while (EatIf(Tok::kComma));
    }
    if (!Consume(Tok::kRbrace, "\",\" or \"}\" in a tuple sharding")) return false;
  } else if (!ParseSingleSharding(out)) {
    return false;
  }
  Leave();
  return true;
}

bool Parser::ParseSingleSharding(xla::OpSharding* out) {
  const size_t begin = offset();
  if (!Consume(Tok::kLbrace, "\"{\" to start a sharding")) return false;
  bool replicated = false, maximal = false, manual = false, unknown = false,
       unreduced = false, last_tile_dim_replicate = false;
  std::vector<int64_t> devices, dims, reshape, perm;
  bool iota = false, has_devices = false;
  while (kind() != Tok::kRbrace) {
    if (kind() != Tok::kIdent) return Expect("a sharding attribute or \"}\"");
    const absl::string_view w = text();
    const size_t at = offset();
    lexer_.Advance();
    if (w == "replicated") {
      replicated = true;
    } else if (w == "maximal") {
      maximal = true;
    } else if (w == "manual") {
      manual = true;
    } else if (w == "unknown") {
      unknown = true;
    } else if (w == "unreduced") {
      unreduced = true;
    } else if (w == "last_tile_dim_replicate") {
      last_tile_dim_replicate = true;
    } else if (w == "shard_as" || w == "shard_like") {
      int64_t id = 0;
      if (!ParseInt64(&id, "a shard group id")) return false;
      out->set_is_shard_group(true);
      out->set_shard_group_id(id);
      out->set_shard_group_type(w == "shard_as" ? xla::OpSharding::AS
                                                : xla::OpSharding::LIKE);
    } else if (w == "device") {
      int64_t d = 0;
      if (!Consume(Tok::kEqual, "\"=\" after device") ||
          !ParseInt64(&d, "a device number")) {
        return false;
      }
      devices = {d};
      has_devices = true;
    } else if (w == "devices") {
      if (!Consume(Tok::kEqual, "\"=\" after devices") ||
          !ParseInt64List(&dims, Tok::kLsquare, Tok::kRsquare)) {
        return false;
      }
      has_devices = true;
      const int64_t count = DeviceCount(dims);
      if (count < 0) {
        return Fail(at, "tile dimensions of at least 1 whose product fits "
                        "in 64 bits",
                    Brackets(dims));
      }
      if (EatIf(Tok::kLeq)) {
        iota = true;
        const size_t reshape_at = offset();
        if (!ParseInt64List(&reshape, Tok::kLsquare, Tok::kRsquare)) return false;
        if (DeviceCount(reshape) != count) {
          return Fail(reshape_at,
                      absl::StrCat("iota dimensions of ", count,
                                   " devices, as many as ", Brackets(dims)),
                      Brackets(reshape));
        }
        if (!ParseIotaPerm(reshape.size(), &perm)) return false;
      } else {
        const size_t list_at = offset();
        do {
          int64_t d = 0;
          if (!ParseInt64(&d, "a device number")) return false;
          devices.push_back(d);
        } while (EatIf(Tok::kComma));
        if (static_cast<int64_t>(devices.size()) != count) {
          return Fail(list_at,
                      absl::StrCat(count, " devices, as many as ", Brackets(dims)),
                      absl::StrCat(devices.size()));
        }
      }
    } else if (w == "metadata") {
      if (!Consume(Tok::kEqual, "\"=\" after metadata") ||
          !ParseMetadataList(out->mutable_metadata())) {
        return false;
      }
    } else if (w == "last_tile_dims") {
      if (!Consume(Tok::kEqual, "\"=\" after last_tile_dims") ||
          !Consume(Tok::kLbrace, "\"{\" to start last_tile_dims")) {
        return false;
      }
      if (kind() != Tok::kRbrace) {
        do {
          xla::OpSharding::Type t = xla::OpSharding::REPLICATED;
          if (IsIdent("replicated")) {
            t = xla::OpSharding::REPLICATED;
          } else if (IsIdent("manual")) {
            t = xla::OpSharding::MANUAL;
          } else if (IsIdent("maximal")) {
            t = xla::OpSharding::MAXIMAL;
          } else if (IsIdent("unreduced")) {
            t = xla::OpSharding::UNREDUCED;
          } else {
            return Expect("replicated, manual, maximal or unreduced");
          }
          lexer_.Advance();
          out->add_last_tile_dims(t);
        } while (EatIf(Tok::kComma));
      }
      if (!Consume(Tok::kRbrace, "\",\" or \"}\" in last_tile_dims")) return false;
    } else if (w == "mesh" || w == "maximal_mesh") {
      return Fail(at, "a sharding in HloSharding's form (named shardings "
                      "over meshes have no field in this library's schema)",
                  Quote(w));
    } else {
      return Fail(at,
                  "a sharding attribute (replicated, maximal, manual, unknown, "
                  "unreduced, device=, devices=, last_tile_dim_replicate, "
                  "last_tile_dims=, shard_as, shard_like, metadata=)",
                  Quote(w));
    }
  }
  lexer_.Advance();
  const int special = replicated + maximal + manual + unknown + unreduced;
  if (special > 1) {
    return Fail(begin, "one of replicated, maximal, manual, unknown, unreduced",
                "several");
  }
  if (replicated || manual || unknown || unreduced) {
    if (has_devices) {
      return Fail(begin, "no devices in a replicated, manual, unknown or "
                         "unreduced sharding",
                  "devices");
    }
    out->set_type(replicated ? xla::OpSharding::REPLICATED
                  : manual   ? xla::OpSharding::MANUAL
                  : unknown  ? xla::OpSharding::UNKNOWN
                             : xla::OpSharding::UNREDUCED);
    return true;
  }
  if (maximal) {
    if (devices.size() != 1) {
      return Fail(begin, "one device in a maximal sharding",
                  absl::StrCat(devices.size()));
    }
    // As current XLA's HloSharding::ToProto: the device, no dimensions.
    out->set_type(xla::OpSharding::MAXIMAL);
    out->add_tile_assignment_devices(devices[0]);
    return true;
  }
  if (dims.empty()) {
    return Fail(begin, "a tiled sharding's devices=[...]", "none");
  }
  out->set_type(xla::OpSharding::OTHER);
  out->mutable_tile_assignment_dimensions()->Add(dims.begin(), dims.end());
  if (iota) {
    out->mutable_iota_reshape_dims()->Add(reshape.begin(), reshape.end());
    for (int64_t p : perm) out->add_iota_transpose_perm(static_cast<int32_t>(p));
  } else {
    out->mutable_tile_assignment_devices()->Add(devices.begin(), devices.end());
  }
  if (last_tile_dim_replicate) out->set_replicate_on_last_tile_dim(true);
  return true;
}

// The iota form's optional `T(perm)`: a permutation of the reshape
// dimensions; the identity when left out.
bool Parser::ParseIotaPerm(size_t rank, std::vector<int64_t>* perm) {
  perm->clear();
  if (!IsIdent("T")) {
    for (size_t i = 0; i < rank; ++i) perm->push_back(static_cast<int64_t>(i));
    return true;
  }
  lexer_.Advance();
  const size_t at = offset();
  if (!ParseInt64List(perm, Tok::kLparen, Tok::kRparen)) return false;
  if (perm->size() != rank || !IsPermutation(*perm)) {
    return Fail(at,
                absl::StrCat("T(...) ordering the ", rank,
                             " iota dimensions, each once"),
                absl::StrCat("(", absl::StrJoin(*perm, ","), ")"));
  }
  return true;
}

bool Parser::ParseReplicaGroups(xla::HloInstructionProto* instr) {
  if (kind() == Tok::kLbrace) {
    std::vector<std::vector<int64_t>> groups;
    if (!ParseInt64ListList(&groups)) return false;
    for (const auto& g : groups) {
      instr->add_replica_groups()->mutable_replica_ids()->Add(g.begin(), g.end());
    }
    return true;
  }
  // The iota form: [groups,size]<=[reshape]T(perm).
  const size_t at = offset();
  std::vector<int64_t> dims, reshape, perm;
  if (kind() != Tok::kLsquare) {
    return Expect("{...} or [groups,size]<=[...] replica groups");
  }
  if (!ParseInt64List(&dims, Tok::kLsquare, Tok::kRsquare)) return false;
  if (dims.size() != 2) {
    return Fail(at, "[groups,size] before <= in iota replica groups",
                absl::StrCat(dims.size(), " dimensions"));
  }
  const int64_t count = DeviceCount(dims);
  if (count < 0) {
    return Fail(at, "[groups,size] of at least 1 whose product fits in 64 bits",
                Brackets(dims));
  }
  if (!Consume(Tok::kLeq, "\"<=\" in iota replica groups")) return false;
  const size_t reshape_at = offset();
  if (!ParseInt64List(&reshape, Tok::kLsquare, Tok::kRsquare)) return false;
  if (DeviceCount(reshape) != count) {
    return Fail(reshape_at,
                absl::StrCat("iota dimensions of ", count, " devices, as many as ",
                             Brackets(dims)),
                Brackets(reshape));
  }
  if (!ParseIotaPerm(reshape.size(), &perm)) return false;
  auto* iota = instr->mutable_collective_device_list()
                   ->mutable_iota_replica_group_list();
  iota->set_num_replica_groups(dims[0]);
  iota->set_num_devices_per_group(dims[1]);
  iota->mutable_iota_reshape_dims()->Add(reshape.begin(), reshape.end());
  for (int64_t p : perm) iota->add_iota_transpose_perm(static_cast<int32_t>(p));
  return true;
}

// `{size=3x3 stride=2x2 pad=1_1x1_1 lhs_dilate=1x1 rhs_dilate=1x1
// rhs_reversal=0x1}`; strides and dilations default to 1.
bool Parser::ParseWindow(xla::Window* out) {
  const size_t begin = offset();
  if (!Consume(Tok::kLbrace, "\"{\" to start a window")) return false;
  std::vector<int64_t> size, stride, lhs, rhs, reversal;
  std::vector<std::pair<int64_t, int64_t>> pad;
  absl::flat_hash_set<absl::string_view> seen;
  while (kind() != Tok::kRbrace) {
    const size_t at = offset();
    if (kind() != Tok::kIdent) return Expect("a window field or \"}\"");
    const absl::string_view f = text();
    lexer_.Advance();
    if (kind() != Tok::kEqual) return Expect(absl::StrCat("\"=\" after ", f));
    lexer_.Advance();
    if (!seen.insert(f).second) {
      return Fail(at, "each window field once", absl::StrCat(Quote(f), " again"));
    }
    const size_t value_at = offset();
    const bool is_pad = f == "pad";
    const absl::string_view run = lexer_.ScanRaw(
        [is_pad](unsigned char c, absl::string_view) {
          return IsDigit(c) || c == 'x' || (is_pad && (c == '_' || c == '-'));
        });
    std::vector<int64_t>* dst = f == "size"         ? &size
                                : f == "stride"     ? &stride
                                : f == "lhs_dilate" ? &lhs
                                : f == "rhs_dilate" ? &rhs
                                : f == "rhs_reversal" ? &reversal
                                                      : nullptr;
    if (dst == nullptr && !is_pad) {
      return Fail(at,
                  "a window field (size, stride, pad, lhs_dilate, rhs_dilate, "
                  "rhs_reversal)",
                  Quote(f));
    }
    for (absl::string_view part : absl::StrSplit(run, 'x')) {
      if (is_pad) {
        std::vector<absl::string_view> lh = absl::StrSplit(part, '_');
        int64_t lo = 0, hi = 0;
        if (lh.size() != 2 || !ParseIntText(lh[0], &lo) ||
            !ParseIntText(lh[1], &hi)) {
          return Fail(value_at, "pad=low_high per dimension, joined by x",
                      Quote(run));
        }
        pad.emplace_back(lo, hi);
      } else {
        int64_t v = 0;
        if (!ParseIntText(part, &v)) {
          return Fail(value_at,
                      absl::StrCat(f, "=N per dimension, joined by x"),
                      Quote(run.empty() ? Found() : std::string(run)));
        }
        dst->push_back(v);
      }
    }
  }
  lexer_.Advance();
  const size_t n = size.size();
  auto check = [&](absl::string_view f, size_t got) {
    if (got == 0 || got == n) return true;
    return Fail(begin, absl::StrCat(f, " of ", n, " dimensions, as size="),
                absl::StrCat(got));
  };
  if (!check("stride", stride.size()) || !check("pad", pad.size()) ||
      !check("lhs_dilate", lhs.size()) || !check("rhs_dilate", rhs.size()) ||
      !check("rhs_reversal", reversal.size())) {
    return false;
  }
  for (size_t i = 0; i < n; ++i) {
    xla::WindowDimension* d = out->add_dimensions();
    d->set_size(size[i]);
    d->set_stride(stride.empty() ? 1 : stride[i]);
    if (!pad.empty()) {
      d->set_padding_low(pad[i].first);
      d->set_padding_high(pad[i].second);
    }
    d->set_base_dilation(lhs.empty() ? 1 : lhs[i]);
    d->set_window_dilation(rhs.empty() ? 1 : rhs[i]);
    d->set_window_reversal(!reversal.empty() && reversal[i] == 1);
  }
  return true;
}

// `b01f_01io->b01f`: each label's position is the dimension; `?` skips one.
bool Parser::ParseDimLabels(xla::ConvolutionDimensionNumbers* out) {
  const size_t at = offset();
  const absl::string_view run = lexer_.ScanRaw(
      [](unsigned char c, absl::string_view so_far) {
        if (c == '>') return !so_far.empty() && so_far.back() == '-';
        return IsDigit(c) || (c >= 'a' && c <= 'z') || c == '?' || c == '_' ||
               c == '-';
      });
  auto bad = [&](absl::string_view why) {
    return Fail(at, absl::StrCat("dim_labels like b01f_01io->b01f (", why, ")"),
                run.empty() ? Found() : Quote(run));
  };
  const size_t us = run.find('_');
  const size_t arrow = run.find("->");
  if (us == absl::string_view::npos || arrow == absl::string_view::npos ||
      arrow < us) {
    return bad("input_kernel->output");
  }
  const absl::string_view lhs = run.substr(0, us);
  const absl::string_view rhs = run.substr(us + 1, arrow - us - 1);
  const absl::string_view res = run.substr(arrow + 2);
  auto side = [&](absl::string_view labels, char a, char b, int64_t* da,
                  int64_t* db,
                  google::protobuf::RepeatedField<int64_t>* spatial) -> bool {
    int64_t count = 0;
    std::string seen;
    for (char c : labels) {
      if (c == '?') continue;
      if (seen.find(c) != std::string::npos) return bad("a label used twice");
      seen.push_back(c);
      if (c != a && c != b) ++count;
    }
    spatial->Resize(static_cast<int>(count), -1);
    bool has_a = false, has_b = false;
    for (size_t i = 0; i < labels.size(); ++i) {
      const char c = labels[i];
      if (c == '?') continue;
      if (c == a) {
        *da = static_cast<int64_t>(i);
        has_a = true;
      } else if (c == b) {
        *db = static_cast<int64_t>(i);
        has_b = true;
      } else if (c >= '0' && c - '0' < count) {
        spatial->Set(c - '0', static_cast<int64_t>(i));
      } else {
        return bad(absl::StrCat("unexpected label '", std::string(1, c), "'"));
      }
    }
    if (!has_a || !has_b) {
      return bad(absl::StrCat("each side needs ", std::string(1, a), " and ",
                              std::string(1, b)));
    }
    return true;
  };
  int64_t ib = 0, if_ = 0, ki = 0, ko = 0, ob = 0, of = 0;
  if (!side(lhs, 'b', 'f', &ib, &if_, out->mutable_input_spatial_dimensions()) ||
      !side(rhs, 'i', 'o', &ki, &ko, out->mutable_kernel_spatial_dimensions()) ||
      !side(res, 'b', 'f', &ob, &of, out->mutable_output_spatial_dimensions())) {
    return false;
  }
  if (out->input_spatial_dimensions_size() !=
          out->kernel_spatial_dimensions_size() ||
      out->input_spatial_dimensions_size() !=
          out->output_spatial_dimensions_size()) {
    return bad("the same number of spatial dimensions on each side");
  }
  out->set_input_batch_dimension(ib);
  out->set_input_feature_dimension(if_);
  out->set_kernel_input_feature_dimension(ki);
  out->set_kernel_output_feature_dimension(ko);
  out->set_output_batch_dimension(ob);
  out->set_output_feature_dimension(of);
  return true;
}

// `0_0x1_1_0`: low_high or low_high_interior per dimension, joined by x.
bool Parser::ParsePaddingConfig(xla::PaddingConfig* out) {
  const size_t at = offset();
  const absl::string_view run = lexer_.ScanRaw([](unsigned char c, absl::string_view) {
    return IsDigit(c) || c == 'x' || c == '_' || c == '-';
  });
  if (run.empty()) return Fail(at, "padding like 0_0x1_1_0", Found());
  for (absl::string_view part : absl::StrSplit(run, 'x')) {
    std::vector<absl::string_view> v = absl::StrSplit(part, '_');
    int64_t lo = 0, hi = 0, interior = 0;
    if ((v.size() != 2 && v.size() != 3) || !ParseIntText(v[0], &lo) ||
        !ParseIntText(v[1], &hi) ||
        (v.size() == 3 && !ParseIntText(v[2], &interior))) {
      return Fail(at, "padding low_high or low_high_interior per dimension",
                  Quote(run));
    }
    auto* d = out->add_dimensions();
    d->set_edge_padding_low(lo);
    d->set_edge_padding_high(hi);
    d->set_interior_padding(interior);
  }
  return true;
}

bool Parser::ParseOutputOperandAliasing(
    google::protobuf::RepeatedPtrField<xla::OutputOperandAliasing>* out) {
  if (!Consume(Tok::kLbrace, "\"{\" to start output_to_operand_aliasing")) {
    return false;
  }
  while (kind() != Tok::kRbrace) {
    std::vector<int64_t> out_index, operand_index;
    int64_t operand = 0;
    if (!ParseShapeIndex(&out_index) ||
        !Consume(Tok::kColon, "\":\" after the output shape index") ||
        !Consume(Tok::kLparen, "\"(\" before the operand") ||
        !ParseInt64(&operand, "an operand number") ||
        !Consume(Tok::kComma, "\",\" after the operand number") ||
        !ParseShapeIndex(&operand_index) ||
        !Consume(Tok::kRparen, "\")\" after the operand shape index")) {
      return false;
    }
    auto* a = out->Add();
    a->mutable_output_shape_index()->Add(out_index.begin(), out_index.end());
    a->set_operand_index(operand);
    a->mutable_operand_shape_index()->Add(operand_index.begin(),
                                          operand_index.end());
    if (!EatIf(Tok::kComma)) break;
  }
  return Consume(Tok::kRbrace, "\",\" or \"}\" in output_to_operand_aliasing");
}

// `{({"a" {1}}, {"b"})}` or `{[synthetic_call]}`.
bool Parser::ParseOriginalValue(xla::OriginalValueProto* out) {
  if (!Consume(Tok::kLbrace, "\"{\" to start origin")) return false;
  if (EatIf(Tok::kLsquare)) {
    if (!IsIdent("synthetic_call")) return Expect("synthetic_call");
    lexer_.Advance();
    if (!Consume(Tok::kRsquare, "\"]\" after synthetic_call") ||
        !Consume(Tok::kRbrace, "\"}\" to end origin")) {
      return false;
    }
    out->set_is_synthetic_call(true);
    return true;
  }
  std::vector<int64_t> index;
  while (kind() != Tok::kRbrace) {
    switch (kind()) {
      case Tok::kLparen:
        if (static_cast<int>(index.size()) >= options_.max_depth) return Enter();
        index.push_back(0);
        lexer_.Advance();
        break;
      case Tok::kRparen:
        if (index.empty()) return Expect("\"}\" to end origin");
        index.pop_back();
        lexer_.Advance();
        break;
      case Tok::kComma:
        if (index.empty()) return Expect("\"(\" before \",\" in origin");
        ++index.back();
        lexer_.Advance();
        break;
      case Tok::kLbrace: {
        lexer_.Advance();
        if (kind() == Tok::kString) {
          auto* e = out->add_elements();
          e->mutable_shape_index()->Add(index.begin(), index.end());
          if (!ParseString(e->mutable_original_array()->mutable_instruction_name())) {
            return false;
          }
          if (kind() == Tok::kLbrace) {
            std::vector<int64_t> si;
            if (!ParseShapeIndex(&si)) return false;
            e->mutable_original_array()->mutable_shape_index()->Add(si.begin(),
                                                                    si.end());
          }
        }
        if (!Consume(Tok::kRbrace, "\"}\" to end an original array")) return false;
        break;
      }
      default:
        return Expect("an original array {\"name\" {index}}, \"(\", \")\" or \",\"");
    }
  }
  lexer_.Advance();
  return true;
}

bool Parser::ParseAttributeValue(ComputationState& comp, HloOpcode opcode,
                                 Attr attr, xla::HloInstructionProto* instr,
                                 CalledComputations* called) {
  const size_t at = offset();
  auto enum_value = [&](auto parse, absl::string_view prefix, auto* out,
                        absl::string_view what) {
    if (kind() != Tok::kIdent) return Expect(what);
    if (!EnumFromText(text(), prefix, parse, out)) return Expect(what);
    lexer_.Advance();
    return true;
  };
  int64_t v = 0;
  int32_t v32 = 0;
  bool b = false;
  switch (attr) {
    case Attr::kSharding:
      return ParseSharding(instr->mutable_sharding());
    case Attr::kFrontendAttributes:
      return ParseFrontendAttributes(instr->mutable_frontend_attributes());
    case Attr::kStatistics: {
      xla::StatisticsViz* s = instr->mutable_statistics_viz();
      if (!Consume(Tok::kLbrace, "\"{\" to start statistics")) return false;
      if (kind() != Tok::kRbrace) {
        if (kind() != Tok::kIdent) return Expect("visualizing_index=");
        lexer_.Advance();
        if (!Consume(Tok::kEqual, "\"=\" after visualizing_index") ||
            !ParseInt64(&v)) {
          return false;
        }
        s->set_stat_index_to_visualize(v);
        while (EatIf(Tok::kComma)) {
          if (kind() != Tok::kIdent) return Expect("a statistic's name");
          xla::Statistic* st = s->add_statistics();
          st->set_stat_name(std::string(text()));
          lexer_.Advance();
          double d = 0;
          if (!Consume(Tok::kEqual, "\"=\" after the statistic's name") ||
              !ParseDouble(&d)) {
            return false;
          }
          st->set_stat_val(d);
        }
      }
      return Consume(Tok::kRbrace, "\",\" or \"}\" in statistics");
    }
    case Attr::kParameterReplication: {
      auto* r = instr->mutable_parameter_replication();
      if (!Consume(Tok::kLbrace, "\"{\" to start parameter_replication")) return false;
      if (kind() != Tok::kRbrace) {
        do {
          if (!ParseBool(&b)) return false;
          r->add_replicated_at_leaf_buffers(b);
        } while (EatIf(Tok::kComma));
      }
      return Consume(Tok::kRbrace, "\",\" or \"}\" in parameter_replication");
    }
    case Attr::kControlPredecessors: {
      if (!Consume(Tok::kLbrace, "\"{\" to start control-predecessors")) return false;
      if (kind() != Tok::kRbrace) {
        do {
          const size_t name_at = offset();
          absl::string_view name;
          int64_t pos = -1;
          if (!ParseName(&name, "an instruction name") ||
              !LookUp(comp, name, name_at, &pos)) {
            return false;
          }
          instr->add_control_predecessor_ids(pos);
        } while (EatIf(Tok::kComma));
      }
      return Consume(Tok::kRbrace, "\",\" or \"}\" in control-predecessors");
    }
    case Attr::kOrigin:
      return ParseOriginalValue(instr->mutable_original_value());
    case Attr::kMetadata:
      return ParseMetadata(instr->mutable_metadata());
    case Attr::kBackendConfig:
      return ParseStringOrJson(instr->mutable_backend_config());
    case Attr::kResultAccuracy: {
      xla::ResultAccuracy* r = instr->mutable_result_accuracy();
      if (!Consume(Tok::kLbrace, "\"{\" to start result_accuracy")) return false;
      if (IsIdent("mode")) {
        lexer_.Advance();
        xla::ResultAccuracy::Mode m = xla::ResultAccuracy::DEFAULT;
        if (!Consume(Tok::kEqual, "\"=\" after mode") ||
            !enum_value(&xla::ResultAccuracy::Mode_Parse, "", &m,
                        "a result accuracy mode (default, highest)")) {
          return false;
        }
        r->set_mode(m);
      } else if (IsIdent("tolerance")) {
        lexer_.Advance();
        xla::ResultAccuracy::Tolerance* t = r->mutable_tolerance();
        if (!Consume(Tok::kEqual, "\"=\" after tolerance") ||
            !Consume(Tok::kLbrace, "\"{\" to start tolerance")) {
          return false;
        }
        if (kind() != Tok::kRbrace) {
          do {
            const absl::string_view f = text();
            if (f != "atol" && f != "rtol" && f != "ulps") {
              return Expect("atol, rtol or ulps");
            }
            lexer_.Advance();
            double d = 0;
            if (!Consume(Tok::kEqual, "\"=\"") || !ParseDouble(&d)) return false;
            if (f == "atol") t->set_atol(d);
            if (f == "rtol") t->set_rtol(d);
            if (f == "ulps") t->set_ulps(static_cast<int64_t>(d));
          } while (EatIf(Tok::kComma));
        }
        if (!Consume(Tok::kRbrace, "\",\" or \"}\" in tolerance")) return false;
      } else {
        return Expect("mode= or tolerance=");
      }
      return Consume(Tok::kRbrace, "\"}\" to end result_accuracy");
    }
    case Attr::kIotaDimension:
      if (!ParseInt64(&v)) return false;
      instr->add_dimensions(v);
      return true;
    case Attr::kK:
      if (!ParseInt64(&v)) return false;
      instr->set_k(v);
      return true;
    case Attr::kLargest:
      if (!ParseBool(&b)) return false;
      instr->set_largest(b);
      return true;
    case Attr::kReplicaGroups:
      return ParseReplicaGroups(instr);
    case Attr::kChannelId:
      if (!ParseInt64(&v)) return false;
      instr->set_channel_id(v);
      return true;
    case Attr::kDimensions:
      return ParseInt64ListInto(instr->mutable_dimensions());
    case Attr::kConstrainLayout:
      if (!ParseBool(&b)) return false;
      instr->set_constrain_layout(b);
      return true;
    case Attr::kUseGlobalDeviceIds:
      if (!ParseBool(&b)) return false;
      instr->set_use_global_device_ids(b);
      return true;
    case Attr::kToApply:
      return ParseComputationRef(&called->to_apply);
    case Attr::kMode:
      // XLA's parser reads and drops it (a mode added and rolled back).
      if (kind() != Tok::kIdent) return Expect("a collective op group mode");
      lexer_.Advance();
      return true;
    case Attr::kSourceTargetPairs: {
      std::vector<std::vector<int64_t>> pairs;
      if (!ParseInt64ListList(&pairs)) return false;
      for (const auto& p : pairs) {
        if (p.size() != 2) {
          return Fail(at, "source_target_pairs of {source,target} pairs",
                      absl::StrCat("a list of ", p.size()));
        }
        auto* st = instr->add_source_target_pairs();
        st->set_source(p[0]);
        st->set_target(p[1]);
      }
      return true;
    }
    case Attr::kSliceSizes:
      if (opcode == HloOpcode::kGather) {
        return ParseInt64ListInto(instr->mutable_gather_slice_sizes());
      } else {
        // The combined collective-permute: one list per operand, flattened
        // into dynamic_slice_sizes.
        std::vector<std::vector<int64_t>> lists;
        if (!ParseInt64ListList(&lists)) return false;
        for (const auto& l : lists) {
          for (int64_t s : l) instr->add_dynamic_slice_sizes(s);
        }
        return true;
      }
    case Attr::kCalls:
      return ParseComputationRef(&called->calls);
    case Attr::kAsyncExecutionThread:
      return ParseString(instr->mutable_async_execution_thread());
    case Attr::kOutputToOperandAliasing:
      return ParseOutputOperandAliasing(instr->mutable_output_operand_aliasing());
    case Attr::kCrossProgramPrefetchIndex:
      if (!ParseInt32(&v32)) return false;
      instr->set_cross_program_prefetch_index(v32);
      return true;
    case Attr::kIsCrossProgramPrefetch:
      // Older XLA's spelling of a cross-program prefetch (index 0).
      if (!ParseBool(&b)) return false;
      instr->set_is_cross_program_prefetch(b);
      return true;
    case Attr::kInferredDimension:
      // XLA's reshape keeps it as its one `dimensions` entry
      // (HloReshapeInstruction::ToProto).
      if (!ParseInt64(&v)) return false;
      instr->clear_dimensions();
      instr->add_dimensions(v);
      return true;
    case Attr::kIsStable:
      if (!ParseBool(&b)) return false;
      instr->set_is_stable(b);
      return true;
    case Attr::kCondition:
      return ParseComputationRef(&called->condition);
    case Attr::kBody:
      return ParseComputationRef(&called->body);
    case Attr::kIsHostTransfer:
      if (!ParseBool(&b)) return false;
      instr->set_is_host_transfer(b);
      return true;
    case Attr::kIndex:
      if (!ParseInt64(&v)) return false;
      instr->set_tuple_index(v);
      return true;
    case Attr::kIsComposite:
      if (!ParseBool(&b)) return false;
      instr->set_is_composite(b);
      return true;
    case Attr::kWindow:
      return ParseWindow(instr->mutable_window());
    case Attr::kDimLabels:
      return ParseDimLabels(instr->mutable_convolution_dimension_numbers());
    case Attr::kFeatureGroupCount:
      if (!ParseInt64(&v)) return false;
      instr->set_feature_group_count(v);
      return true;
    case Attr::kBatchGroupCount:
      if (!ParseInt64(&v)) return false;
      instr->set_batch_group_count(v);
      return true;
    case Attr::kConvKind:
      // XLA's convolution kind (fprop, dgrad, wgrad, unset): no field in
      // this library's schema.
      if (!IsIdent("fprop") && !IsIdent("dgrad") && !IsIdent("wgrad") &&
          !IsIdent("unset")) {
        return Expect("fprop, dgrad, wgrad or unset");
      }
      lexer_.Advance();
      return true;
    case Attr::kOperandPrecision: {
      auto* pc = instr->mutable_precision_config();
      if (!Consume(Tok::kLbrace, "\"{\" to start operand_precision")) return false;
      if (kind() != Tok::kRbrace) {
        do {
          xla::PrecisionConfig::Precision p = xla::PrecisionConfig::DEFAULT;
          if (!enum_value(&xla::PrecisionConfig::Precision_Parse, "", &p,
                          "a precision (default, high, highest)")) {
            return false;
          }
          pc->add_operand_precision(p);
        } while (EatIf(Tok::kComma));
      }
      return Consume(Tok::kRbrace, "\",\" or \"}\" in operand_precision");
    }
    case Attr::kFftType: {
      xla::FftType t = xla::FFT;
      if (!enum_value(&xla::FftType_Parse, "", &t, "FFT, IFFT, RFFT or IRFFT")) {
        return false;
      }
      instr->set_fft_type(t);
      return true;
    }
    case Attr::kFftLength:
      return ParseInt64ListInto(instr->mutable_fft_length());
    case Attr::kLeftSide:
      if (!ParseBool(&b)) return false;
      instr->mutable_triangular_solve_options()->set_left_side(b);
      return true;
    case Attr::kLower:
      if (!ParseBool(&b)) return false;
      if (opcode == HloOpcode::kCholesky) {
        instr->mutable_cholesky_options()->set_lower(b);
      } else {
        instr->mutable_triangular_solve_options()->set_lower(b);
      }
      return true;
    case Attr::kUnitDiagonal:
      if (!ParseBool(&b)) return false;
      instr->mutable_triangular_solve_options()->set_unit_diagonal(b);
      return true;
    case Attr::kTransposeA: {
      xla::TriangularSolveOptions::Transpose t = xla::TriangularSolveOptions::TRANSPOSE_INVALID;
      if (!enum_value(&xla::TriangularSolveOptions::Transpose_Parse, "", &t,
                      "NO_TRANSPOSE, TRANSPOSE or ADJOINT")) {
        return false;
      }
      instr->mutable_triangular_solve_options()->set_transpose_a(t);
      return true;
    }
    case Attr::kDirection:
      if (kind() != Tok::kIdent ||
          !ComparisonDirectionFromString(std::string_view(text().data(), text().size())).has_value()) {
        return Expect("a comparison direction (EQ, NE, GE, GT, LE, LT)");
      }
      instr->set_comparison_direction(std::string(text()));
      lexer_.Advance();
      return true;
    case Attr::kType:
      if (kind() != Tok::kIdent || !ComparisonTypeFromString(std::string_view(text().data(), text().size())).has_value()) {
        return Expect("a comparison type (FLOAT, TOTALORDER, SIGNED, UNSIGNED)");
      }
      instr->set_comparison_type(std::string(text()));
      lexer_.Advance();
      return true;
    case Attr::kSelect:
      return ParseComputationRef(&called->select);
    case Attr::kScatter:
      return ParseComputationRef(&called->scatter);
    case Attr::kSlice: {
      if (!Consume(Tok::kLbrace, "\"{\" to start slice")) return false;
      if (kind() != Tok::kRbrace) {
        do {
          const size_t range_at = offset();
          if (!Consume(Tok::kLsquare, "\"[\" to start a slice range")) return false;
          std::vector<int64_t> r;
          do {
            if (!ParseInt64(&v)) return false;
            r.push_back(v);
          } while (EatIf(Tok::kColon));
          if (!Consume(Tok::kRsquare, "\":\" or \"]\" in a slice range")) return false;
          if (r.size() != 2 && r.size() != 3) {
            return Fail(range_at, "[start:limit] or [start:limit:stride]",
                        absl::StrCat(r.size(), " numbers"));
          }
          auto* d = instr->add_slice_dimensions();
          d->set_start(r[0]);
          d->set_limit(r[1]);
          d->set_stride(r.size() == 3 ? r[2] : 1);
        } while (EatIf(Tok::kComma));
      }
      return Consume(Tok::kRbrace, "\",\" or \"}\" in slice");
    }
    case Attr::kDynamicSliceSizes:
      return ParseInt64ListInto(instr->mutable_dynamic_slice_sizes());
    case Attr::kEpsilon: {
      double d = 0;
      if (!ParseDouble(&d)) return false;
      if (std::isfinite(d) && std::fabs(d) > std::numeric_limits<float>::max()) {
        return Fail(at, "a number within the range of f32", absl::StrCat(d));
      }
      instr->set_epsilon(static_cast<float>(d));
      return true;
    }
    case Attr::kFeatureIndex:
      if (!ParseInt64(&v)) return false;
      instr->set_feature_index(v);
      return true;
    case Attr::kPadding:
      return ParsePaddingConfig(instr->mutable_padding_config());
    case Attr::kKind:
      if (!IsIdent("kLoop") && !IsIdent("kInput") && !IsIdent("kOutput") &&
          !IsIdent("kCustom")) {
        return Expect("a fusion kind (kLoop, kInput, kOutput, kCustom)");
      }
      instr->set_fusion_kind(std::string(text()));
      lexer_.Advance();
      return true;
    case Attr::kInfeedConfig:
      return ParseString(instr->mutable_infeed_config());
    case Attr::kOutfeedConfig:
      return ParseString(instr->mutable_outfeed_config());
    case Attr::kOutfeedShape:
      return ParseShape(instr->mutable_outfeed_shape());
    case Attr::kDistribution: {
      xla::RandomDistribution d = xla::RNG_INVALID;
      if (!enum_value(&xla::RandomDistribution_Parse, "", &d,
                      "rng_uniform or rng_normal")) {
        return false;
      }
      instr->set_distribution(d);
      return true;
    }
    case Attr::kDelta:
      if (!ParseInt64(&v)) return false;
      instr->set_delta(v);
      return true;
    case Attr::kAlgorithm:
      if (opcode == HloOpcode::kRngBitGenerator) {
        xla::RandomAlgorithm a = xla::RNG_DEFAULT;
        if (!enum_value(&xla::RandomAlgorithm_Parse, "", &a,
                        "rng_default, rng_three_fry or rng_philox")) {
          return false;
        }
        instr->set_rng_algorithm(a);
      } else {
        xla::PrecisionConfig::Algorithm a = xla::PrecisionConfig::ALG_UNSET;
        if (!enum_value(&xla::PrecisionConfig::Algorithm_Parse, "ALG_", &a,
                        "a dot algorithm (dot_bf16_bf16_f32, ...)")) {
          return false;
        }
        instr->mutable_precision_config()->set_algorithm(a);
      }
      return true;
    case Attr::kExponentBits:
      if (!ParseInt32(&v32)) return false;
      instr->set_exponent_bits(v32);
      return true;
    case Attr::kMantissaBits:
      if (!ParseInt32(&v32)) return false;
      instr->set_mantissa_bits(v32);
      return true;
    case Attr::kTrueComputation:
      return ParseComputationRef(&called->true_computation);
    case Attr::kFalseComputation:
      return ParseComputationRef(&called->false_computation);
    case Attr::kBranchComputations:
      return ParseComputationRefList(&called->branches);
    case Attr::kCustomCallTarget:
      return ParseString(instr->mutable_custom_call_target());
    case Attr::kOperandLayoutConstraints:
      instr->set_constrain_layout(true);
      return ParseShapeList(instr->mutable_operand_shapes_with_layout());
    case Attr::kCustomCallHasSideEffect:
      if (!ParseBool(&b)) return false;
      instr->set_custom_call_has_side_effect(b);
      return true;
    case Attr::kCalledComputations:
      return ParseComputationRefList(&called->called);
    case Attr::kPaddingType: {
      xla::PaddingType t = xla::PADDING_INVALID;
      if (!enum_value(&xla::PaddingType_Parse, "", &t,
                      "PADDING_VALID or PADDING_SAME")) {
        return false;
      }
      instr->set_padding_type(t);
      return true;
    }
    case Attr::kLiteral:
      return ParseLiteralWithShape(instr->mutable_literal());
    case Attr::kSchedule: {
      xla::CustomCallSchedule s = xla::SCHEDULE_NONE;
      if (!enum_value(&xla::CustomCallSchedule_Parse, "", &s,
                      "SCHEDULE_NONE, SCHEDULE_LATEST or SCHEDULE_EARLIEST")) {
        return false;
      }
      instr->set_custom_call_schedule(s);
      return true;
    }
    case Attr::kApiVersion: {
      xla::CustomCallApiVersion a = xla::API_VERSION_UNSPECIFIED;
      if (!enum_value(&xla::CustomCallApiVersion_Parse, "", &a,
                      "an API version (API_VERSION_ORIGINAL, ...)")) {
        return false;
      }
      instr->set_custom_call_api_version(a);
      return true;
    }
    case Attr::kLhsContractingDims:
    case Attr::kRhsContractingDims:
    case Attr::kLhsBatchDims:
    case Attr::kRhsBatchDims: {
      xla::DotDimensionNumbers* d =
          opcode == HloOpcode::kRaggedDot
              ? instr->mutable_ragged_dot_dimension_numbers()
                    ->mutable_dot_dimension_numbers()
              : instr->mutable_dot_dimension_numbers();
      switch (attr) {
        case Attr::kLhsContractingDims:
          return ParseInt64ListInto(d->mutable_lhs_contracting_dimensions());
        case Attr::kRhsContractingDims:
          return ParseInt64ListInto(d->mutable_rhs_contracting_dimensions());
        case Attr::kLhsBatchDims:
          return ParseInt64ListInto(d->mutable_lhs_batch_dimensions());
        default:
          return ParseInt64ListInto(d->mutable_rhs_batch_dimensions());
      }
    }
    case Attr::kLhsRaggedDims:
      return ParseInt64ListInto(instr->mutable_ragged_dot_dimension_numbers()
                                    ->mutable_lhs_ragged_dimensions());
    case Attr::kRhsGroupDims:
      return ParseInt64ListInto(instr->mutable_ragged_dot_dimension_numbers()
                                    ->mutable_rhs_group_dimensions());
    case Attr::kSparsity: {
      // `L.1@2:4`, several joined by `_`: operand (L or R), dimension, N:M.
      const absl::string_view run =
          lexer_.ScanRaw([](unsigned char c, absl::string_view) {
            return IsDigit(c) || c == 'L' || c == 'R' || c == '.' || c == '@' ||
                   c == ':' || c == '_';
          });
      for (absl::string_view part : absl::StrSplit(run, '_')) {
        int64_t dim = 0, n = 0, m = 0;
        const size_t dot = part.find('.'), atp = part.find('@'),
                     colon = part.find(':');
        if (part.size() < 2 || (part[0] != 'L' && part[0] != 'R') || dot != 1 ||
            atp == absl::string_view::npos || colon == absl::string_view::npos ||
            !(dot < atp && atp < colon) ||
            !ParseIntText(part.substr(2, atp - 2), &dim) ||
            !ParseIntText(part.substr(atp + 1, colon - atp - 1), &n) ||
            !ParseIntText(part.substr(colon + 1), &m)) {
          return Fail(at, "sparsity like L.1@2:4", Quote(run));
        }
        auto* s = instr->add_dot_sparsity();
        s->set_type(xla::SPARSITY_STRUCTURED_N_M);
        s->set_index(part[0] == 'L' ? 0 : 1);
        s->set_dimension(static_cast<int32_t>(dim));
        s->set_n(static_cast<int32_t>(n));
        s->set_m(static_cast<int32_t>(m));
      }
      return true;
    }
    case Attr::kOffsetDims:
      return ParseInt64ListInto(
          instr->mutable_gather_dimension_numbers()->mutable_offset_dims());
    case Attr::kCollapsedSliceDims:
      return ParseInt64ListInto(instr->mutable_gather_dimension_numbers()
                                    ->mutable_collapsed_slice_dims());
    case Attr::kStartIndexMap:
      return ParseInt64ListInto(
          instr->mutable_gather_dimension_numbers()->mutable_start_index_map());
    case Attr::kIndexVectorDim:
      if (!ParseInt64(&v)) return false;
      if (opcode == HloOpcode::kGather) {
        instr->mutable_gather_dimension_numbers()->set_index_vector_dim(v);
      } else {
        instr->mutable_scatter_dimension_numbers()->set_index_vector_dim(v);
      }
      return true;
    case Attr::kIndicesAreSorted:
      if (!ParseBool(&b)) return false;
      instr->set_indices_are_sorted(b);
      return true;
    case Attr::kOperandBatchingDims:
      return ParseInt64ListInto(instr->mutable_gather_dimension_numbers()
                                    ->mutable_operand_batching_dims());
    case Attr::kStartIndicesBatchingDims:
      return ParseInt64ListInto(instr->mutable_gather_dimension_numbers()
                                    ->mutable_start_indices_batching_dims());
    case Attr::kUpdateWindowDims:
      return ParseInt64ListInto(instr->mutable_scatter_dimension_numbers()
                                    ->mutable_update_window_dims());
    case Attr::kInsertedWindowDims:
      return ParseInt64ListInto(instr->mutable_scatter_dimension_numbers()
                                    ->mutable_inserted_window_dims());
    case Attr::kScatterDimsToOperandDims:
      return ParseInt64ListInto(instr->mutable_scatter_dimension_numbers()
                                    ->mutable_scatter_dims_to_operand_dims());
    case Attr::kUniqueIndices:
      if (!ParseBool(&b)) return false;
      instr->set_unique_indices(b);
      return true;
    case Attr::kInputBatchingDims:
      return ParseInt64ListInto(instr->mutable_scatter_dimension_numbers()
                                    ->mutable_input_batching_dims());
    case Attr::kScatterIndicesBatchingDims:
      return ParseInt64ListInto(instr->mutable_scatter_dimension_numbers()
                                    ->mutable_scatter_indices_batching_dims());
    case Attr::kDomain: {
      // `{kind="sharding", entry={...}, exit={...}}`.
      if (!Consume(Tok::kLbrace, "\"{\" to start domain")) return false;
      bool has_kind = false, has_entry = false, has_exit = false;
      while (kind() != Tok::kRbrace) {
        EatIf(Tok::kComma);
        const size_t f_at = offset();
        const absl::string_view f = text();
        if (kind() != Tok::kIdent) return Expect("kind=, entry= or exit=");
        lexer_.Advance();
        if (!Consume(Tok::kEqual, "\"=\"")) return false;
        if (f == "kind") {
          std::string k;
          if (!ParseString(&k)) return false;
          if (k != "sharding") {
            return Fail(f_at, "domain kind \"sharding\"", Quote(k));
          }
          has_kind = true;
        } else if (f == "entry" || f == "exit") {
          // XLA prints the user side (domain_exit_sharding) as entry= and
          // the operand side (domain_entry_sharding) as exit=; a side
          // without a sharding as {}.
          xla::OpSharding* side = f == "entry"
                                      ? instr->mutable_domain_exit_sharding()
                                      : instr->mutable_domain_entry_sharding();
          if (kind() == Tok::kLbrace && lexer_.PeekNext().kind == Tok::kRbrace) {
            lexer_.Advance();
            lexer_.Advance();
            if (f == "entry") {
              instr->clear_domain_exit_sharding();
            } else {
              instr->clear_domain_entry_sharding();
            }
          } else if (!ParseSharding(side)) {
            return false;
          }
          (f == "entry" ? has_entry : has_exit) = true;
        } else {
          return Fail(f_at, "kind=, entry= or exit=", Quote(f));
        }
      }
      lexer_.Advance();
      if (!has_kind || !has_entry || !has_exit) {
        return Fail(at, "domain={kind=..., entry=..., exit=...}",
                    "a field missing");
      }
      return true;
    }
    case Attr::kNumAttrs:
      break;
  }
  return Fail(at, "an attribute", "none");
}

bool Parser::FinishAttributes(HloOpcode opcode, xla::HloInstructionProto* instr,
                              const ComputationState& comp, const AttrSet& seen,
                              const CalledComputations& called,
                              size_t opcode_offset) {
  auto require = [&](std::initializer_list<Attr> attrs) {
    for (Attr a : attrs) {
      if (!seen[static_cast<size_t>(a)]) {
        return Fail(opcode_offset,
                    absl::StrCat("attribute ", AttrString(a), "= for ",
                                 instr->opcode()),
                    "none");
      }
    }
    return true;
  };
  auto add = [&](int64_t c) {
    if (c >= 0) instr->add_called_computation_ids(c);
  };
  using A = Attr;
  switch (opcode) {
    case O::kIota: if (!require({A::kIotaDimension})) return false; break;
    case O::kTopK:
      if (!require({A::kK})) return false;
      if (!seen[static_cast<size_t>(A::kLargest)]) instr->set_largest(true);
      break;
    case O::kAllGather: case O::kAllGatherStart:
      if (!require({A::kDimensions})) return false;
      break;
    case O::kAllReduce: case O::kAllReduceStart:
      if (!require({A::kToApply})) return false;
      break;
    case O::kReduceScatter:
      if (!require({A::kToApply, A::kDimensions})) return false;
      break;
    case O::kCollectivePermute: case O::kCollectivePermuteStart:
      if (!require({A::kSourceTargetPairs})) return false;
      break;
    case O::kAsyncStart: if (!require({A::kCalls})) return false; break;
    case O::kSort: if (!require({A::kDimensions, A::kToApply})) return false; break;
    case O::kWhile: if (!require({A::kCondition, A::kBody})) return false; break;
    case O::kGetTupleElement: if (!require({A::kIndex})) return false; break;
    case O::kCall: case O::kReduceWindow: case O::kMap: case O::kScan:
      if (!require({A::kToApply})) return false;
      break;
    case O::kConvolution: if (!require({A::kDimLabels})) return false; break;
    case O::kFft: if (!require({A::kFftType, A::kFftLength})) return false; break;
    case O::kCompare: if (!require({A::kDirection})) return false; break;
    case O::kBroadcast:
      if (!seen[static_cast<size_t>(A::kDimensions)] &&
          !(instr->operand_ids_size() == 1 &&
            At(comp, instr->operand_ids(0)).shape().dimensions_size() == 0 &&
            At(comp, instr->operand_ids(0)).shape().element_type() != xla::TUPLE)) {
        return require({A::kDimensions});
      }
      break;
    case O::kConcatenate: case O::kReverse: case O::kTranspose:
    case O::kGetDimensionSize: case O::kSetDimensionSize:
      if (!require({A::kDimensions})) return false;
      break;
    case O::kReduce: if (!require({A::kToApply, A::kDimensions})) return false; break;
    case O::kSelectAndScatter: if (!require({A::kSelect, A::kScatter})) return false; break;
    case O::kSlice: if (!require({A::kSlice})) return false; break;
    case O::kDynamicSlice: if (!require({A::kDynamicSliceSizes})) return false; break;
    case O::kBatchNormTraining: case O::kBatchNormInference: case O::kBatchNormGrad:
      if (!require({A::kEpsilon, A::kFeatureIndex})) return false;
      break;
    case O::kPad: if (!require({A::kPadding})) return false; break;
    case O::kFusion: if (!require({A::kCalls, A::kKind})) return false; break;
    case O::kRng: if (!require({A::kDistribution})) return false; break;
    case O::kRngGetAndUpdateState: if (!require({A::kDelta})) return false; break;
    case O::kRngBitGenerator: if (!require({A::kAlgorithm})) return false; break;
    case O::kReducePrecision:
      if (!require({A::kExponentBits, A::kMantissaBits})) return false;
      break;
    case O::kCustomCall:
      if (!require({A::kCustomCallTarget})) return false;
      if (!seen[static_cast<size_t>(A::kApiVersion)]) {
        instr->set_custom_call_api_version(xla::API_VERSION_ORIGINAL);
      }
      if (called.to_apply >= 0 && !called.called.empty()) {
        return Fail(opcode_offset, "to_apply= or called_computations=, not both",
                    "both");
      }
      break;
    case O::kGather:
      if (!require({A::kOffsetDims, A::kCollapsedSliceDims, A::kStartIndexMap,
                    A::kIndexVectorDim, A::kSliceSizes})) {
        return false;
      }
      break;
    case O::kScatter:
      if (!require({A::kUpdateWindowDims, A::kInsertedWindowDims,
                    A::kScatterDimsToOperandDims, A::kIndexVectorDim,
                    A::kToApply})) {
        return false;
      }
      break;
    case O::kDomain: if (!require({A::kDomain})) return false; break;
    case O::kConditional: {
      const bool pair = called.true_computation >= 0 || called.false_computation >= 0;
      if (pair && !called.branches.empty()) {
        return Fail(opcode_offset,
                    "true_computation=/false_computation= or "
                    "branch_computations=, not both",
                    "both");
      }
      if (pair && !require({A::kTrueComputation, A::kFalseComputation})) {
        return false;
      }
      if (!pair && !require({A::kBranchComputations})) return false;
      break;
    }
    default:
      break;
  }
  // Called computations in XLA's order.
  switch (opcode) {
    case O::kWhile:
      add(called.body);
      add(called.condition);
      break;
    case O::kConditional:
      add(called.true_computation);
      add(called.false_computation);
      for (int64_t c : called.branches) add(c);
      break;
    case O::kSelectAndScatter:
      add(called.select);
      add(called.scatter);
      break;
    case O::kCustomCall:
      add(called.to_apply);
      for (int64_t c : called.called) add(c);
      break;
    case O::kFusion: case O::kAsyncStart: case O::kAsyncUpdate: case O::kAsyncDone:
      if (called.calls >= 0) {
        add(called.calls);
      } else if (opcode != O::kFusion && instr->operand_ids_size() == 1) {
        // async-update and async-done call what their start calls.
        const xla::HloInstructionProto& start = At(comp, instr->operand_ids(0));
        for (int64_t c : start.called_computation_ids()) add(c);
        if (instr->async_execution_thread().empty()) {
          instr->set_async_execution_thread(start.async_execution_thread());
        }
      }
      break;
    default:
      add(called.to_apply);
      break;
  }
  // Fields XLA's instruction always has, as its ToProto writes them (and
  // hlo/builder.h builds them): dimension numbers and windows even when
  // empty, a DEFAULT precision per operand, group counts of 1.
  auto default_precisions = [&](int n) {
    if (instr->precision_config().operand_precision_size() == 0) {
      for (int k = 0; k < n; ++k) {
        instr->mutable_precision_config()->add_operand_precision(
            xla::PrecisionConfig::DEFAULT);
      }
    }
  };
  switch (opcode) {
    case O::kDot:
      instr->mutable_dot_dimension_numbers();
      default_precisions(instr->operand_ids_size());
      break;
    case O::kScaledDot:
      instr->mutable_dot_dimension_numbers();
      default_precisions(2);
      break;
    case O::kRaggedDot:
      instr->mutable_ragged_dot_dimension_numbers()->mutable_dot_dimension_numbers();
      default_precisions(2);
      break;
    case O::kGather: instr->mutable_gather_dimension_numbers(); break;
    case O::kScatter: instr->mutable_scatter_dimension_numbers(); break;
    case O::kConvolution:
      instr->mutable_window();
      default_precisions(instr->operand_ids_size());
      if (!seen[static_cast<size_t>(A::kFeatureGroupCount)]) {
        instr->set_feature_group_count(1);
      }
      if (!seen[static_cast<size_t>(A::kBatchGroupCount)]) {
        instr->set_batch_group_count(1);
      }
      break;
    case O::kReduceWindow: case O::kSelectAndScatter:
      instr->mutable_window();
      break;
    case O::kCholesky: instr->mutable_cholesky_options(); break;
    case O::kTriangularSolve: instr->mutable_triangular_solve_options(); break;
    default:
      break;
  }
  return true;
}

}  // namespace decomposed::hlo::internal
