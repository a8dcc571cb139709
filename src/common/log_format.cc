// How a record becomes text: escaping, redaction, JSON and logfmt lines.
#include <cctype>

#include "common/clock.h"
#include "common/log.h"
#include "common/utf8.h"

namespace fk::log {
namespace {

void AppendHex(std::string& out, const char* prefix, unsigned value, int digits) {
  static const char* kHex = "0123456789abcdef";
  out += prefix;
  for (int shift = 4 * (digits - 1); shift >= 0; shift -= 4) out += kHex[(value >> shift) & 15];
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

// Printable, one line, no credential: what every value goes through.
std::string Clean(std::string_view text) { return EscapeForLog(RedactSecrets(text)); }

// After Clean there are no controls left, so JSON needs only these two.
void AppendJsonString(std::string& out, std::string_view clean) {
  out += '"';
  for (char c : clean) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  out += '"';
}

// logfmt quotes a value that is empty or holds a space, '=' or '"'.
void AppendLogfmtValue(std::string& out, std::string_view clean) {
  const bool quote = clean.empty() || clean.find_first_of(" =\"") != std::string_view::npos;
  if (!quote) {
    out += clean;
    return;
  }
  AppendJsonString(out, clean);  // the same rule: \" and \\ inside quotes
}

std::string ValueText(const Field& f) {
  if (const auto* s = std::get_if<std::string>(&f.value)) return *s;
  if (const auto* i = std::get_if<int64_t>(&f.value)) return std::to_string(*i);
  return std::get<bool>(f.value) ? "true" : "false";
}

void AppendLogfmtFields(std::string& out, const Record& r) {
  for (const Field& f : r.fields) {
    out += ' ';
    out += f.key;
    out += '=';
    AppendLogfmtValue(out, Clean(ValueText(f)));
  }
}

std::string JsonLine(const Record& r, std::chrono::system_clock::time_point ts) {
  std::string out =
      "{\"ts\":\"" + FormatRfc3339(ts) + "\",\"level\":\"" + ToString(r.level) + "\",\"msg\":";
  AppendJsonString(out, Clean(r.msg));
  for (const Field& f : r.fields) {
    out += ',';
    AppendJsonString(out, Clean(f.key));
    out += ':';
    if (std::holds_alternative<std::string>(f.value))
      AppendJsonString(out, Clean(std::get<std::string>(f.value)));
    else
      out += ValueText(f);  // a number or true/false, as JSON has them
  }
  return out + "}\n";
}

std::string TextLine(const Record& r, std::chrono::system_clock::time_point ts) {
  std::string out = "ts=" + FormatRfc3339(ts) + " level=" + ToString(r.level) + " msg=";
  AppendLogfmtValue(out, Clean(r.msg));
  AppendLogfmtFields(out, r);
  return out + "\n";
}

bool StartsWithBearer(std::string_view text, size_t i) {
  static constexpr std::string_view kBearer = "bearer ";
  if (text.size() - i < kBearer.size()) return false;
  for (size_t k = 0; k < kBearer.size(); ++k)
    if (std::tolower(static_cast<unsigned char>(text[i + k])) != kBearer[k]) return false;
  return true;
}

bool EndsCredential(char c) {
  return std::isspace(static_cast<unsigned char>(c)) || c == '"' || c == '\'' || c == ',' ||
         c == ';';
}

}  // namespace

std::string EscapeForLog(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    unsigned cp = 0;
    const size_t n = Utf8SequenceLength(text, i, &cp);
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

std::string RedactSecrets(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    if (!StartsWithBearer(text, i)) {
      out += text[i++];
      continue;
    }
    out.append(text.substr(i, 7));  // "Bearer " as written
    i += 7;
    const size_t start = i;
    while (i < text.size() && !EndsCredential(text[i])) ++i;
    if (i > start) out += "[redacted]";
  }
  return out;
}

std::string MessageWithFields(const Record& record) {
  std::string out = Clean(record.msg);
  AppendLogfmtFields(out, record);
  return out;
}

std::string FormatLine(Format format, const Record& record,
                       std::chrono::system_clock::time_point ts) {
  return format == Format::kJson ? JsonLine(record, ts) : TextLine(record, ts);
}

std::optional<std::string> Record::Get(std::string_view key) const {
  for (const Field& f : fields)
    if (f.key == key) return ValueText(f);
  return std::nullopt;
}

}  // namespace fk::log
