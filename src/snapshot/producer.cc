#include "decomposed/snapshot/producer.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <span>
#include <string>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "decomposed/io/byte_source.h"
#include "decomposed/io/fd.h"
#include "decomposed/io/splice_copy.h"
#include "decomposed/status.h"
#include "decomposed/xla/shape.h"

namespace decomposed {

absl::StatusOr<std::vector<std::optional<PrimitiveType>>> ParseIndexedDtypes(
    const std::vector<std::string>& specs, size_t count, std::string_view what) {
  std::vector<std::optional<PrimitiveType>> out(count);
  for (const std::string& s : specs) {
    const size_t eq = s.find('=');
    size_t index;
    if (eq == std::string::npos || !absl::SimpleAtoi(absl::string_view(s.data(), eq), &index)) {
      return absl::InvalidArgumentError(absl::StrCat("expected INDEX=TYPE, found '", s, "'"));
    }
    if (index >= count) {
      return absl::InvalidArgumentError(absl::StrCat("'", s, "': there are only ",
                                                     Counted(count, what),
                                                     " (numbered from 0)"));
    }
    std::optional<PrimitiveType> t = ParseDtypeName(std::string_view(s).substr(eq + 1));
    if (!t) {
      return absl::InvalidArgumentError(absl::StrCat(
          "'", s, "': unknown type (use an XLA name such as bf16, f8e4m3fn, s4, or a NumPy "
                  "name such as float32)"));
    }
    out[index] = t;
  }
  return out;
}

absl::StatusOr<std::vector<std::unique_ptr<LiteralSource>>> LiteralsOfFiles(
    const std::vector<std::string>& files,
    const std::vector<std::optional<PrimitiveType>>& types, std::string_view role,
    const ShapeEncodeOptions& shape) {
  if (!types.empty() && types.size() != files.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        Sv(role), " types: expected one per file (", files.size(), "), found ", types.size()));
  }
  std::vector<std::unique_ptr<LiteralSource>> out;
  for (size_t i = 0; i < files.size(); ++i) {
    const std::string name = absl::StrCat(Sv(role), " ", i, " (", files[i], ")");
    const std::optional<PrimitiveType> type = types.empty() ? std::nullopt : types[i];
    if (absl::EndsWith(files[i], ".npy")) {
      LiteralEncodeOptions o;
      o.shape = shape;
      o.name = name;
      out.push_back(NpyLiteral(files[i], type, o));
      continue;
    }
    if (type) {
      return absl::InvalidArgumentError(
          absl::StrCat(name, ": a type applies to .npy files only"));
    }
    absl::StatusOr<std::string> body = ReadMessageFile(files[i]);
    if (!body.ok()) return Prefix(body.status(), name);
    out.push_back(SerializedLiteral(*std::move(body), true, name));
  }
  return out;
}

absl::StatusOr<std::string> ReadMessageFile(const std::string& path) {
  OwnedFd fd;
  if (absl::Status s = OpenForReading(path, &fd); !s.ok()) return s;
  FdSource src(std::move(fd));
  std::optional<uint64_t> size = src.size();
  if (!size) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": expected a regular file"));
  }
  if (*size > limits::kMaxMessageBytes) {
    return absl::ResourceExhaustedError(absl::StrCat(
        path, ": ", *size,
        " bytes is over protobuf's 2 GiB message limit; no protobuf reader "
        "can parse it as one message"));
  }
  std::string out;
  if (absl::Status s = ReadToString(src, *size, Frame{"file"}, &out);
      !s.ok()) {
    return WithFile(s, path);
  }
  return out;
}

std::unique_ptr<LiteralSource> ProtoLiteral(const xla::LiteralProto& literal,
                                            std::string name) {
  return SerializedLiteral(literal.SerializeAsString(), true, std::move(name));
}

absl::Status CopyFileRangeTo(const std::string& path, uint64_t offset,
                             uint64_t length, int out_fd,
                             const std::function<void(uint64_t)>& progress) {
  OwnedFd in;
  if (absl::Status s = OpenForReading(path, &in); !s.ok()) return s;
  // splice(2) through a pipe first: measured faster than copy_file_range
  // for the unaligned offsets a .npy and the decomposed framing give
  // (io/splice_copy.h, docs/unpack.md#closer-to-cp).
  uint64_t copied = 0;
  const std::function<void(uint64_t)> step = [&](uint64_t k) {
    copied += k;
    progress(copied);
  };
  bool unsupported = false;
  absl::StatusOr<uint64_t> spliced =
      SpliceCopy(in.get(), offset, out_fd, length, progress ? &step : nullptr,
                 &unsupported);
  if (!spliced.ok()) {
    return Prefix(spliced.status(),
                  absl::StrCat("copying ", path, " from byte ", offset));
  }
  if (*spliced == length) return absl::OkStatus();
  if (!unsupported) {
    return TruncatedError(Frame{"npy data"}, offset, length, *spliced);
  }
  loff_t off = static_cast<loff_t>(offset + *spliced);
  uint64_t left = length - *spliced;
  bool kernel = true;
  std::unique_ptr<char[]> buf;
  constexpr size_t kBuf = 1 << 20;
  while (left > 0) {
    // Large steps let the kernel move big extents; 64 MiB with a progress
    // display keeps it lively.
    size_t want = static_cast<size_t>(
        std::min<uint64_t>(left, progress ? (64 << 20) : (1 << 30)));
    ssize_t got;
    if (kernel) {
      got = ::copy_file_range(in.get(), &off, out_fd, nullptr, want, 0);
      if (got < 0 && (errno == EXDEV || errno == EINVAL || errno == ENOSYS ||
                      errno == EOPNOTSUPP || errno == EBADF ||
                      errno == EPERM)) {
        kernel = false;  // not supported here: copy through user space
        buf.reset(new char[kBuf]);
        continue;
      }
    } else {
      got = ::pread(in.get(), buf.get(), std::min(want, kBuf), off);
      if (got > 0) {
        if (absl::Status s = WriteFully(out_fd, buf.get(),
                                        static_cast<size_t>(got));
            !s.ok()) {
          return s;
        }
        off += got;
      }
    }
    if (got < 0) {
      if (errno == EINTR) continue;
      return ErrnoError(
          errno, absl::StrCat("copying ", path, " at byte ", off));
    }
    if (got == 0) {
      return TruncatedError(Frame{"npy data"}, offset, length,
                            length - left);
    }
    left -= static_cast<uint64_t>(got);
    if (progress) progress(length - left);
  }
  return absl::OkStatus();
}

namespace {

// Lists literals already written (Prepare() is cached by every
// LiteralSource).
absl::Status ListLiterals(std::span<LiteralSource* const> literals,
                          std::vector<PackedLiteral>* out) {
  for (LiteralSource* b : literals) {
    PackedLiteral p;
    p.name = b->name();
    absl::StatusOr<uint64_t> n = b->Prepare();
    if (!n.ok()) return n.status();
    p.bytes = *n;
    absl::StatusOr<std::string> sb = b->ShapeBytes();
    if (!sb.ok()) return sb.status();
    absl::StatusOr<Shape> shape = ParseShape(*sb, Frame{p.name, -1, "shape"});
    if (!shape.ok()) return shape.status();
    p.shape = shape->ToString();
    out->push_back(std::move(p));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status PackToFile(PackRequest& request, const std::string& path,
                        PackReport* report) {
  AtomicFileSink sink;
  if (absl::Status s = sink.Open(path); !s.ok()) return s;
  std::vector<LiteralSource*> inputs, outputs;
  for (auto& b : request.inputs) inputs.push_back(b.get());
  for (auto& b : request.outputs) outputs.push_back(b.get());
  if (request.format == SnapshotType::kAuto) {
    return absl::InvalidArgumentError(
        "pack: the output format must be decomposed or snapshot (classic)");
  }
  if (request.format == SnapshotType::kDecomposed) {
    DecomposedProducer<AtomicFileSink> w(sink, request.write);
    if (request.progress) w.set_progress(request.progress);
    if (absl::Status s = w.WriteHeader(request.snapshot); !s.ok()) return s;
    if (absl::Status s = w.WriteInputs(inputs); !s.ok()) return s;
    if (!outputs.empty()) {
      if (absl::Status s = w.WriteOutputs(outputs); !s.ok()) return s;
    }
    if (absl::Status s = w.Finish(); !s.ok()) return s;
  } else {
    absl::StatusOr<ClassicPlan> plan =
        PlanClassic(request.snapshot, inputs, outputs);
    if (!plan.ok()) return plan.status();
    if (absl::Status s =
            WriteClassicSnapshot(sink, request.snapshot, plan->arguments,
                                 plan->result, request.progress);
        !s.ok()) {
      return s;
    }
  }
  if (absl::Status s = sink.Commit(); !s.ok()) return s;
  if (report == nullptr) return absl::OkStatus();
  *report = PackReport{};
  report->path = path;
  report->format = request.format;
  report->header_bytes = request.snapshot.size();
  struct stat sb;
  if (::stat(path.c_str(), &sb) == 0) report->file_bytes = sb.st_size;
  if (absl::Status s = ListLiterals(inputs, &report->inputs); !s.ok()) return s;
  return ListLiterals(outputs, &report->outputs);
}

}  // namespace decomposed
