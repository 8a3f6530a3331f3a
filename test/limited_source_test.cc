#include "decomposed/io/limited_source.h"

#include <string>

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
