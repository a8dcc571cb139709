#include "common/heap_text.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>

namespace fk {
namespace {

TEST(HeapTextTest, EmptyTextTakesNoHeapAndReadsEmpty) {
  EXPECT_EQ(sizeof(HeapText), sizeof(void*));
  const HeapText none, from_empty = std::string();
  EXPECT_TRUE(none.empty());
  EXPECT_TRUE(from_empty.empty());
  EXPECT_EQ(none.view(), "");
  EXPECT_TRUE(none == from_empty);
}

TEST(HeapTextTest, AppendsCopiesAndComparesAsText) {
  HeapText note;
  note += "";  // appending nothing keeps it empty, with no heap
  EXPECT_TRUE(note.empty());
  note += "fence generation 1 -> 2";
  note += "; dry run";
  EXPECT_EQ(note, "fence generation 1 -> 2; dry run");
  EXPECT_EQ(note, std::string("fence generation 1 -> 2; dry run"));
  const HeapText copy = note;
  note = "other";
  EXPECT_EQ(copy.str(), "fence generation 1 -> 2; dry run");
  EXPECT_FALSE(copy == note);
  std::ostringstream out;
  out << copy;
  EXPECT_EQ(out.str(), copy.str());
  const std::string_view as_text = copy;
  EXPECT_EQ(as_text, copy.view());
}

}  // namespace
}  // namespace fk
