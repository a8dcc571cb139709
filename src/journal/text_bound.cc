#include "journal/text_bound.h"

#include <variant>

#include "common/utf8_cut.h"

namespace fk::journal {
using namespace fk::domain;

namespace {

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
  // Never split a multi-byte UTF-8 sequence.
  const size_t cut = Utf8Prefix(text, max_bytes > kMarkerRoom ? max_bytes - kMarkerRoom : 0).size();
  const size_t dropped = text.size() - cut;
  text.resize(cut);
  text += "… [truncated, " + std::to_string(dropped) + " bytes dropped]";
  return text;
}

void BoundEventText(Event& event) { std::visit(Bounder{}, event.body); }

}  // namespace fk::journal
