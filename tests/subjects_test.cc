// journal/subjects.h: what the journal keeps in memory of its subjects, and
// how it learns them again from the projections on open.
#include "journal/subjects.h"

#include <gtest/gtest.h>

#include <SQLiteCpp/SQLiteCpp.h>

#include <algorithm>
#include <map>
#include <string>

namespace fk::journal {
namespace {

SubjectKey Sandbox(const std::string& name) { return {"ns", name, "uid-" + name}; }

// The subjects table as a map: what a candidate's row says its key is.
struct Rows {
  std::map<int64_t, SubjectKey> keys;
  Subjects::Identity identity() {
    return [this](int64_t id) { return keys.at(id); };
  }
};

uint64_t EveryKeyCollides(const SubjectKey&) { return 42; }

std::vector<int64_t> SortedIds(const Subjects& s) {
  std::vector<int64_t> ids = s.Ids();
  std::sort(ids.begin(), ids.end());
  return ids;
}

TEST(Subjects, FindsByTheWholeKey) {
  Rows rows{{{1, Sandbox("a")}, {2, {"ns", "fence", ""}}}};
  Subjects s;
  s.Put(Sandbox("a"), {1, true});
  s.Put({"ns", "fence", ""}, {2, false});
  ASSERT_TRUE(s.Find(Sandbox("a"), rows.identity()));
  EXPECT_EQ(s.Find(Sandbox("a"), rows.identity())->id, 1);
  EXPECT_TRUE(s.Find(Sandbox("a"), rows.identity())->has_base);
  // The name alone is not the subject, nor are the name and uid.
  EXPECT_FALSE(s.Find({"ns", "a", "another uid"}, rows.identity()));
  EXPECT_FALSE(s.Find({"other", "a", "uid-a"}, rows.identity()));
  EXPECT_EQ(s.Find({"ns", "fence", ""}, rows.identity())->id, 2);
  EXPECT_TRUE(s.Erase(Sandbox("a"), 1));
  EXPECT_FALSE(s.Erase(Sandbox("a"), 1));
  EXPECT_FALSE(s.Find(Sandbox("a"), rows.identity()));
  EXPECT_EQ(s.size(), 1u);
  EXPECT_EQ(SortedIds(s), std::vector<int64_t>{2});
}

// A hash only names candidates: with every key of one hash, each key still
// finds its own subject, by the key its row holds.
TEST(Subjects, KeysOfOneHashKeepTheirOwnSubjects) {
  Rows rows{{{1, Sandbox("a")}, {2, Sandbox("b")}, {3, {"ns", "fence", ""}}}};
  Subjects s(&EveryKeyCollides);
  s.Put(Sandbox("a"), {1, false});
  s.Put(Sandbox("b"), {2, true});
  s.Put({"ns", "fence", ""}, {3, false});
  ASSERT_TRUE(s.Find(Sandbox("b"), rows.identity()));
  EXPECT_EQ(s.Find(Sandbox("b"), rows.identity())->id, 2);
  EXPECT_TRUE(s.Find(Sandbox("b"), rows.identity())->has_base);
  EXPECT_EQ(s.Find({"ns", "fence", ""}, rows.identity())->id, 3);
  EXPECT_FALSE(s.Find(Sandbox("c"), rows.identity()));
  EXPECT_FALSE(s.Erase(Sandbox("a"), 4));  // no such id
  EXPECT_TRUE(s.Erase(Sandbox("a"), 1));
  EXPECT_FALSE(s.Find(Sandbox("a"), rows.identity()));
  ASSERT_TRUE(s.Find(Sandbox("b"), rows.identity()));
  EXPECT_EQ(SortedIds(s), (std::vector<int64_t>{2, 3}));
}

TEST(Subjects, FindsEachOfTenThousandSandboxes) {
  Subjects s;
  for (int i = 0; i < 10000; ++i) s.Put(Sandbox(std::to_string(i)), {i + 1, true});
  EXPECT_EQ(s.size(), 10000u);
  Rows rows;
  for (int i = 0; i < 10000; i += 997) rows.keys.emplace(i + 1, Sandbox(std::to_string(i)));
  for (const auto& [id, key] : rows.keys) EXPECT_EQ(s.Find(key, rows.identity())->id, id);
}

TEST(Subjects, LoadKnowsTheSubjectsTheProjectionsName) {
  SQLite::Database db(":memory:", SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
  db.exec(
      "CREATE TABLE subjects (id INTEGER PRIMARY KEY, namespace TEXT, name TEXT, uid TEXT, "
      "base TEXT);"
      "CREATE TABLE sandbox_projection (namespace TEXT, name TEXT, sandbox_uid TEXT, "
      "subject INTEGER);"
      "CREATE TABLE fence_projection (namespace TEXT, policy TEXT, subject INTEGER);"
      "INSERT INTO subjects VALUES (1, 'ns', 'b', 'uid-b', '{}'), (2, 'ns', 'a', 'uid-a', NULL),"
      " (3, 'ns', 'fence', '', NULL), (4, 'ns', 'gone', 'uid-gone', NULL),"
      " (9, 'ns', 'stale', 'uid-stale', NULL);"
      "INSERT INTO sandbox_projection VALUES ('ns', 'b', 'uid-b', 1), ('ns', 'a', 'uid-a', 2);"
      "INSERT INTO fence_projection VALUES ('ns', 'fence', 3), ('ns', 'other', NULL);");
  Rows rows{{{1, Sandbox("b")},
             {2, Sandbox("a")},
             {3, {"ns", "fence", ""}},
             {4, Sandbox("gone")},
             {9, Sandbox("stale")}}};
  Subjects s;
  s.Put(Sandbox("stale"), {9, false});
  s.Load(db);
  EXPECT_EQ(SortedIds(s), (std::vector<int64_t>{1, 2, 3}));
  EXPECT_FALSE(s.Find(Sandbox("stale"), rows.identity()));  // replaced, not added to
  EXPECT_FALSE(s.Find(Sandbox("gone"), rows.identity()));   // a subject no projection names
  EXPECT_TRUE(s.Find(Sandbox("b"), rows.identity())->has_base);
  EXPECT_FALSE(s.Find(Sandbox("a"), rows.identity())->has_base);
  EXPECT_EQ(s.Find({"ns", "fence", ""}, rows.identity())->id, 3);
}

}  // namespace
}  // namespace fk::journal
