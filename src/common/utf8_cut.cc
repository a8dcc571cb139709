#include "common/utf8_cut.h"

namespace fk {
namespace {

bool IsContinuationByte(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

}  // namespace

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
