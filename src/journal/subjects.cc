#include "journal/subjects.h"

#include <SQLiteCpp/SQLiteCpp.h>

#include <boost/json/serialize.hpp>

#include "domain/event.h"
#include "journal/compact.h"

namespace fk::journal {

Subjects::Key KeyOf(const domain::Event& e) { return {e.ns, e.name, e.uid}; }

void Subjects::Load(SQLite::Database& db) {
  known_.clear();
  SQLite::Statement sandboxes(db,
                              "SELECT p.namespace, p.name, p.sandbox_uid, s.id, "
                              "s.base IS NOT NULL FROM sandbox_projection AS p "
                              "JOIN subjects AS s ON s.id = p.subject");
  while (sandboxes.executeStep()) {
    known_[{sandboxes.getColumn(0).getString(), sandboxes.getColumn(1).getString(),
            sandboxes.getColumn(2).getString()}] = {sandboxes.getColumn(3).getInt64(),
                                                    sandboxes.getColumn(4).getInt() != 0};
  }
  SQLite::Statement fences(db,
                           "SELECT namespace, policy, subject FROM fence_projection "
                           "WHERE subject IS NOT NULL");
  while (fences.executeStep()) {
    known_[{fences.getColumn(0).getString(), fences.getColumn(1).getString(), ""}] = {
        fences.getColumn(2).getInt64(), false};
  }
}

const KnownSubject* Subjects::Find(const Key& key) const {
  auto it = known_.find(key);
  return it == known_.end() ? nullptr : &it->second;
}

const Subject& BatchSubjects::For(const domain::Event& e, const domain::Snapshot* first,
                                  int64_t at_ms) {
  const Subjects::Key key = KeyOf(e);
  if (e.kind() == domain::EventKind::kForgotten) forgotten_[key] = true;
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
  for (const auto& [key, s] : added_) known.Put(key, {s.id, !s.base.empty()});
  for (const auto& [key, gone] : forgotten_) known.Erase(key);
}

}  // namespace fk::journal
