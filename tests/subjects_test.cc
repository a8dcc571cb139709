// journal/subjects.h: what the journal keeps in memory of its subjects, a
// sorted vector that each committed batch is merged into at once.
#include "journal/subjects.h"

#include <gtest/gtest.h>

#include <SQLiteCpp/SQLiteCpp.h>

#include <map>
#include <random>
#include <string>

namespace fk::journal {
namespace {

SubjectKey Sandbox(const std::string& name) { return {"ns", name, "uid-" + name}; }

std::vector<Subjects::Entry> Added(std::map<SubjectKey, KnownSubject> m) {
  return {m.begin(), m.end()};
}

TEST(Subjects, ABatchAddsReplacesAndDropsInOnePass) {
  Subjects s;
  s.Merge(Added({{Sandbox("b"), {2, true}}, {Sandbox("d"), {4, false}}}), {});
  // One before, one between, one after the known ones; "d" is replaced; "b" goes.
  s.Merge(Added({{Sandbox("a"), {1, false}},
                 {Sandbox("c"), {3, true}},
                 {Sandbox("d"), {40, true}},
                 {Sandbox("e"), {5, false}},
                 {{"ns", "fence", ""}, {6, false}}}),
          {Sandbox("b")});
  ASSERT_EQ(s.all().size(), 5u);
  EXPECT_EQ(s.Find(Sandbox("b")), nullptr);
  ASSERT_NE(s.Find(Sandbox("d")), nullptr);
  EXPECT_EQ(s.Find(Sandbox("d"))->id, 40);
  EXPECT_TRUE(s.Find(Sandbox("d"))->has_base);
  EXPECT_EQ(s.Find({"ns", "fence", ""})->id, 6);
  EXPECT_EQ(s.Find({"ns", "d", "another uid"}), nullptr);  // the whole key, not the name
  for (size_t i = 1; i < s.all().size(); ++i) EXPECT_LT(s.all()[i - 1].first, s.all()[i].first);
  // Added and forgotten in the same batch: gone, as forgetting comes after.
  s.Merge(Added({{Sandbox("f"), {7, false}}}), {Sandbox("f")});
  EXPECT_EQ(s.Find(Sandbox("f")), nullptr);
  EXPECT_EQ(s.all().size(), 5u);
}

// Merged batches agree with a map that each change is put into one by one.
TEST(Subjects, SeededBatchesAgreeWithAMap) {
  for (uint32_t seed = 1; seed <= 20; ++seed) {
    std::mt19937 rng(seed);
    Subjects s;
    std::map<SubjectKey, KnownSubject> model;
    for (int batch = 0; batch < 50; ++batch) {
      std::map<SubjectKey, KnownSubject> added;
      std::set<SubjectKey> gone;
      for (int i = 0; i < 5; ++i) {
        const SubjectKey key = Sandbox(std::to_string(rng() % 40));
        if (rng() % 3 == 0) {
          gone.insert(key);
        } else {
          added[key] = {static_cast<int64_t>(rng() % 1000), rng() % 2 == 0};
        }
      }
      s.Merge(Added(added), gone);
      for (const auto& [k, v] : added) model[k] = v;
      for (const auto& k : gone) model.erase(k);
      ASSERT_EQ(s.all().size(), model.size()) << "seed " << seed << " batch " << batch;
      size_t i = 0;
      for (const auto& [k, v] : model) {
        EXPECT_EQ(s.all()[i].first, k) << "seed " << seed;
        EXPECT_EQ(s.all()[i].second.id, v.id) << "seed " << seed;
        ++i;
      }
    }
  }
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
      " (3, 'ns', 'fence', '', NULL), (4, 'ns', 'gone', 'uid-gone', NULL);"
      "INSERT INTO sandbox_projection VALUES ('ns', 'b', 'uid-b', 1), ('ns', 'a', 'uid-a', 2);"
      "INSERT INTO fence_projection VALUES ('ns', 'fence', 3), ('ns', 'other', NULL);");
  Subjects s;
  s.Merge(Added({{Sandbox("stale"), {9, false}}}), {});
  s.Load(db);
  ASSERT_EQ(s.all().size(), 3u);
  EXPECT_EQ(s.Find(Sandbox("stale")), nullptr);  // replaced, not added to
  EXPECT_EQ(s.Find(Sandbox("gone")), nullptr);   // a subject no projection names
  EXPECT_TRUE(s.Find(Sandbox("b"))->has_base);
  EXPECT_FALSE(s.Find(Sandbox("a"))->has_base);
  EXPECT_EQ(s.Find({"ns", "fence", ""})->id, 3);
}

}  // namespace
}  // namespace fk::journal
