// The pieces of the HLO printer (hlo/print.h) shared by its source files:
// the chunked text buffer and the writers of shapes, literals, numbers and
// attribute values, each restating one of XLA's printing functions.
#ifndef DECOMPOSED_SRC_HLO_PRINT_INTERNAL_H_
#define DECOMPOSED_SRC_HLO_PRINT_INTERNAL_H_

#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "decomposed/hlo/print.h"
#include "decomposed/proto/hlo.pb.h"

namespace decomposed::hlo::print_internal {

// Text is appended to a string; with a writer, the string is handed over
// and emptied each time it holds a chunk (MaybeFlush) and at the end.
class TextBuffer {
 public:
  // About this much text is handed to the writer at a time.
  static constexpr size_t kChunkBytes = size_t{256} << 10;

  TextBuffer() = default;
  TextBuffer(ChunkWriter write, void* sink) : write_(write), sink_(sink) {
    buf_.reserve(kChunkBytes + (kChunkBytes >> 2));
  }
  TextBuffer(const TextBuffer&) = delete;
  TextBuffer& operator=(const TextBuffer&) = delete;

  void Append(std::string_view s) { buf_.append(s.data(), s.size()); }
  void Append(char c) { buf_.push_back(c); }
  void AppendInt(int64_t v) {
    char t[24];
    auto r = std::to_chars(t, t + sizeof(t), v);
    buf_.append(t, static_cast<size_t>(r.ptr - t));
  }
  void AppendUint(uint64_t v) {
    char t[24];
    auto r = std::to_chars(t, t + sizeof(t), v);
    buf_.append(t, static_cast<size_t>(r.ptr - t));
  }
  // Hands the text over once a chunk is buffered. False once the writer
  // refused a chunk.
  bool MaybeFlush() {
    if (write_ != nullptr && buf_.size() >= kChunkBytes) return Flush();
    return !failed_;
  }
  // Hands over whatever is buffered (no-op without a writer).
  bool Flush() {
    if (write_ == nullptr) return true;
    // After a refused chunk the text is dropped: nothing more reaches the
    // sink and the buffer does not grow.
    if (!failed_ && !buf_.empty() && !write_(sink_, buf_)) failed_ = true;
    buf_.clear();
    return !failed_;
  }
  bool failed() const { return failed_; }
  std::string& str() { return buf_; }

 private:
  ChunkWriter write_ = nullptr;
  void* sink_ = nullptr;
  std::string buf_;
  bool failed_ = false;
};

// XLA's lowercase name of an element type ("f32", "bf16", "token",
// "opaque", "invalid"), or "" when XLA has no such type.
std::string_view LowercaseTypeName(int type);

// ShapeUtil::PrintHumanString(WithLayout). False (and `<type N>` written)
// when an element type is unknown.
bool AppendShape(TextBuffer& out, const xla::ShapeProto& shape,
                 bool print_layout);
// Layout::Print.
void AppendLayout(TextBuffer& out, const xla::LayoutProto& layout);

// RoundTripFpToString for each floating type, from the element's raw
// little-endian bytes (`p`). Precondition: `type` is a floating type.
void AppendFloatElement(TextBuffer& out, int type, const char* p);
void AppendFloat(TextBuffer& out, float v);
void AppendDouble(TextBuffer& out, double v);
// absl::StrCat of a float or double (six significant digits, %g).
void AppendSixDigits(TextBuffer& out, double v);

// The values of a literal, as Literal::PrintWithoutShapeOneline (or, with
// `with_shape`, PrintWithLayoutOneline) writes them. Errors: data that does
// not match the shape, an unknown element type, a tuple literal whose
// element count differs from its shape's.
absl::Status AppendLiteral(TextBuffer& out, const xla::LiteralProto& literal,
                           bool with_shape);

// absl::CEscape.
void AppendCEscaped(TextBuffer& out, std::string_view s);
// hlo_lexer's LexesAsJsonDict: `{...}` with balanced braces outside
// strings, nothing but blanks and comments around it.
bool LexesAsJsonDict(std::string_view s);

// The attribute values (without their `name=`).
void AppendOpMetadata(TextBuffer& out, const xla::OpMetadata& m);
bool HasPrintableMetadata(const xla::OpMetadata& m);
void AppendFrontendAttributes(TextBuffer& out,
                              const xla::FrontendAttributes& attributes);
void AppendSharding(TextBuffer& out, const xla::OpSharding& sharding,
                    bool include_metadata);
// replica_groups of an instruction: the legacy field, else the collective
// device list (explicit or iota).
void AppendReplicaGroups(TextBuffer& out, const xla::HloInstructionProto& in);
void AppendWindow(TextBuffer& out, const xla::Window& window);
void AppendPaddingConfig(TextBuffer& out, const xla::PaddingConfig& padding);
void AppendDotDimensionNumbers(TextBuffer& out,
                               const xla::DotDimensionNumbers& dnums);
void AppendConvolutionDimensionNumbers(
    TextBuffer& out, const xla::ConvolutionDimensionNumbers& dnums);
// `{a,b,c}` of any repeated integer field.
template <class R>
void AppendIntList(TextBuffer& out, const R& values) {
  out.Append('{');
  bool first = true;
  for (auto v : values) {
    if (!first) out.Append(',');
    first = false;
    out.AppendInt(static_cast<int64_t>(v));
  }
  out.Append('}');
}
// ShapeIndex::ToString: `{}`, `{0,1}`.
template <class R>
void AppendShapeIndex(TextBuffer& out, const R& index) {
  AppendIntList(out, index);
}

}  // namespace decomposed::hlo::print_internal

#endif  // DECOMPOSED_SRC_HLO_PRINT_INTERNAL_H_
