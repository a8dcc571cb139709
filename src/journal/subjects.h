// The subjects of the compact journal (table `subjects`, schema 5): the id a
// row names its sandbox, policy or lease by, and a sandbox's base observation
// (the compact form its observation rows are merge patches against). The
// journal keeps the ids of the records in its projections in memory — O(live
// sandboxes + namespaces), loaded from the projections on open — so finding a
// subject costs no lookup; a base, most of a subject's size, is read from the
// table by the batch that writes one of the subject's rows. A subject first
// met in a batch is inserted in the batch's transaction and becomes known only
// when that commits.
//
// Memory: what is known is a flat table from a hash of the key to the id
// (about 26 bytes a sandbox at 10,000; a map node holding the key was 128).
// A hash only names candidates: the batch checks a candidate's key against
// the row it reads anyway (the base is in the same row), so two keys of one
// hash never share a subject.
#pragma once

#include <compare>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/compact_string.h"
#include "common/hash_multimap.h"

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
  bool operator==(const KnownSubject&) const = default;
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
  // The hash the table is keyed by; a test passes one that makes every key
  // collide.
  using HashFn = uint64_t (*)(const Key&);
  static uint64_t HashOf(const Key& key);
  // The key a subject's id names (its row in `subjects`).
  using Identity = std::function<Key(int64_t id)>;

  explicit Subjects(HashFn hash = &HashOf) : hash_(hash) {}

  // Replaces what is known with the subjects the projections name.
  void Load(SQLite::Database& db);
  // The known subject of `key`: among those of its hash, the one whose
  // identity is `key` (nullopt: none).
  std::optional<KnownSubject> Find(const Key& key, const Identity& identity) const;
  // Learns a subject not known before.
  void Put(const Key& key, KnownSubject s);
  // Forgets the subject `id` (known under `key`; false: it was not).
  bool Erase(const Key& key, int64_t id);
  // The ids of every known subject, in no order.
  std::vector<int64_t> Ids() const;
  size_t size() const { return known_.size(); }

 private:
  // id * 2 + has_base: a slot is 16 bytes.
  static int64_t Packed(KnownSubject s) { return s.id * 2 + (s.has_base ? 1 : 0); }
  static KnownSubject Unpacked(int64_t v) { return {v / 2, v % 2 != 0}; }

  HashFn hash_;
  HashMultimap<int64_t> known_;
};

// The subjects one batch uses: the known ones (their rows read through
// `select_row`), and those it inserts (through `insert`:
// namespace, name, uid, base, RETURNING the new id).
class BatchSubjects {
 public:
  // `select_row`: id -> namespace, name, uid, COALESCE(base, '').
  BatchSubjects(const Subjects& known, SQLite::Statement& insert, SQLite::Statement& select_row)
      : known_(known), insert_(insert), select_row_(select_row) {}

  // The subject of `e`; a new one takes `first` (if any), observed at
  // `at_ms`, as its base.
  const Subject& For(const domain::Event& e, const domain::Snapshot* first, int64_t at_ms);
  // The id of a subject used in this batch or known before it (0: none).
  int64_t IdOf(const Subjects::Key& key);
  // After COMMIT: the new subjects become known, the forgotten ones are dropped.
  void MergeInto(Subjects& known) const;

 private:
  // A known subject's row: its key, and its base ("" = none).
  struct Row {
    Subjects::Key key{"", "", ""};
    std::string base;
  };
  Row ReadRow(int64_t id);
  // The known subject of `key` with its row (checked by the row's key).
  std::optional<std::pair<KnownSubject, Row>> FindKnown(const Subjects::Key& key);

  const Subjects& known_;
  SQLite::Statement& insert_;
  SQLite::Statement& select_row_;
  std::map<Subjects::Key, Subject> added_;
  std::map<Subjects::Key, Subject> read_;  // known ones this batch used, with their bases
  std::map<Subjects::Key, bool> forgotten_;
};

Subjects::Key KeyOf(const domain::Event& e);

}  // namespace fk::journal
