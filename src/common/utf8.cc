#include "common/utf8.h"

namespace fk {
namespace {

bool IsContinuationByte(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

}  // namespace

size_t Utf8SequenceLength(std::string_view s, size_t i, unsigned* code_point) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[i + k]); };
  const unsigned lead = b(0);
  size_t n = 0;
  unsigned cp = 0, min = 0;
  if (lead < 0x80) return *code_point = lead, 1;
  if ((lead & 0xE0) == 0xC0) {
    n = 2, cp = lead & 0x1F, min = 0x80;
  } else if ((lead & 0xF0) == 0xE0) {
    n = 3, cp = lead & 0x0F, min = 0x800;
  } else if ((lead & 0xF8) == 0xF0) {
    n = 4, cp = lead & 0x07, min = 0x10000;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((b(k) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (b(k) & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  *code_point = cp;
  return n;
}

bool IsValidUtf8(std::string_view s) {
  unsigned cp = 0;
  for (size_t i = 0; i < s.size();) {
    const size_t n = Utf8SequenceLength(s, i, &cp);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

std::string ValidUtf8(std::string_view s) {
  if (IsValidUtf8(s)) return std::string(s);  // the common case: one pass, one copy
  std::string out;
  out.reserve(s.size() + 8);
  unsigned cp = 0;
  for (size_t i = 0; i < s.size();) {
    const size_t n = Utf8SequenceLength(s, i, &cp);
    if (n == 0) {
      out += "\xEF\xBF\xBD";  // U+FFFD REPLACEMENT CHARACTER
      ++i;
    } else {
      out.append(s, i, n);
      i += n;
    }
  }
  return out;
}

std::string_view Utf8Prefix(std::string_view text, size_t max_bytes) {
  if (text.size() <= max_bytes) return text;
  // A sequence is at most 4 bytes: back up over at most 3 continuation bytes
  // to the byte that starts the one the cut would split.
  size_t cut = max_bytes;
  for (int back = 0; back < 3 && cut > 0 && IsContinuationByte(text[cut]); ++back) --cut;
  if (IsContinuationByte(text[cut])) cut = max_bytes;  // not UTF-8 here: any cut will do
  return text.substr(0, cut);
}

}  // namespace fk
