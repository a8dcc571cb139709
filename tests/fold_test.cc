// fold.h's index of sandboxes by name (uids_named, reindex_sandbox): no journal.
#include <gtest/gtest.h>

#include "domain/fold.h"

namespace fk::domain {
namespace {

// Adds (or renames) the record of `uid` and keeps the index in step, as fold does.
void Put(JournalState& s, const std::string& ns, const std::string& name, const std::string& uid) {
  std::optional<NamespacedName> before;
  SandboxRecord& r = s.sandboxes[CompactString(uid)];
  if (!r.uid.str().empty()) before = NamespacedName{r.ns, r.name};
  r.ns = CompactString(ns);
  r.name = CompactString(name);
  r.uid = CompactString(uid);
  reindex_sandbox(s, uid, before);
}

std::vector<std::string> Named(const JournalState& s, const std::string& ns,
                               const std::string& name) {
  std::vector<std::string> out;
  for (const CompactString& uid : uids_named(s, {ns, name})) out.push_back(uid.str());
  return out;
}

TEST(FoldTest, ANameHoldsEachUidRememberedUnderItAndNoOtherName) {
  JournalState s;
  Put(s, "ns", "a", "uid-2");
  Put(s, "ns", "a", "uid-1");    // deleted and re-created: both remembered
  Put(s, "ns", "ab", "uid-3");   // a name the first is a prefix of
  Put(s, "ns-2", "a", "uid-4");  // the same name in another namespace
  EXPECT_EQ(Named(s, "ns", "a"), (std::vector<std::string>{"uid-1", "uid-2"}));
  EXPECT_EQ(Named(s, "ns", "ab"), (std::vector<std::string>{"uid-3"}));
  EXPECT_EQ(Named(s, "ns-2", "a"), (std::vector<std::string>{"uid-4"}));
  EXPECT_TRUE(Named(s, "ns", "").empty());
  EXPECT_TRUE(Named(s, "n", "a").empty());
}

TEST(FoldTest, ARenamedOrErasedRecordLeavesItsOldName) {
  JournalState s;
  Put(s, "ns", "a", "uid-1");
  Put(s, "ns", "b", "uid-1");  // renamed
  EXPECT_TRUE(Named(s, "ns", "a").empty());
  EXPECT_EQ(Named(s, "ns", "b"), (std::vector<std::string>{"uid-1"}));
  s.sandboxes.erase(CompactString("uid-1"));
  reindex_sandbox(s, "uid-1", NamespacedName{"ns", "b"});
  EXPECT_TRUE(Named(s, "ns", "b").empty());
  EXPECT_EQ(s.uids_by_name.size(), 0u);
}

}  // namespace
}  // namespace fk::domain
