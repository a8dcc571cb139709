// The subjects of the compact journal (table `subjects`, schema 5): the id a
// row names its sandbox, policy or lease by, and a sandbox's base observation
// (the compact form its observation rows are merge patches against). The
// journal keeps those of the records in its projections in memory — O(live
// sandboxes + namespaces), loaded from the projections on open — so a row
// costs no lookup; a subject first met in a batch is inserted in the batch's
// transaction and becomes known only when that commits.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <tuple>

namespace SQLite {
class Database;
class Statement;
}  // namespace SQLite

namespace fk::domain {
struct Event;
struct Snapshot;
}  // namespace fk::domain

namespace fk::journal {

struct Subject {
  int64_t id = 0;
  std::string base;  // compact JSON of the first observation; "" = none
};

class Subjects {
 public:
  using Key = std::tuple<std::string, std::string, std::string>;  // namespace, name, uid

  // Replaces what is known with the subjects the projections name.
  void Load(SQLite::Database& db);
  const Subject* Find(const Key& key) const;
  void Put(const Key& key, Subject s) { known_[key] = std::move(s); }
  void Erase(const Key& key) { known_.erase(key); }
  const std::map<Key, Subject>& all() const { return known_; }

 private:
  std::map<Key, Subject> known_;
};

// The subjects one batch uses: the known ones, and those it inserts (through
// `insert`: namespace, name, uid, base, RETURNING the new id).
class BatchSubjects {
 public:
  BatchSubjects(const Subjects& known, SQLite::Statement& insert)
      : known_(known), insert_(insert) {}

  // The subject of `e`; a new one takes `first` (if any), observed at
  // `at_ms`, as its base.
  const Subject& For(const domain::Event& e, const domain::Snapshot* first, int64_t at_ms);
  // The id of a subject used in this batch or known before it (0: none).
  int64_t IdOf(const Subjects::Key& key) const;
  // After COMMIT: the new subjects become known, the forgotten ones are dropped.
  void MergeInto(Subjects& known) const;

 private:
  const Subjects& known_;
  SQLite::Statement& insert_;
  std::map<Subjects::Key, Subject> added_;
  std::map<Subjects::Key, bool> forgotten_;
};

Subjects::Key KeyOf(const domain::Event& e);

}  // namespace fk::journal
