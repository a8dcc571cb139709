// The typed Lease (kube/lease.h) that leader election reads and writes: a
// PUT sends back every field the Lease came with, changed only in its spec.
#include "kube/lease.h"

#include <gtest/gtest.h>

#include <boost/json.hpp>

namespace fk::kube {
namespace {
namespace json = boost::json;

json::value Spec(const Lease& l) { return json::parse(l.SpecRecord()); }

TEST(Lease, ANewLeaseIsHeldFromNow) {
  const Lease l = Lease::New("ns", "fk", "me", "T0", 15);
  EXPECT_EQ(l.holder(), "me");
  EXPECT_EQ(l.duration_seconds(0), 15);
  const json::value body = json::parse(l.Body());
  EXPECT_EQ(body.at("apiVersion"), "coordination.k8s.io/v1");
  EXPECT_EQ(body.at("metadata"), json::parse(R"({"name":"fk","namespace":"ns"})"));
  EXPECT_EQ(Spec(l), json::parse(R"({"holderIdentity":"me","leaseDurationSeconds":15,
      "acquireTime":"T0","renewTime":"T0","leaseTransitions":0})"));
}

TEST(Lease, AClaimByAnotherHolderIsATransitionARenewalIsNot) {
  auto l = Lease::Parse(R"({"metadata":{"resourceVersion":"9","labels":{"a":"b"}},
      "spec":{"holderIdentity":"them","leaseDurationSeconds":30,"acquireTime":"T0",
              "renewTime":"T1","leaseTransitions":4}})");
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(l->holder(), "them");
  l->Claim("me", "T2", 15);
  EXPECT_EQ(Spec(*l), json::parse(R"({"holderIdentity":"me","leaseDurationSeconds":15,
      "acquireTime":"T2","renewTime":"T2","leaseTransitions":5})"));
  l->Claim("me", "T3", 15);  // a renewal
  EXPECT_EQ(Spec(*l).at("acquireTime"), "T2");
  EXPECT_EQ(Spec(*l).at("renewTime"), "T3");
  EXPECT_EQ(Spec(*l).at("leaseTransitions"), 5);
  // What it came with goes back: of two candidates, one wins on resourceVersion.
  EXPECT_EQ(json::parse(l->Body()).at("metadata"),
            json::parse(R"({"resourceVersion":"9","labels":{"a":"b"}})"));
}

TEST(Lease, ReleaseLeavesItToTheNextCandidateWithinASecond) {
  Lease l = Lease::New("ns", "fk", "me", "T0", 15);
  l.Release("T1");
  EXPECT_EQ(l.holder(), "");
  EXPECT_EQ(l.duration_seconds(0), 1);
  EXPECT_EQ(Spec(l).at("renewTime"), "T1");
}

TEST(Lease, AnOddLeaseReadsAsEmptyAndNoObjectIsAnError) {
  auto l = Lease::Parse(R"({"spec":"odd"})");
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(l->holder(), "");
  EXPECT_EQ(l->duration_seconds(7), 7);
  l->Claim("me", "T0", 15);  // the first claim of a spec without transitions
  EXPECT_EQ(Spec(*l).at("leaseTransitions"), 1);
  EXPECT_FALSE(Lease::Parse("[]").ok());
  EXPECT_FALSE(Lease::Parse("{").ok());
}

}  // namespace
}  // namespace fk::kube
