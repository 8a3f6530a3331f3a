#include "decomposed/box.h"

#include <string>

#include "gtest/gtest.h"

namespace decomposed {
namespace {

std::string Bytes(std::initializer_list<int> b) {
  std::string s;
  for (int x : b) s.push_back(static_cast<char>(x));
  return s;
}

TEST(BoxTest, MinimalGoldenBytes) {
  char buf[kMaxBoxBytes];
  EXPECT_EQ(std::string(buf, EncodeBox(0, buf)), Bytes({0x03, 0x3a, 0x01, 0x00}));
  EXPECT_EQ(std::string(buf, EncodeBox(128, buf)),
            Bytes({0x04, 0x3a, 0x02, 0x80, 0x01}));
}

TEST(BoxTest, ReadsMinimal) {
  std::string b = Bytes({0x04, 0x3a, 0x02, 0x80, 0x01});
  MemorySource src(b);
  absl::StatusOr<uint64_t> v = ReadBox(src, Frame{"count box"});
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(*v, 128u);
  EXPECT_EQ(src.position(), 5u);
}

}  // namespace
}  // namespace decomposed
