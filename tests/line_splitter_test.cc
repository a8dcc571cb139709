#include "kube/line_splitter.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace fk::kube {
namespace {

struct Collected {
  std::vector<std::pair<std::string, bool>> lines;
  LineSplitter splitter;
  explicit Collected(size_t max_line)
      : splitter(max_line, [this](std::string_view l, bool t) { lines.emplace_back(l, t); }) {}
};

TEST(LineSplitter, SplitsOnNewlinesWhateverTheChunking) {
  const std::string stream = "{\"a\":1}\r\n\n{\"b\":2}\n{\"c\":3}";
  for (size_t chunk = 1; chunk <= stream.size(); ++chunk) {
    Collected c(1024);
    for (size_t i = 0; i < stream.size(); i += chunk) c.splitter.Feed(stream.substr(i, chunk));
    c.splitter.Finish();
    const std::vector<std::pair<std::string, bool>> want{
        {"{\"a\":1}", false}, {"{\"b\":2}", false}, {"{\"c\":3}", false}};
    EXPECT_EQ(c.lines, want) << "chunk " << chunk;
  }
}

// Issue #9: a server that never sends a newline grew the buffer without end.
// An over-long line is delivered cut to the bound, the rest of it dropped, and
// the next line arrives whole.
TEST(LineSplitter, AnOverlongLineIsCutAndTheNextOneSurvives) {
  Collected c(8);
  c.splitter.Feed("0123456789abcdef");  // no newline yet: only 8 bytes are kept
  c.splitter.Feed(std::string(1 << 20, 'x'));
  EXPECT_FALSE(c.splitter.empty());
  c.splitter.Feed("yyy\nnext\n");
  ASSERT_EQ(c.lines.size(), 2u);
  EXPECT_EQ(c.lines[0], std::make_pair(std::string("01234567"), true));
  EXPECT_EQ(c.lines[1], std::make_pair(std::string("next"), false));
  EXPECT_TRUE(c.splitter.empty());
}

TEST(LineSplitter, ALineOfExactlyTheBoundIsWhole) {
  Collected c(4);
  c.splitter.Feed("abcd");
  c.splitter.Feed("\nef\n");
  const std::vector<std::pair<std::string, bool>> want{{"abcd", false}, {"ef", false}};
  EXPECT_EQ(c.lines, want);
}

TEST(LineSplitter, FinishDeliversAnUnterminatedLineButNotTheTailOfACutOne) {
  Collected c(4);
  c.splitter.Feed("ab");
  c.splitter.Finish();
  c.splitter.Feed("abcdefgh");
  c.splitter.Finish();
  const std::vector<std::pair<std::string, bool>> want{{"ab", false}, {"abcd", true}};
  EXPECT_EQ(c.lines, want);
}

}  // namespace
}  // namespace fk::kube
