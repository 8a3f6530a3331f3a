// Building HLO modules in code: for tests, benchmarks, examples and fuzzers.
//
// HloModuleBuilder holds the computations; each HloComputationBuilder has
// one method per opcode that adds an instruction and returns its HloOp
// handle. Each result shape comes from XLA's rules (hlo/shape_inference.h);
// where an opcode takes part of its result from outside its operands (the
// target type of convert, the dimensions of broadcast and reshape, ...) the
// method takes that part. custom-call, bitcast, recv and infeed take their
// shape; SetShape overrides any inferred shape (for tests of bad shapes).
//
// Instructions are named as XLA names them, opcode + "." + id ("add.3",
// "get-tuple-element.7"), unless a name is given; ids count from 1 across
// the module, computations included. Build() writes the module as XLA's
// HloModule::ToProto does: callees before callers (a post-order of the call
// graph), the entry last; each computation's root_id and program_shape
// (parameters by number, their names); the entry's id and name, and
// host_program_shape; the module's id is the entry's. Result shapes carry
// the default layout (major-to-minor) unless an operand's layout carries
// over; constants' literals have the layout of their shape.
//
// Errors never crash: the first failure (an operand shape a rule rejects,
// an operand of another computation, a name used twice, a computation
// changed after it was called, ...) is kept, every later call returns an
// invalid HloOp, and status() and Build() return it, naming the
// computation and the instruction:
//   computation "main", instruction "add.5": add: expected operands of the
//   same dimensions, found f32[2] and f32[3]
//
// A computation is sealed the first time it is called (its signature is
// then fixed); adding to it afterwards is an error.
//
// Example:
//   using namespace decomposed::hlo;
//   HloModuleBuilder mb("m");
//   HloComputationBuilder& sum = mb.AddComputation("sum");
//   sum.Add(sum.Parameter(0, MakeScalarShape(xla::F32), "x"),
//           sum.Parameter(1, MakeScalarShape(xla::F32), "y"));
//   HloComputationBuilder& main = mb.AddEntryComputation("main");
//   HloOp p = main.Parameter(0, MakeArrayShape(xla::F32, {2, 3}), "p");
//   HloOp zero = main.ConstantR0(xla::F32, 0);
//   HloOp r = main.Reduce({p}, {zero}, {1}, sum);   // f32[2], "reduce.7"
//   main.Tuple({r, main.Exp(p)});                  // the root: the last
//   absl::StatusOr<xla::HloModuleProto> proto = mb.Build();
#ifndef DECOMPOSED_HLO_BUILDER_H_
#define DECOMPOSED_HLO_BUILDER_H_

#include <complex>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "decomposed/hlo/module.h"
#include "decomposed/hlo/opcode.h"
#include "decomposed/proto/hlo.pb.h"

namespace decomposed::hlo {

class HloComputationBuilder;
class HloModuleBuilder;

// --- Literals ----------------------------------------------------------------------

// A LiteralProto of `type` (an array element type) and `dims`, holding
// `values` in row-major order, stored as XLA stores each type (packed
// fields, little-endian bytes, one byte per element for the sub-byte types)
// with the default layout. Doubles convert to every type: the floating
// types round to nearest even (past the largest finite value: infinity
// where the type has one, else NaN where it has one, else the largest
// finite value), integer types need an integral
// value in range, PRED is value != 0, complex types get a zero imaginary
// part. Integers (int64, uint64) are exact for the integer types; complex
// values need a complex type. Errors: kInvalidArgument for a value count
// other than the element count, a non-array type, a value the type cannot
// hold.
absl::StatusOr<xla::LiteralProto> MakeLiteral(int type,
                                              absl::Span<const int64_t> dims,
                                              absl::Span<const double> values);
absl::StatusOr<xla::LiteralProto> MakeIntLiteral(
    int type, absl::Span<const int64_t> dims, absl::Span<const int64_t> values);
absl::StatusOr<xla::LiteralProto> MakeUintLiteral(
    int type, absl::Span<const int64_t> dims, absl::Span<const uint64_t> values);
absl::StatusOr<xla::LiteralProto> MakeComplexLiteral(
    int type, absl::Span<const int64_t> dims,
    absl::Span<const std::complex<double>> values);

// --- Attribute helpers -----------------------------------------------------------------

struct PaddingDim {
  int64_t low = 0;
  int64_t high = 0;
  int64_t interior = 0;
};
xla::PaddingConfig MakePaddingConfig(absl::Span<const PaddingDim> dims);

// A window of `sizes`; the other lists are empty (the defaults: stride 1,
// no padding, dilations 1, no reversal) or one entry per dimension.
xla::Window MakeWindow(absl::Span<const int64_t> sizes,
                       absl::Span<const int64_t> strides = {},
                       absl::Span<const std::pair<int64_t, int64_t>> padding = {},
                       absl::Span<const int64_t> base_dilation = {},
                       absl::Span<const int64_t> window_dilation = {});

xla::DotDimensionNumbers MakeDotDimensionNumbers(
    absl::Span<const int64_t> lhs_contracting,
    absl::Span<const int64_t> rhs_contracting,
    absl::Span<const int64_t> lhs_batch = {},
    absl::Span<const int64_t> rhs_batch = {});

// Convolution dimension numbers from HLO text's dim_labels: input, kernel
// and output labels, `b`/`f` (batch, feature) and `i`/`o` (kernel input and
// output feature) and the digits of the spatial dimensions, each label's
// position the dimension: "b01f_01io->b01f". Errors: kInvalidArgument
// naming the labels.
absl::StatusOr<xla::ConvolutionDimensionNumbers> ConvolutionDimensionNumbersFromLabels(
    std::string_view labels);

xla::GatherDimensionNumbers MakeGatherDimensionNumbers(
    absl::Span<const int64_t> offset_dims,
    absl::Span<const int64_t> collapsed_slice_dims,
    absl::Span<const int64_t> start_index_map, int64_t index_vector_dim,
    absl::Span<const int64_t> operand_batching_dims = {},
    absl::Span<const int64_t> start_indices_batching_dims = {});

xla::ScatterDimensionNumbers MakeScatterDimensionNumbers(
    absl::Span<const int64_t> update_window_dims,
    absl::Span<const int64_t> inserted_window_dims,
    absl::Span<const int64_t> scatter_dims_to_operand_dims,
    int64_t index_vector_dim, absl::Span<const int64_t> input_batching_dims = {},
    absl::Span<const int64_t> scatter_indices_batching_dims = {});

// The attributes the collectives share.
struct CollectiveOptions {
  std::vector<std::vector<int64_t>> replica_groups;  // empty: all replicas
  std::optional<int64_t> channel_id;
  bool use_global_device_ids = false;
  bool constrain_layout = false;
};

// --- Handles -------------------------------------------------------------------------------

// An instruction being built. Default-constructed, or returned by a call
// that failed: invalid, and every call given it returns an invalid op too.
class HloOp {
 public:
  HloOp() = default;
  bool valid() const { return builder_ != nullptr; }
  int64_t id() const { return id_; }
  // Preconditions: valid(); the builder is alive.
  const xla::ShapeProto& shape() const;
  const std::string& name() const;
  const HloComputationBuilder* builder() const { return builder_; }

 private:
  friend class HloComputationBuilder;
  HloComputationBuilder* builder_ = nullptr;
  int64_t id_ = -1;
  int index_ = -1;
};

class HloComputationBuilder {
 public:
  HloComputationBuilder(const HloComputationBuilder&) = delete;
  HloComputationBuilder& operator=(const HloComputationBuilder&) = delete;

  const std::string& name() const { return proto_.name(); }
  int64_t id() const { return proto_.id(); }
  HloModuleBuilder& module() const { return *module_; }
  // The module's first error (shared by all its computations).
  absl::Status status() const;
  int64_t instruction_count() const { return proto_.instructions_size(); }
  // The index-th instruction added (0 <= index < instruction_count()), or
  // an invalid op.
  HloOp InstructionAt(int64_t index);

  // --- Leaves ---
  HloOp Parameter(int64_t number, const xla::ShapeProto& shape,
                  std::string name = "");
  HloOp Constant(const xla::LiteralProto& literal, std::string name = "");
  HloOp ConstantR0(int type, double value);
  HloOp ConstantR1(int type, absl::Span<const double> values);
  HloOp ConstantR2(int type,
                   std::initializer_list<std::initializer_list<double>> rows);
  HloOp ConstantR0Int(int type, int64_t value);
  HloOp ConstantR1Int(int type, absl::Span<const int64_t> values);
  HloOp ConstantR2Int(int type,
                      std::initializer_list<std::initializer_list<int64_t>> rows);
  HloOp ConstantR1Complex(int type, absl::Span<const std::complex<double>> values);
  HloOp ConstantArray(int type, absl::Span<const int64_t> dims,
                      absl::Span<const double> values);
  HloOp Iota(const xla::ShapeProto& shape, int64_t iota_dimension);
  HloOp ReplicaId();
  HloOp PartitionId();
  HloOp RngGetAndUpdateState(int64_t delta);
  HloOp AfterAll(absl::Span<const HloOp> tokens);

  // --- Elementwise ---
  HloOp Unary(HloOpcode opcode, HloOp x);
  HloOp Binary(HloOpcode opcode, HloOp a, HloOp b);
#define DECOMPOSED_HLO_BUILDER_UNARY(V)                                       \
  V(Abs, kAbs) V(Ceil, kCeil) V(Floor, kFloor)                                \
  V(RoundNearestAfz, kRoundNearestAfz) V(RoundNearestEven, kRoundNearestEven) \
  V(Cos, kCos) V(Sin, kSin) V(Tan, kTan) V(Exp, kExp) V(Expm1, kExpm1)        \
  V(Log, kLog) V(Log1p, kLog1p) V(Logistic, kLogistic) V(Rsqrt, kRsqrt)       \
  V(Sqrt, kSqrt) V(Cbrt, kCbrt) V(Tanh, kTanh) V(Erf, kErf)                   \
  V(Negate, kNegate) V(Sign, kSign) V(Not, kNot) V(IsFinite, kIsFinite)       \
  V(PopulationCount, kPopulationCount) V(Clz, kClz) V(Real, kReal)            \
  V(Imag, kImag) V(Copy, kCopy)
#define DECOMPOSED_HLO_BUILDER_BINARY(V)                                      \
  V(Add, kAdd) V(Subtract, kSubtract) V(Multiply, kMultiply)                  \
  V(Divide, kDivide) V(Remainder, kRemainder) V(Maximum, kMaximum)            \
  V(Minimum, kMinimum) V(Power, kPower) V(Atan2, kAtan2) V(And, kAnd)         \
  V(Or, kOr) V(Xor, kXor) V(ShiftLeft, kShiftLeft)                            \
  V(ShiftRightArithmetic, kShiftRightArithmetic)                              \
  V(ShiftRightLogical, kShiftRightLogical) V(Complex, kComplex)
#define DECOMPOSED_HLO_BUILDER_DECLARE_UNARY(name, op) HloOp name(HloOp x);
#define DECOMPOSED_HLO_BUILDER_DECLARE_BINARY(name, op) \
  HloOp name(HloOp a, HloOp b);
  DECOMPOSED_HLO_BUILDER_UNARY(DECOMPOSED_HLO_BUILDER_DECLARE_UNARY)
  DECOMPOSED_HLO_BUILDER_BINARY(DECOMPOSED_HLO_BUILDER_DECLARE_BINARY)
#undef DECOMPOSED_HLO_BUILDER_DECLARE_UNARY
#undef DECOMPOSED_HLO_BUILDER_DECLARE_BINARY
  // The type is written only when given (XLA's default for the operand
  // type otherwise).
  HloOp Compare(HloOp a, HloOp b, ComparisonDirection direction,
                std::optional<ComparisonType> type = std::nullopt);
  HloOp Select(HloOp pred, HloOp on_true, HloOp on_false);
  HloOp Clamp(HloOp min, HloOp x, HloOp max);
  HloOp Convert(HloOp x, int type);
  HloOp BitcastConvert(HloOp x, int type);
  HloOp StochasticConvert(HloOp x, HloOp random, int type);
  HloOp ReducePrecision(HloOp x, int exponent_bits, int mantissa_bits);

  // --- Shapes ---
  HloOp Broadcast(HloOp x, absl::Span<const int64_t> output_dims,
                  absl::Span<const int64_t> dimensions);
  HloOp Reshape(HloOp x, absl::Span<const int64_t> dims);
  HloOp Transpose(HloOp x, absl::Span<const int64_t> permutation);
  // Empty strides: all 1.
  HloOp Slice(HloOp x, absl::Span<const int64_t> starts,
              absl::Span<const int64_t> limits,
              absl::Span<const int64_t> strides = {});
  HloOp DynamicSlice(HloOp x, absl::Span<const HloOp> starts,
                     absl::Span<const int64_t> sizes);
  HloOp DynamicUpdateSlice(HloOp x, HloOp update,
                           absl::Span<const HloOp> starts);
  HloOp Concatenate(absl::Span<const HloOp> operands, int64_t dimension);
  HloOp Pad(HloOp x, HloOp value, const xla::PaddingConfig& config);
  HloOp Reverse(HloOp x, absl::Span<const int64_t> dimensions);
  HloOp Gather(HloOp x, HloOp indices, const xla::GatherDimensionNumbers& dnums,
               absl::Span<const int64_t> slice_sizes,
               bool indices_are_sorted = false);
  HloOp Scatter(absl::Span<const HloOp> operands, HloOp indices,
                absl::Span<const HloOp> updates,
                const HloComputationBuilder& update_computation,
                const xla::ScatterDimensionNumbers& dnums,
                bool indices_are_sorted = false, bool unique_indices = false);
  HloOp GetDimensionSize(HloOp x, int64_t dimension);
  HloOp SetDimensionSize(HloOp x, HloOp size, int64_t dimension);
  // The result shape is `shape` (no rule).
  HloOp Bitcast(HloOp x, const xla::ShapeProto& shape);

  // --- Contractions ---
  HloOp Dot(HloOp a, HloOp b, const xla::DotDimensionNumbers& dnums,
            std::optional<int> result_type = std::nullopt,
            const xla::PrecisionConfig& precision = {});
  HloOp Convolution(HloOp lhs, HloOp rhs, const xla::Window& window,
                    const xla::ConvolutionDimensionNumbers& dnums,
                    int64_t feature_group_count = 1,
                    int64_t batch_group_count = 1,
                    std::optional<int> result_type = std::nullopt,
                    const xla::PrecisionConfig& precision = {});

  // --- Reductions and called computations ---
  HloOp Reduce(absl::Span<const HloOp> inputs, absl::Span<const HloOp> inits,
               absl::Span<const int64_t> dimensions,
               const HloComputationBuilder& reducer);
  HloOp ReduceWindow(absl::Span<const HloOp> inputs,
                     absl::Span<const HloOp> inits, const xla::Window& window,
                     const HloComputationBuilder& reducer);
  HloOp SelectAndScatter(HloOp x, const HloComputationBuilder& select,
                         const xla::Window& window, HloOp source, HloOp init,
                         const HloComputationBuilder& scatter);
  HloOp Sort(absl::Span<const HloOp> operands, int64_t dimension,
             const HloComputationBuilder& comparator, bool is_stable = false);
  HloOp TopK(HloOp x, int64_t k, bool largest = true);
  HloOp Map(absl::Span<const HloOp> operands,
            const HloComputationBuilder& computation);
  HloOp Tuple(absl::Span<const HloOp> elements);
  HloOp GetTupleElement(HloOp tuple, int64_t index);
  HloOp Call(const HloComputationBuilder& computation,
             absl::Span<const HloOp> operands);
  HloOp While(const HloComputationBuilder& condition,
              const HloComputationBuilder& body, HloOp init);
  // A pred[] index takes (true, false) branches; an s32[] index any number.
  HloOp Conditional(HloOp index, absl::Span<const HloOp> branch_operands,
                    absl::Span<const HloComputationBuilder* const> branches);
  // kind: "kLoop", "kInput", "kOutput" or "kCustom". Marks `fused` a
  // fusion computation.
  HloOp Fusion(std::string_view kind, absl::Span<const HloOp> operands,
               const HloComputationBuilder& fused);
  // No rule: the result is `shape`.
  HloOp CustomCall(std::string_view target, absl::Span<const HloOp> operands,
                   const xla::ShapeProto& shape,
                   std::string_view backend_config = "");

  // --- Batch norm ---
  HloOp BatchNormTraining(HloOp x, HloOp scale, HloOp offset, float epsilon,
                          int64_t feature_index);
  HloOp BatchNormInference(HloOp x, HloOp scale, HloOp offset, HloOp mean,
                           HloOp variance, float epsilon, int64_t feature_index);
  HloOp BatchNormGrad(HloOp x, HloOp scale, HloOp mean, HloOp variance,
                      HloOp grad_output, float epsilon, int64_t feature_index);

  // --- Collectives ---
  HloOp AllReduce(absl::Span<const HloOp> operands,
                  const HloComputationBuilder& reducer,
                  const CollectiveOptions& options = {});
  HloOp AllReduceStart(absl::Span<const HloOp> operands,
                       const HloComputationBuilder& reducer,
                       const CollectiveOptions& options = {});
  HloOp AllReduceDone(HloOp start);
  // The shard count is the replica group size (1 without groups) unless
  // given.
  HloOp AllGather(absl::Span<const HloOp> operands, int64_t dimension,
                  const CollectiveOptions& options = {},
                  std::optional<int64_t> shard_count = std::nullopt);
  HloOp AllGatherStart(absl::Span<const HloOp> operands, int64_t dimension,
                       const CollectiveOptions& options = {},
                       std::optional<int64_t> shard_count = std::nullopt);
  HloOp AllGatherDone(HloOp start);
  HloOp ReduceScatter(absl::Span<const HloOp> operands,
                      const HloComputationBuilder& reducer, int64_t dimension,
                      const CollectiveOptions& options = {},
                      std::optional<int64_t> shard_count = std::nullopt);
  // With a split dimension: one array operand; without: the tuple form.
  HloOp AllToAll(absl::Span<const HloOp> operands,
                 std::optional<int64_t> split_dimension,
                 const CollectiveOptions& options = {});
  HloOp CollectivePermute(HloOp x,
                          absl::Span<const std::pair<int64_t, int64_t>> pairs,
                          std::optional<int64_t> channel_id = std::nullopt);
  HloOp CollectivePermuteStart(
      HloOp x, absl::Span<const std::pair<int64_t, int64_t>> pairs,
      std::optional<int64_t> channel_id = std::nullopt);
  HloOp CollectivePermuteDone(HloOp start);

  // --- Everything else ---
  HloOp Rng(HloOp a, HloOp b, int distribution,
            absl::Span<const int64_t> dims);
  HloOp RngBitGenerator(HloOp state, int algorithm,
                        const xla::ShapeProto& output);
  HloOp AddDependency(HloOp x, HloOp token);
  HloOp OptimizationBarrier(HloOp x);
  HloOp Domain(HloOp x);
  HloOp Cholesky(HloOp a, bool lower);
  HloOp TriangularSolve(HloOp a, HloOp b,
                        const xla::TriangularSolveOptions& options);
  HloOp Fft(HloOp x, int fft_type, absl::Span<const int64_t> fft_length);
  HloOp CopyStart(HloOp x);
  HloOp CopyDone(HloOp start);
  HloOp Send(HloOp data, HloOp token, int64_t channel_id,
             bool is_host_transfer = false);
  HloOp SendDone(HloOp send);
  HloOp Recv(HloOp token, const xla::ShapeProto& data, int64_t channel_id,
             bool is_host_transfer = false);
  HloOp RecvDone(HloOp recv);
  HloOp Infeed(HloOp token, const xla::ShapeProto& data,
               std::string_view config = "");
  HloOp Outfeed(HloOp data, HloOp token, std::string_view config = "");
  HloOp AsyncStart(const HloComputationBuilder& wrapped,
                   absl::Span<const HloOp> operands);
  HloOp AsyncUpdate(HloOp start);
  HloOp AsyncDone(HloOp start_or_update);

  // Any instruction: `proto`'s opcode, shape and attributes as given; id,
  // name (opcode + "." + id when empty), operand and called computation ids
  // filled in. No rule is applied.
  HloOp AddInstruction(xla::HloInstructionProto proto,
                       absl::Span<const HloOp> operands,
                       absl::Span<const HloComputationBuilder* const> called = {});

  // --- After the fact ---
  // Overrides the shape (no check): for tests of bad shapes.
  void SetShape(HloOp op, const xla::ShapeProto& shape);
  void SetMetadata(HloOp op, const xla::OpMetadata& metadata);
  void SetFrontendAttribute(HloOp op, std::string_view key,
                            std::string_view value);
  void SetSharding(HloOp op, const xla::OpSharding& sharding);
  void SetBackendConfig(HloOp op, std::string_view config);
  // `successor` runs after `predecessor` (both of this computation).
  void AddControlDependency(HloOp predecessor, HloOp successor);
  // The root (default: the last instruction added).
  void SetRoot(HloOp op);
  // The instruction itself, for any other field; nullptr for an invalid op.
  xla::HloInstructionProto* mutable_proto(HloOp op);

 private:
  friend class HloModuleBuilder;
  friend class HloOp;
  HloComputationBuilder(HloModuleBuilder* module, std::string name, int64_t id);

  // Adds an instruction of `opcode` with `shape` (the rule's result or an
  // error, which is then recorded) and `operands`.
  HloOp Add(HloOpcode opcode, absl::StatusOr<xla::ShapeProto> shape,
            absl::Span<const HloOp> operands,
            absl::Span<const HloComputationBuilder* const> called = {},
            std::string name = "");
  // Records `status` for `instruction` (a name, or "").
  void Fail(std::string_view instruction, const absl::Status& status);
  bool Usable() const;
  // Usable, not sealed, and every operand a valid op of this computation;
  // records the error otherwise.
  bool Ready(HloOpcode opcode, absl::Span<const HloOp> operands);
  // The name the next instruction of `opcode` gets by default.
  std::string NextName(HloOpcode opcode) const;
  std::string DescribeComputationName() const;
  // Seals `c` and returns its signature (an error if it cannot be called).
  absl::StatusOr<xla::ProgramShapeProto> Signature(
      const HloComputationBuilder& c, HloOpcode opcode);
  absl::StatusOr<xla::ProgramShapeProto> ProgramShape() const;
  int64_t RootId() const;
  std::vector<const xla::ShapeProto*> Shapes(absl::Span<const HloOp> ops) const;
  xla::HloInstructionProto* At(HloOp op);
  // The computation an async-start or async-update op wraps, or nullptr.
  const HloComputationBuilder* WrappedBy(HloOp op);
  void SetCollective(xla::HloInstructionProto* p, const CollectiveOptions& o);

  HloModuleBuilder* module_;
  xla::HloComputationProto proto_;
  std::vector<const HloComputationBuilder*> callees_;
  int64_t root_id_ = -1;
  mutable bool sealed_ = false;  // called: its signature is fixed
  mutable bool fusion_ = false;  // called by a fusion

};

class HloModuleBuilder {
 public:
  explicit HloModuleBuilder(std::string name);
  HloModuleBuilder(const HloModuleBuilder&) = delete;
  HloModuleBuilder& operator=(const HloModuleBuilder&) = delete;

  // A new computation; "" names it "computation.<id>". Names are unique.
  HloComputationBuilder& AddComputation(std::string name = "");
  // The entry computation (one per module).
  HloComputationBuilder& AddEntryComputation(std::string name = "main");

  const std::string& name() const { return name_; }
  // The first error of any computation, or OkStatus.
  absl::Status status() const { return status_; }

  // The module (see the file comment), or the first error; also an error
  // when there is no entry or a computation has no instructions. The
  // builder may build again.
  absl::StatusOr<xla::HloModuleProto> Build() const;

 private:
  friend class HloComputationBuilder;
  int64_t NextId() { return next_id_++; }
  void Fail(const absl::Status& status) {
    if (status_.ok()) status_ = status;
  }

  std::string name_;
  std::vector<std::unique_ptr<HloComputationBuilder>> computations_;
  HloComputationBuilder* entry_ = nullptr;
  absl::flat_hash_set<std::string> computation_names_;
  absl::flat_hash_set<std::string> instruction_names_;
  int64_t next_id_ = 1;
  absl::Status status_;
};

}  // namespace decomposed::hlo

#endif  // DECOMPOSED_HLO_BUILDER_H_
