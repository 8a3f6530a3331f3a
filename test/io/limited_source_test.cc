#include "decomposed/io/limited_source.h"

#include <string>

#include "decomposed/io/bounded.h"
#include "decomposed/testing/fault_source.h"
#include "gtest/gtest.h"

namespace decomposed {
namespace {

TEST(LimitedSourceTest, EndsCleanlyAtItsEndWhileTheInnerSourceGoesOn) {
  std::string data = "0123456789";
  MemorySource inner(data);
  ASSERT_TRUE(inner.Skip(2));
  LimitedSource view(inner, 6);
  EXPECT_EQ(view.start(), 2u);
  EXPECT_EQ(view.position(), 2u);
  EXPECT_EQ(*view.size(), 6u);
  EXPECT_EQ(view.available(), 4u);
  EXPECT_EQ(std::string(view.cursor(), view.available()), "2345");
  EXPECT_FALSE(view.Pull(5));
  EXPECT_TRUE(view.status().ok());
  char buf[8];
  EXPECT_TRUE(view.Read(buf, 3));
  EXPECT_EQ(std::string(buf, 3), "234");
  EXPECT_FALSE(view.Read(buf, 2));  // one byte left
  EXPECT_EQ(view.position(), 6u);
  EXPECT_EQ(inner.position(), 6u);  // never past the end
  EXPECT_EQ(view.remaining(), 0u);
}

TEST(LimitedSourceTest, SeeksOnlyInsideTheView) {
  std::string data = "0123456789";
  MemorySource inner(data);
  ASSERT_TRUE(inner.Skip(3));
  LimitedSource view(inner, 7);
  EXPECT_FALSE(view.Seek(2));
  EXPECT_FALSE(view.Seek(8));
  EXPECT_TRUE(view.Seek(7));
  EXPECT_EQ(view.available(), 0u);
  EXPECT_TRUE(view.Seek(4));
  auto v = view.ReadView(3);
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(*v, "456");
  EXPECT_FALSE(view.ReadView(1).has_value());
  EXPECT_FALSE(view.Skip(1));
}

TEST(LimitedSourceTest, ReportsTheInnerSizeWhenTheFileIsShorterThanTheView) {
  std::string data = "0123";
  MemorySource inner(data);
  LimitedSource view(inner, 100);
  EXPECT_EQ(*view.size(), 4u);
}

TEST(LimitedSourceTest, UnknownInnerSizeStaysUnknown) {
  // A pipe-like source: the view must not claim its declared end as held,
  // or ReadToString would allocate the declared length up front.
  std::string data = "0123456789";
  testing::FaultOptions o;
  o.known_size = false;
  o.seekable = false;
  testing::FaultSource inner(data, o);
  LimitedSource view(inner, uint64_t{1} << 40);
  EXPECT_FALSE(view.size().has_value());
  EXPECT_EQ(view.remaining(), uint64_t{1} << 40);
  std::string out;
  absl::Status s = ReadToString(view, uint64_t{1} << 40, Frame{"x"}, &out);
  EXPECT_EQ(s.code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(s.message(),
            "x: declared 1099511627776 bytes but 10 remain (at byte 0)");
  EXPECT_LT(out.capacity(), size_t{1} << 20);
}

TEST(LimitedSourceTest, BufferedInnerSourceWithOneByteReads) {
  std::string data(10000, 'x');
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>(i % 251);
  testing::FaultOptions o;
  o.max_read = 1;
  testing::FaultSource inner(data, o);
  ASSERT_TRUE(inner.Skip(100));
  LimitedSource view(inner, 5100);
  std::string got;
  while (view.available() > 0 || view.Pull(1)) {
    got.append(view.cursor(), view.available());
    view.Advance(view.available());
  }
  EXPECT_TRUE(view.status().ok());
  EXPECT_EQ(got, data.substr(100, 5000));
  EXPECT_EQ(inner.position(), 5100u);
}

}  // namespace
}  // namespace decomposed
