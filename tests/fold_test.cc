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

// A fence record remembers the highest generation folded per policy uid
// (FenceRecord::max_generation, a sorted array since issue 36): through a
// lower copy, another uid and an absent policy, each uid keeps its highest.
TEST(FoldTest, AFenceKeepsTheHighestGenerationOfEachUid) {
  JournalState s;
  int64_t seq = 0;
  const auto observe = [&](bool present, const std::string& uid, int64_t generation) {
    Event e;
    e.seq = ++seq;
    e.ns = "ns";
    e.recorded_at = "2026-12-07T10:00:00.000Z";
    e.body = FenceObserved{kWorkloadPolicyName, {present, uid, generation, true}};
    fold(s, e);
  };
  const std::string a = "0f8c2d3e-1a2b-4c3d-8e9f-001122334455";  // packed as a uuid
  const std::string b(40, 'b');                                  // on the heap
  observe(true, a, 3);
  observe(true, b, 1);
  observe(true, a, 2);  // an older copy: recorded, but a's highest stays 3
  observe(false, "", 0);
  const FenceRecord& r = s.fences.at({"ns", kWorkloadPolicyName});
  EXPECT_EQ(r.seq, 4);
  EXPECT_FALSE(r.observation.present);
  std::vector<std::pair<std::string, int64_t>> seen;
  for (const auto& [uid, generation] : r.max_generation) seen.emplace_back(uid.str(), generation);
  EXPECT_EQ(seen, (std::vector<std::pair<std::string, int64_t>>{{a, 3}, {b, 1}}));
  ASSERT_NE(r.max_generation.find(a), r.max_generation.end());
  EXPECT_EQ(r.max_generation.find(std::string(39, 'b')), r.max_generation.end());
}

}  // namespace
}  // namespace fk::domain
