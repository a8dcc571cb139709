#include "journal/subjects.h"

#include <algorithm>

#include <SQLiteCpp/SQLiteCpp.h>

#include <boost/json/serialize.hpp>

#include "domain/event.h"
#include "journal/compact.h"

namespace fk::journal {

Subjects::Key KeyOf(const domain::Event& e) { return {e.ns, e.name, e.uid}; }

namespace {

bool KeyLess(const Subjects::Entry& a, const Subjects::Entry& b) { return a.first < b.first; }

}  // namespace

void Subjects::Load(SQLite::Database& db) {
  std::vector<Entry> loaded;
  SQLite::Statement sandboxes(db,
                              "SELECT p.namespace, p.name, p.sandbox_uid, s.id, "
                              "s.base IS NOT NULL FROM sandbox_projection AS p "
                              "JOIN subjects AS s ON s.id = p.subject");
  while (sandboxes.executeStep()) {
    loaded.emplace_back(
        Key(sandboxes.getColumn(0).getString(), sandboxes.getColumn(1).getString(),
            sandboxes.getColumn(2).getString()),
        KnownSubject{sandboxes.getColumn(3).getInt64(), sandboxes.getColumn(4).getInt() != 0});
  }
  SQLite::Statement fences(db,
                           "SELECT namespace, policy, subject FROM fence_projection "
                           "WHERE subject IS NOT NULL");
  while (fences.executeStep()) {
    loaded.emplace_back(Key(fences.getColumn(0).getString(), fences.getColumn(1).getString(), ""),
                        KnownSubject{fences.getColumn(2).getInt64(), false});
  }
  // A key is unique in the projections (their primary keys); should one come
  // twice, the last read wins, as it did when each was put into a map.
  std::stable_sort(loaded.begin(), loaded.end(), KeyLess);
  std::vector<Entry> unique;
  unique.reserve(loaded.size());
  for (Entry& e : loaded) {
    if (!unique.empty() && unique.back().first == e.first) {
      unique.back() = std::move(e);
    } else {
      unique.push_back(std::move(e));
    }
  }
  unique.shrink_to_fit();
  known_ = std::move(unique);
}

const KnownSubject* Subjects::Find(const Key& key) const {
  auto it = std::lower_bound(known_.begin(), known_.end(), key,
                             [](const Entry& e, const Key& k) { return e.first < k; });
  return it != known_.end() && it->first == key ? &it->second : nullptr;
}

void Subjects::Merge(const std::vector<Entry>& added, const std::set<Key>& gone) {
  if (added.empty() && gone.empty()) return;
  // Exactly the size needed: a vector that doubles would keep up to half of
  // itself unused, which is what leaving the map was for.
  std::vector<Entry> merged;
  merged.reserve(known_.size() + added.size());
  auto a = added.begin();
  for (const Entry& k : known_) {
    for (; a != added.end() && a->first < k.first; ++a) merged.push_back(*a);
    if (a != added.end() && a->first == k.first) continue;  // replaced by the added one
    merged.push_back(k);
  }
  merged.insert(merged.end(), a, added.end());
  std::erase_if(merged, [&](const Entry& e) { return gone.contains(e.first); });
  merged.shrink_to_fit();
  known_ = std::move(merged);
}

const Subject& BatchSubjects::For(const domain::Event& e, const domain::Snapshot* first,
                                  int64_t at_ms) {
  const Subjects::Key key = KeyOf(e);
  if (e.kind() == domain::EventKind::kForgotten) forgotten_.insert(key);
  if (auto it = added_.find(key); it != added_.end()) return it->second;
  if (auto it = read_.find(key); it != read_.end()) return it->second;
  if (const KnownSubject* k = known_.Find(key))
    return read_[key] = Subject{k->id, k->has_base ? BaseOf(k->id) : ""};
  Subject s;
  if (first) s.base = boost::json::serialize(compact::Compact(*first, at_ms));
  insert_.reset();
  insert_.clearBindings();
  insert_.bind(1, e.ns);
  insert_.bind(2, e.name);
  insert_.bind(3, e.uid);
  if (!s.base.empty()) insert_.bind(4, s.base);
  insert_.executeStep();  // INSERT ... RETURNING id
  s.id = insert_.getColumn(0).getInt64();
  insert_.reset();
  return added_[key] = std::move(s);
}

std::string BatchSubjects::BaseOf(int64_t id) {
  select_base_.reset();
  select_base_.bind(1, id);
  std::string base = select_base_.executeStep() ? select_base_.getColumn(0).getString() : "";
  select_base_.reset();  // a statement left on a row would hold a read transaction open
  return base;
}

int64_t BatchSubjects::IdOf(const Subjects::Key& key) const {
  if (auto it = added_.find(key); it != added_.end()) return it->second.id;
  const KnownSubject* s = known_.Find(key);
  return s ? s->id : 0;
}

void BatchSubjects::MergeInto(Subjects& known) const {
  std::vector<Subjects::Entry> added;
  added.reserve(added_.size());
  for (const auto& [key, s] : added_) added.emplace_back(key, KnownSubject{s.id, !s.base.empty()});
  known.Merge(added, forgotten_);
}

}  // namespace fk::journal
