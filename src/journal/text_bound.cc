#include "journal/text_bound.h"

#include <set>
#include <string>
#include <variant>

#include "common/utf8.h"

namespace fk::journal {
using namespace fk::domain;

namespace {

// Text the journal stores is valid UTF-8, whatever reached it: Boost.JSON
// refuses invalid UTF-8 when the row is read back (SQLite's json_valid does
// not), and a journal that cannot be read back cannot be opened. The kube
// edge already cleans what it parses (kube/objects.cc); this is the guarantee.
void Valid(std::string& s) {
  if (!IsValidUtf8(s)) s = ValidUtf8(s);
}
void Valid(std::optional<std::string>& s) {
  if (s) Valid(*s);
}
void Valid(PolicyObservation& p) { Valid(p.uid); }
void Valid(PodObservation& p) { Valid(p.uid); }
void Valid(Snapshot& s) {
  auto& sb = s.sandbox;
  for (std::string* t : {&sb.ns, &sb.name, &sb.uid, &sb.bootstrap_phase}) Valid(*t);
  for (std::optional<std::string>* t : {&sb.fence_uid, &sb.workload_uid, &sb.supervisor_uid})
    Valid(*t);
  Valid(s.workload_fence);
  Valid(s.supervisor_fence);
  Valid(s.workload_pod);
  Valid(s.supervisor_pod);
  // Names and uids of API objects: bounded by the API server, cleaned here.
  for (WideningPolicy& p : s.bypass) {
    Valid(p.name);
    Valid(p.uid);
  }
}
std::string Bounded(std::string& s) {
  Valid(s);
  return BoundText(std::move(s));
}

struct Bounder {
  void operator()(FenceObserved& f) const {
    Valid(f.policy);
    Valid(f.observation);
  }
  void operator()(SandboxObserved& o) const { Valid(o.snapshot); }
  void operator()(Decided& d) const {
    std::string note = d.decision.note.str();
    d.decision.note = Bounded(note);
  }
  void operator()(SuspendIntent& i) const {
    i.note = Bounded(i.note);
    Valid(i.resource_version);
    Valid(i.writer);
  }
  void operator()(SuspendOutcome& o) const { o.detail = Bounded(o.detail); }
  void operator()(Leadership& l) const { l.identity = Bounded(l.identity); }
  void operator()(Forgotten& f) const { f.detail = Bounded(f.detail); }
  void operator()(Pruned& p) const { Valid(p.archive); }
  void operator()(WriterStarted& w) const {
    Valid(w.writer);
    std::set<std::string> namespaces;
    for (std::string ns : w.enforcement.dry_run_namespaces) {
      Valid(ns);
      namespaces.insert(std::move(ns));
    }
    w.enforcement.dry_run_namespaces = std::move(namespaces);
  }
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

void BoundEventText(Event& event) {
  for (std::string* t : {&event.ns, &event.name, &event.uid}) Valid(*t);
  std::visit(Bounder{}, event.body);
}

}  // namespace fk::journal
