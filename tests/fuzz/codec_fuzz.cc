// The journal's payload codec: DecodePayload for every event kind,
// DecodeSnapshot and DecodeDecision. Whatever decodes must survive a round
// trip, decode(encode(x)) == x, since replay rebuilds state from the encoded
// text; a decoded snapshot must also be something decide() can take, as
// `replay` re-runs decide() over recorded observations.
#include <string>

#include "domain/decision.h"
#include "domain/event.h"
#include "fuzz_support.h"
#include "journal/codec.h"

namespace {
using namespace fk;

// If `text` decodes to x: decode(encode(x)) == x, and encoding x again gives
// the same text. Returns decode(text).
template <class Decode, class Encode>
auto RoundTrip(std::string_view text, Decode decode, Encode encode) -> decltype(decode(text)) {
  auto x = decode(text);
  if (!x.ok()) return x;
  const std::string encoded = encode(*x);
  auto again = decode(encoded);
  FUZZ_CHECK(again.ok());
  FUZZ_CHECK(*again == *x);
  FUZZ_CHECK(encode(*again) == encoded);
  return x;
}

void Payload(domain::EventKind kind, std::string_view text) {
  auto decode = [kind](std::string_view t) { return journal::DecodePayload(kind, t); };
  auto body = RoundTrip(text, decode, &journal::EncodePayload);
  if (body.ok()) FUZZ_CHECK(static_cast<domain::EventKind>(body->index()) == kind);
}

// replay re-runs decide() over recorded snapshots and journals its decision.
void SnapshotThenDecide(std::string_view text) {
  auto s = RoundTrip(text, &journal::DecodeSnapshot, &journal::EncodeSnapshot);
  if (!s.ok()) return;
  const domain::Decision d = domain::decide(*s);
  auto again =
      RoundTrip(journal::EncodeDecision(d), &journal::DecodeDecision, &journal::EncodeDecision);
  FUZZ_CHECK(again.ok() && *again == d);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text = fuzz::AsText(data, size);
  uint8_t selector = 0;
  if (!fuzz::TakeSelector(&text, &selector)) return 0;
  constexpr int kKinds = std::variant_size_v<domain::EventBody>;
  const int choice = selector % (kKinds + 2);
  if (choice < kKinds) {
    Payload(static_cast<domain::EventKind>(choice), text);
  } else if (choice == kKinds) {
    SnapshotThenDecide(text);
  } else {
    (void)RoundTrip(text, &journal::DecodeDecision, &journal::EncodeDecision);
  }
  return 0;
}
