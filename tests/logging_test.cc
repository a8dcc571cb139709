// Text a log line carries (names, annotations) cannot start a new line or
// send terminal codes (issue 9, newline injection): the configured logger
// escapes in its sink, for text and JSON alike.
#include "cli/logging.h"

#include <gtest/gtest.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <boost/json.hpp>
#include <cstdio>

namespace fk::cli {
namespace {

// A name an attacker chose: a forged second log line, a terminal colour
// code, an 8-bit CSI, a C1 control as UTF-8, a NUL, invalid UTF-8, a DEL.
const std::string kHostile = std::string("sb\n2026-01-01T00:00:00.000Z warn forged\r\x1b[31mred") +
                             "\x9b" + "2J" + "\xC2\x85" + std::string(1, '\0') + "\xFF\xFE" +
                             "\x7F" + "caf\xC3\xA9";

// Logs `text` through the logger SetUpLogging configures, returning the bytes written.
std::string LogThrough(const std::string& format, const std::string& text) {
  auto previous = spdlog::default_logger();
  std::FILE* out = std::tmpfile();
  EXPECT_TRUE(SetUpLogging(format, "info", out).ok());
  spdlog::warn("fail-closed: suspended sandbox ns/{} (reason {})", text, "fence-stale");
  spdlog::default_logger()->flush();
  spdlog::set_default_logger(previous);
  std::string bytes;
  std::rewind(out);
  for (int c; (c = std::fgetc(out)) != EOF;) bytes += static_cast<char>(c);
  std::fclose(out);
  return bytes;
}

bool HasControlBytes(const std::string& line) {
  return std::any_of(line.begin(), line.end() - 1, [](char ch) {
    const auto c = static_cast<unsigned char>(ch);
    return c < 0x20 || c == 0x7F;
  });
}

TEST(Logging, TextLinesStayOneLineWithControlsEscaped) {
  const std::string line = LogThrough("text", kHostile);
  ASSERT_FALSE(line.empty());
  EXPECT_EQ(std::count(line.begin(), line.end(), '\n'), 1) << line;
  EXPECT_EQ(line.back(), '\n');
  EXPECT_FALSE(HasControlBytes(line)) << line;
  EXPECT_EQ(line.find('\x9b'), std::string::npos);  // no raw 8-bit CSI
  EXPECT_NE(line.find("sb\\n2026-01-01"), std::string::npos) << line;
  EXPECT_NE(line.find("forged\\r\\e[31mred\\x9b2J\\u0085\\x00\\xff\\xfe\\x7fcaf\xC3\xA9"),
            std::string::npos)
      << line;
}

TEST(Logging, JsonLinesAreValidUtf8JsonWithControlsEscaped) {
  const std::string line = LogThrough("json", kHostile);
  EXPECT_EQ(std::count(line.begin(), line.end(), '\n'), 1) << line;
  EXPECT_FALSE(HasControlBytes(line)) << line;
  boost::system::error_code ec;
  const boost::json::value v = boost::json::parse(line, ec);  // Boost.JSON checks UTF-8
  ASSERT_FALSE(ec) << ec.message() << ": " << line;
  const std::string msg(v.at("msg").as_string());
  EXPECT_NE(msg.find("sb\\n2026"), std::string::npos) << msg;
  EXPECT_NE(msg.find("\\e[31m"), std::string::npos) << msg;
  EXPECT_EQ(v.at("level").as_string(), "warning");
}

TEST(Logging, EscapeKeepsPrintableUtf8AndEscapesBackslashes) {
  EXPECT_EQ(EscapeForLog("plain text, caf\xC3\xA9 \xE4\xB8\xAD \xF0\x9F\x94\x92"),
            "plain text, caf\xC3\xA9 \xE4\xB8\xAD \xF0\x9F\x94\x92");
  EXPECT_EQ(EscapeForLog("a\\nb"), "a\\\\nb");        // a literal backslash-n is not a newline
  EXPECT_EQ(EscapeForLog("\xC0\xAF"), "\\xc0\\xaf");  // overlong '/'
  EXPECT_EQ(EscapeForLog("\xED\xA0\x80"), "\\xed\\xa0\\x80");  // a surrogate
  EXPECT_EQ(EscapeForLog("\xE4\xB8"), "\\xe4\\xb8");           // truncated
  EXPECT_EQ(EscapeForLog("\t"), "\\t");
}

}  // namespace
}  // namespace fk::cli
