// The subjects of the compact journal (table `subjects`, schema 5): the id a
// row names its sandbox, policy or lease by, and a sandbox's base observation
// (the compact form its observation rows are merge patches against). The
// journal keeps the ids of the records in its projections in memory — O(live
// sandboxes + namespaces), loaded from the projections on open — so finding a
// subject costs no lookup; a base, most of a subject's size, is read from the
// table by the batch that writes one of the subject's rows. A subject first
// met in a batch is inserted in the batch's transaction and becomes known only
// when that commits.
#pragma once

#include <compare>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "common/compact_string.h"

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

// What is kept in memory of a subject.
struct KnownSubject {
  int64_t id = 0;
  bool has_base = false;
};

// A subject's identity: namespace, name and uid ("" for a fence), packed.
// (As three std::strings, the namespace and uid on the heap, it was most of
// the 250 bytes a sandbox's subject took at 10,000.) Ordered as the strings.
struct SubjectKey {
  SubjectKey(std::string_view ns, std::string_view name, std::string_view uid)
      : ns(ns), name(name), uid(uid) {}
  bool operator==(const SubjectKey&) const = default;
  std::strong_ordering operator<=>(const SubjectKey&) const = default;
  CompactString ns, name, uid;
};

class Subjects {
 public:
  using Key = SubjectKey;

  // Replaces what is known with the subjects the projections name.
  void Load(SQLite::Database& db);
  const KnownSubject* Find(const Key& key) const;
  void Put(const Key& key, KnownSubject s) { known_[key] = s; }
  void Erase(const Key& key) { known_.erase(key); }
  const std::map<Key, KnownSubject>& all() const { return known_; }

 private:
  std::map<Key, KnownSubject> known_;
};

// The subjects one batch uses: the known ones (their bases read through
// `select_base`: id -> base), and those it inserts (through `insert`:
// namespace, name, uid, base, RETURNING the new id).
class BatchSubjects {
 public:
  BatchSubjects(const Subjects& known, SQLite::Statement& insert, SQLite::Statement& select_base)
      : known_(known), insert_(insert), select_base_(select_base) {}

  // The subject of `e`; a new one takes `first` (if any), observed at
  // `at_ms`, as its base.
  const Subject& For(const domain::Event& e, const domain::Snapshot* first, int64_t at_ms);
  // The id of a subject used in this batch or known before it (0: none).
  int64_t IdOf(const Subjects::Key& key) const;
  // After COMMIT: the new subjects become known, the forgotten ones are dropped.
  void MergeInto(Subjects& known) const;

 private:
  std::string BaseOf(int64_t id);

  const Subjects& known_;
  SQLite::Statement& insert_;
  SQLite::Statement& select_base_;
  std::map<Subjects::Key, Subject> added_;
  std::map<Subjects::Key, Subject> read_;  // known ones this batch used, with their bases
  std::map<Subjects::Key, bool> forgotten_;
};

Subjects::Key KeyOf(const domain::Event& e);

}  // namespace fk::journal
