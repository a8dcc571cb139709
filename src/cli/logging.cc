#include "cli/logging.h"

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/base_sink.h>
#include <spdlog/spdlog.h>

#include <boost/json.hpp>
#include <mutex>

#include "common/clock.h"

namespace fk::cli {
namespace {

void AppendHex(std::string& out, const char* prefix, unsigned value, int digits) {
  static const char* kHex = "0123456789abcdef";
  out += prefix;
  for (int shift = 4 * (digits - 1); shift >= 0; shift -= 4) out += kHex[(value >> shift) & 15];
}

// The length of the valid UTF-8 sequence at s[i] (1-4), or 0 if there is none
// (a stray continuation byte, an overlong form, a surrogate, beyond U+10FFFF).
size_t Utf8Length(std::string_view s, size_t i, unsigned* code_point) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[i + k]); };
  const unsigned lead = b(0);
  size_t n;
  unsigned cp, min;
  if (lead < 0x80) return *code_point = lead, 1;
  if ((lead & 0xE0) == 0xC0)
    n = 2, cp = lead & 0x1F, min = 0x80;
  else if ((lead & 0xF0) == 0xE0)
    n = 3, cp = lead & 0x0F, min = 0x800;
  else if ((lead & 0xF8) == 0xF0)
    n = 4, cp = lead & 0x07, min = 0x10000;
  else
    return 0;
  if (i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((b(k) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (b(k) & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  *code_point = cp;
  return n;
}

void AppendControl(std::string& out, unsigned char c) {
  switch (c) {
    case '\n':
      out += "\\n";
      break;
    case '\r':
      out += "\\r";
      break;
    case '\t':
      out += "\\t";
      break;
    case 0x1B:
      out += "\\e";
      break;
    default:
      AppendHex(out, "\\x", c, 2);
  }
}

// A copy of `msg` whose payload is `escaped` (which must outlive the copy).
spdlog::details::log_msg Escaped(const spdlog::details::log_msg& msg, std::string& escaped) {
  escaped = EscapeForLog(std::string_view(msg.payload.data(), msg.payload.size()));
  spdlog::details::log_msg copy = msg;
  copy.payload = spdlog::string_view_t(escaped.data(), escaped.size());
  return copy;
}

// Text: the pattern's line, the message escaped first.
class TextSink final : public spdlog::sinks::base_sink<std::mutex> {
 public:
  explicit TextSink(std::FILE* out) : out_(out) {}

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    std::string escaped;
    spdlog::memory_buf_t line;
    formatter_->format(Escaped(msg, escaped), line);
    std::fwrite(line.data(), 1, line.size(), out_);
  }
  void flush_() override { std::fflush(out_); }

 private:
  std::FILE* out_;
};

// One JSON object per line. Boost.JSON escapes what JSON requires; the
// message is escaped first so the line is valid UTF-8 without terminal codes.
class JsonSink final : public spdlog::sinks::base_sink<std::mutex> {
 public:
  explicit JsonSink(std::FILE* out) : out_(out) {}

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    const auto level = spdlog::level::to_string_view(msg.level);
    boost::json::object line{{"time", FormatRfc3339(msg.time)},
                             {"level", std::string(level.data(), level.size())},
                             {"msg", EscapeForLog({msg.payload.data(), msg.payload.size()})}};
    const std::string text = boost::json::serialize(line) + "\n";
    std::fwrite(text.data(), 1, text.size(), out_);
  }
  void flush_() override { std::fflush(out_); }

 private:
  std::FILE* out_;
};

}  // namespace

std::string EscapeForLog(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    unsigned cp = 0;
    const size_t n = Utf8Length(text, i, &cp);
    if (n == 0) {
      AppendHex(out, "\\x", c, 2);  // not UTF-8: shown, never passed through
      ++i;
      continue;
    }
    if (cp < 0x20 || cp == 0x7F)
      AppendControl(out, c);
    else if (cp >= 0x80 && cp <= 0x9F)
      AppendHex(out, "\\u", cp, 4);  // C1: 8-bit CSI and friends
    else if (cp == '\\')
      out += "\\\\";
    else
      out.append(text.substr(i, n));
    i += n;
  }
  return out;
}

Status SetUpLogging(const std::string& format, const std::string& level, std::FILE* out) {
  const auto lvl = spdlog::level::from_str(level);
  if (lvl == spdlog::level::off && level != "off") {
    return Status::InvalidArgument("--log-level must be trace, debug, info, warn or error, not '" +
                                   level + "'");
  }
  std::shared_ptr<spdlog::logger> logger;
  if (format == "json") {
    logger = std::make_shared<spdlog::logger>("fencekeeper", std::make_shared<JsonSink>(out));
  } else if (format == "text") {
    logger = std::make_shared<spdlog::logger>("fencekeeper", std::make_shared<TextSink>(out));
    logger->set_pattern("%Y-%m-%dT%H:%M:%S.%eZ %l %v", spdlog::pattern_time_type::utc);
  } else {
    return Status::InvalidArgument("--log-format must be text or json, not '" + format + "'");
  }
  logger->set_level(lvl);
  logger->flush_on(spdlog::level::warn);
  spdlog::set_default_logger(logger);
  return Status::Ok();
}

}  // namespace fk::cli
