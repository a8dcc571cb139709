// journal/subjects.h: what the journal keeps in memory of its subjects, and
// how it learns them again from the projections on open.
#include "journal/subjects.h"

#include <gtest/gtest.h>

#include <SQLiteCpp/SQLiteCpp.h>

#include <string>

namespace fk::journal {
namespace {

SubjectKey Sandbox(const std::string& name) { return {"ns", name, "uid-" + name}; }

TEST(Subjects, FindsByTheWholeKey) {
  Subjects s;
  s.Put(Sandbox("a"), {1, true});
  s.Put({"ns", "fence", ""}, {2, false});
  ASSERT_NE(s.Find(Sandbox("a")), nullptr);
  EXPECT_EQ(s.Find(Sandbox("a"))->id, 1);
  EXPECT_TRUE(s.Find(Sandbox("a"))->has_base);
  EXPECT_EQ(s.Find({"ns", "a", "another uid"}), nullptr);  // the name alone is not the subject
  EXPECT_EQ(s.Find({"other", "a", "uid-a"}), nullptr);
  EXPECT_EQ(s.Find({"ns", "fence", ""})->id, 2);
  s.Put(Sandbox("a"), {3, false});  // replaced
  EXPECT_EQ(s.Find(Sandbox("a"))->id, 3);
  s.Erase(Sandbox("a"));
  EXPECT_EQ(s.Find(Sandbox("a")), nullptr);
  EXPECT_EQ(s.all().size(), 1u);
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
  s.Put(Sandbox("stale"), {9, false});
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
