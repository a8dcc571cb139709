#include "journal/subjects.h"

#include <SQLiteCpp/SQLiteCpp.h>

#include <boost/json/serialize.hpp>

#include "common/namespaced_name.h"
#include "domain/event.h"
#include "journal/compact.h"

namespace fk::journal {

Subjects::Key KeyOf(const domain::Event& e) { return {e.ns, e.name, e.uid}; }

uint64_t Subjects::HashOf(const Key& key) {
  return HashOfName(key.ns.str(), key.name.str()) * 1000003u ^
         std::hash<std::string>()(key.uid.str());
}

void Subjects::Load(SQLite::Database& db) {
  known_ = {};
  SQLite::Statement sandboxes(db,
                              "SELECT p.namespace, p.name, p.sandbox_uid, s.id, "
                              "s.base IS NOT NULL FROM sandbox_projection AS p "
                              "JOIN subjects AS s ON s.id = p.subject");
  while (sandboxes.executeStep()) {
    Put({sandboxes.getColumn(0).getString(), sandboxes.getColumn(1).getString(),
         sandboxes.getColumn(2).getString()},
        {sandboxes.getColumn(3).getInt64(), sandboxes.getColumn(4).getInt() != 0});
  }
  SQLite::Statement fences(db,
                           "SELECT namespace, policy, subject FROM fence_projection "
                           "WHERE subject IS NOT NULL");
  while (fences.executeStep()) {
    Put({fences.getColumn(0).getString(), fences.getColumn(1).getString(), ""},
        {fences.getColumn(2).getInt64(), false});
  }
}

std::optional<KnownSubject> Subjects::Find(const Key& key, const Identity& identity) const {
  std::optional<KnownSubject> found;
  known_.ForEach(hash_(key), [&](int64_t v) {
    if (!found && identity(Unpacked(v).id) == key) found = Unpacked(v);
  });
  return found;
}

void Subjects::Put(const Key& key, KnownSubject s) { known_.Insert(hash_(key), Packed(s)); }

bool Subjects::Erase(const Key& key, int64_t id) {
  const uint64_t h = hash_(key);
  std::optional<int64_t> entry;
  known_.ForEach(h, [&](int64_t v) {
    if (Unpacked(v).id == id) entry = v;
  });
  return entry && known_.Erase(h, *entry);
}

std::vector<int64_t> Subjects::Ids() const {
  std::vector<int64_t> ids;
  ids.reserve(known_.size());
  known_.ForEachEntry([&](uint64_t, int64_t v) { ids.push_back(Unpacked(v).id); });
  return ids;
}

const Subject& BatchSubjects::For(const domain::Event& e, const domain::Snapshot* first,
                                  int64_t at_ms) {
  const Subjects::Key key = KeyOf(e);
  if (e.kind() == domain::EventKind::kForgotten) forgotten_[key] = true;
  if (auto it = added_.find(key); it != added_.end()) return it->second;
  if (auto it = read_.find(key); it != read_.end()) return it->second;
  if (auto known = FindKnown(key)) {
    auto& [k, row] = *known;
    return read_[key] = Subject{k.id, k.has_base ? std::move(row.base) : ""};
  }
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

BatchSubjects::Row BatchSubjects::ReadRow(int64_t id) {
  select_row_.reset();
  select_row_.bind(1, id);
  Row row;
  if (select_row_.executeStep()) {
    row.key = {select_row_.getColumn(0).getString(), select_row_.getColumn(1).getString(),
               select_row_.getColumn(2).getString()};
    row.base = select_row_.getColumn(3).getString();
  }
  select_row_.reset();  // a statement left on a row would hold a read transaction open
  return row;
}

std::optional<std::pair<KnownSubject, BatchSubjects::Row>> BatchSubjects::FindKnown(
    const Subjects::Key& key) {
  std::optional<Row> row;
  auto known = known_.Find(key, [&](int64_t id) {
    row = ReadRow(id);
    return row->key;
  });
  if (!known) return std::nullopt;
  return std::pair{*known, std::move(*row)};
}

int64_t BatchSubjects::IdOf(const Subjects::Key& key) {
  if (auto it = added_.find(key); it != added_.end()) return it->second.id;
  if (auto it = read_.find(key); it != read_.end()) return it->second.id;
  auto known = FindKnown(key);
  return known ? known->first.id : 0;
}

void BatchSubjects::MergeInto(Subjects& known) const {
  for (const auto& [key, s] : added_) known.Put(key, {s.id, !s.base.empty()});
  for (const auto& [key, gone] : forgotten_) {
    // For() met the key first, so it is in added_ or read_.
    const auto added = added_.find(key);
    const auto read = read_.find(key);
    if (added != added_.end()) known.Erase(key, added->second.id);
    if (read != read_.end()) known.Erase(key, read->second.id);
  }
}

}  // namespace fk::journal
