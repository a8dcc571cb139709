// Coverage of the watched namespaces (issue 19 item 6): a namespace that does
// not exist, one whose sandboxes have no fence, one whose fence selects no
// sandbox — each said once as a warning, listed by /readyz?verbose without
// making the replica unready, counted by state.
#include "reconciler/coverage.h"

#include <gtest/gtest.h>

#include "common/log.h"
#include "domain/event.h"

namespace fk::reconciler {
namespace {

// A cache that holds only what coverage reads: sandbox counts and fences.
class CountsCache final : public ClusterCache {
 public:
  std::map<std::string, size_t> sandboxes;
  std::set<std::string> fenced;

  SandboxPtr Sandbox(const std::string&, const std::string&) const override { return nullptr; }
  std::vector<ObjectKey> SandboxKeys(const std::string&) const override { return {}; }
  PolicyPtr Policy(const std::string& ns, const std::string& name) const override {
    if (!fenced.contains(ns) || name != domain::kWorkloadPolicyName) return nullptr;
    return kube::MakeCached<const kube::CachedPolicy>();
  }
  std::vector<std::pair<std::string, reconciler::PolicyPtr>> Policies(
      const std::string&) const override {
    return {};
  }
  PodPtr Pod(const std::string&, const std::string&) const override { return nullptr; }
  std::map<std::string, size_t> CountByNamespace(CacheKind kind) const override {
    if (kind == CacheKind::kSandboxes) return sandboxes;
    std::map<std::string, size_t> policies;
    for (const std::string& ns : fenced) policies[ns] = 2;
    return kind == CacheKind::kPolicies ? policies : std::map<std::string, size_t>{};
  }
  bool Synced() const override { return true; }

 protected:
  const PodIndex& pod_index() const override { return index_; }

 private:
  PodIndex index_;
};

TEST(Coverage, ClassifiesFromCountsAndAsksForExistenceOnlyWhenNothingIsThere) {
  EXPECT_EQ(Classify(3, true, true), Coverage::kCovered);
  EXPECT_EQ(Classify(3, false, true), Coverage::kUnfenced);
  EXPECT_EQ(Classify(0, true, true), Coverage::kNoSandboxes);
  EXPECT_EQ(Classify(0, false, false), Coverage::kMissing);
  EXPECT_EQ(Classify(0, false, true), Coverage::kEmpty);
  EXPECT_EQ(Classify(0, false, std::nullopt), Coverage::kEmpty);  // cannot tell: not a warning
}

TEST(Coverage, EachProblemIsWarnedOnceListedReadyAndCounted) {
  CountsCache cache;
  cache.sandboxes = {{"ok", 2}, {"bare", 1}};
  cache.fenced = {"ok", "quiet"};
  std::map<std::string, int> asked;
  CoverageWatch watch({"ok", "bare", "quiet", "gone", "empty", "forbidden"},
                      [&](const std::string& ns) -> std::optional<bool> {
                        ++asked[ns];
                        if (ns == "gone") return false;
                        if (ns == "forbidden") return std::nullopt;  // a 403
                        return true;
                      });
  log::Capture log(log::Level::kWarn);
  watch.Update(cache);
  watch.Update(cache);  // a resync pass: nothing new to say, nothing asked again
  EXPECT_EQ(asked, (std::map<std::string, int>{{"empty", 1}, {"forbidden", 1}, {"gone", 1}}));
  std::map<std::string, std::string> warned;  // namespace -> state
  for (const log::Record& r : log.Matching(log::Level::kWarn, "watched namespace not covered"))
    warned[*r.Get("namespace")] += *r.Get("state");
  EXPECT_EQ(warned, (std::map<std::string, std::string>{
                        {"bare", "unfenced"}, {"gone", "missing"}, {"quiet", "no-sandboxes"}}));
  EXPECT_EQ(
      watch.Counts(),
      (std::map<std::string, int>{
          {"covered", 1}, {"empty", 2}, {"missing", 1}, {"no-sandboxes", 1}, {"unfenced", 1}}));
  const std::vector<ReadinessCheck> checks = watch.Checks();
  ASSERT_EQ(checks.size(), 4u);
  for (const ReadinessCheck& c : checks) EXPECT_TRUE(c.ok) << c.name;  // never unready
  EXPECT_EQ(checks[0].name, "coverage bare");
  EXPECT_EQ(checks[1].name, "coverage gone");
  EXPECT_NE(checks[1].reason.find("does not exist"), std::string::npos);
  EXPECT_EQ(checks[2].name, "coverage quiet");
  EXPECT_EQ(checks.back().reason, "1 of 6 watched namespace(s) covered");
  // The fence arrives in "bare": covered, and said nothing more; a problem
  // that comes back is said again.
  cache.fenced.insert("bare");
  watch.Update(cache);
  cache.fenced.erase("bare");
  watch.Update(cache);
  EXPECT_EQ(log.Matching(log::Level::kWarn, "watched namespace not covered").size(), 4u);
}

TEST(Coverage, AllNamespacesWatchesThoseHoldingObjectsAndAsksNothing) {
  CountsCache cache;
  cache.sandboxes = {{"a", 1}};
  cache.fenced = {"a", "b"};
  int asked = 0;
  CoverageWatch watch({}, [&](const std::string&) -> std::optional<bool> {
    ++asked;
    return true;
  });
  watch.Update(cache);
  EXPECT_EQ(asked, 0);
  EXPECT_EQ(watch.Counts().at("covered"), 1);
  EXPECT_EQ(watch.Counts().at("no-sandboxes"), 1);
  cache.sandboxes["b"] = 1;
  watch.Update(cache);
  EXPECT_TRUE(watch.Checks().empty());  // all covered: /readyz?verbose adds no line
}

}  // namespace
}  // namespace fk::reconciler
