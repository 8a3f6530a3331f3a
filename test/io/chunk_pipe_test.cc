#include "decomposed/io/chunk_pipe.h"

#include <string>

#include "decomposed/io/byte_sink.h"
#include "gtest/gtest.h"

namespace decomposed {
namespace {

static_assert(ByteSink<ChunkPipe>);

std::string Pattern(size_t n) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>((i * 7 + i / 251) & 0xff);
  return s;
}

TEST(ChunkPipeTest, MovesMoreThanItsCapacityInOddChunks) {
  const std::string data = Pattern(1 << 20);
  PipedProducer p(
      [&](ChunkPipe& out) {
        for (size_t at = 0; at < data.size(); at += 777) {
          if (!out.Write(std::string_view(data).substr(at, 777))) {
            return absl::CancelledError("reader gone");
          }
        }
        return absl::OkStatus();
      },
      /*capacity=*/1000);
  std::string got;
  char buf[313];
  while (p.pipe().Read(buf, sizeof buf)) got.append(buf, sizeof buf);
  // The tail shorter than 313 bytes is not returned by a 313-byte Read.
  EXPECT_TRUE(p.Join().ok());
  EXPECT_EQ(got, data.substr(0, got.size()));
  EXPECT_EQ(got.size(), data.size() / 313 * 313);
}

TEST(ChunkPipeTest, TheProducersErrorReachesTheReader) {
  PipedProducer p([](ChunkPipe& out) {
    out.Write("abc");
    return absl::DataLossError("broken literal");
  });
  char buf[8];
  EXPECT_TRUE(p.pipe().Read(buf, 3));
  EXPECT_FALSE(p.pipe().Read(buf, 1));
  EXPECT_EQ(p.Join().code(), absl::StatusCode::kDataLoss);
}

TEST(ChunkPipeTest, AnAbandonedReaderStopsABlockedProducer) {
  bool stopped = false;
  {
    PipedProducer p(
        [&](ChunkPipe& out) {
          std::string big(1 << 16, 'x');
          while (out.Write(big)) {
          }
          stopped = true;
          return absl::CancelledError("reader gone");
        },
        /*capacity=*/64);
    char buf[10];
    EXPECT_TRUE(p.pipe().Read(buf, 10));
  }  // destructor closes the reader and joins
  EXPECT_TRUE(stopped);
}

}  // namespace
}  // namespace decomposed
