#include "decomposed/hlo/opcode.h"

#include <array>

#include "absl/container/flat_hash_map.h"

namespace decomposed::hlo {
namespace {

struct OpcodeInfo {
  std::string_view name;
  int arity;
};

constexpr std::array<OpcodeInfo, kNumHloOpcodes> kOpcodes = {{
#define DECOMPOSED_HLO_OPCODE_INFO(e, s, a) {s, a},
    DECOMPOSED_HLO_OPCODE_LIST(DECOMPOSED_HLO_OPCODE_INFO)
#undef DECOMPOSED_HLO_OPCODE_INFO
}};

const absl::flat_hash_map<std::string_view, HloOpcode>& ByName() {
  static const auto* m = [] {
    auto* out = new absl::flat_hash_map<std::string_view, HloOpcode>();
    for (int i = 0; i < kNumHloOpcodes; ++i) {
      out->emplace(kOpcodes[i].name, static_cast<HloOpcode>(i));
    }
    return out;
  }();
  return *m;
}

}  // namespace

std::string_view HloOpcodeString(HloOpcode op) {
  const int i = static_cast<int>(op);
  return i < kNumHloOpcodes ? kOpcodes[i].name : std::string_view("unknown");
}

std::optional<HloOpcode> HloOpcodeFromString(std::string_view s) {
  const auto& m = ByName();
  auto it = m.find(s);
  if (it == m.end()) return std::nullopt;
  return it->second;
}

std::optional<int> HloOpcodeArity(HloOpcode op) {
  const int i = static_cast<int>(op);
  if (i >= kNumHloOpcodes || kOpcodes[i].arity < 0) return std::nullopt;
  return kOpcodes[i].arity;
}

bool IsElementwiseUnary(HloOpcode op) {
  switch (op) {
    case HloOpcode::kAbs: case HloOpcode::kAcos: case HloOpcode::kAcosh:
    case HloOpcode::kAsin: case HloOpcode::kAsinh: case HloOpcode::kAtan:
    case HloOpcode::kAtanh: case HloOpcode::kCbrt: case HloOpcode::kCeil:
    case HloOpcode::kClz: case HloOpcode::kConvert:
    case HloOpcode::kBitcastConvert: case HloOpcode::kCopy:
    case HloOpcode::kCos: case HloOpcode::kCosh: case HloOpcode::kErf:
    case HloOpcode::kExp: case HloOpcode::kExpm1: case HloOpcode::kFloor:
    case HloOpcode::kImag: case HloOpcode::kIsFinite: case HloOpcode::kLog:
    case HloOpcode::kLog1p: case HloOpcode::kLogistic:
    case HloOpcode::kNegate: case HloOpcode::kNot:
    case HloOpcode::kPopulationCount: case HloOpcode::kReal:
    case HloOpcode::kReducePrecision: case HloOpcode::kRoundNearestAfz:
    case HloOpcode::kRoundNearestEven: case HloOpcode::kRsqrt:
    case HloOpcode::kSign: case HloOpcode::kSin: case HloOpcode::kSinh:
    case HloOpcode::kSqrt: case HloOpcode::kTan: case HloOpcode::kTanh:
      return true;
    default:
      return false;
  }
}

bool IsElementwiseBinary(HloOpcode op) {
  switch (op) {
    case HloOpcode::kAdd: case HloOpcode::kAnd: case HloOpcode::kAtan2:
    case HloOpcode::kCompare: case HloOpcode::kComplex:
    case HloOpcode::kDivide: case HloOpcode::kMaximum:
    case HloOpcode::kMinimum: case HloOpcode::kMulhi:
    case HloOpcode::kMultiply: case HloOpcode::kOr: case HloOpcode::kPower:
    case HloOpcode::kRemainder: case HloOpcode::kShiftLeft:
    case HloOpcode::kShiftRightArithmetic:
    case HloOpcode::kShiftRightLogical: case HloOpcode::kSubtract:
    case HloOpcode::kXor: case HloOpcode::kStochasticConvert:
      return true;
    default:
      return false;
  }
}

bool IsCollective(HloOpcode op) {
  switch (op) {
    case HloOpcode::kAllGather: case HloOpcode::kAllGatherStart:
    case HloOpcode::kAllReduce: case HloOpcode::kAllReduceStart:
    case HloOpcode::kAllToAll: case HloOpcode::kCollectiveBroadcast:
    case HloOpcode::kCollectivePermute:
    case HloOpcode::kCollectivePermuteStart:
    case HloOpcode::kCollectiveReduce: case HloOpcode::kReduceScatter:
    case HloOpcode::kRaggedAllToAll:
      return true;
    default:
      return false;
  }
}

}  // namespace decomposed::hlo
