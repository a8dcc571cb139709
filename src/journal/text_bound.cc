#include "journal/text_bound.h"

#include <variant>

namespace fk::journal {
using namespace fk::domain;

namespace {

bool IsContinuationByte(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

struct Bounder {
  void operator()(FenceObserved&) const {}
  void operator()(SandboxObserved&) const {}
  void operator()(Decided& d) const { d.decision.note = BoundText(std::move(d.decision.note)); }
  void operator()(SuspendIntent& i) const { i.note = BoundText(std::move(i.note)); }
  void operator()(SuspendOutcome& o) const { o.detail = BoundText(std::move(o.detail)); }
  void operator()(Leadership& l) const { l.identity = BoundText(std::move(l.identity)); }
  void operator()(Forgotten& f) const { f.detail = BoundText(std::move(f.detail)); }
};

}  // namespace

std::string BoundText(std::string text, size_t max_bytes) {
  if (text.size() <= max_bytes) return text;
  // The marker's length depends on the count it prints; 20 digits cover any size_t.
  constexpr size_t kMarkerRoom = sizeof("… [truncated,  bytes dropped]") + 20;
  size_t cut = max_bytes > kMarkerRoom ? max_bytes - kMarkerRoom : 0;
  // Never split a multi-byte UTF-8 sequence: back up to the start of one.
  while (cut > 0 && IsContinuationByte(text[cut])) --cut;
  const size_t dropped = text.size() - cut;
  text.resize(cut);
  text += "… [truncated, " + std::to_string(dropped) + " bytes dropped]";
  return text;
}

void BoundEventText(Event& event) { std::visit(Bounder{}, event.body); }

}  // namespace fk::journal
