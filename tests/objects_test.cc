// Parsing Kubernetes JSON into observations: every malformed input maps to a
// defined outcome, and the desired-mode rules
// (docs/design.md#sandbox-fields-and-annotations) hold end to end (parse,
// then decide).
#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "domain/decision.h"
#include "kube/objects.h"
#include "test_support.h"

namespace fk::kube {
namespace {
using domain::ApiVersion;

std::string SandboxJson(const std::string& spec, const std::string& extra_annotations = "") {
  return R"({"apiVersion":"agents.x-k8s.io/v1beta1","kind":"Sandbox",
    "metadata":{"name":"sb-1","namespace":"agents","uid":"u-1","generation":7,"resourceVersion":"4711",
      "labels":{"openshell.ai/sandbox-id":"AbC-123"},
      "annotations":{"openshell.ai/sandbox-runtime-network-policy-uid":"fence-uid",
                     "openshell.ai/sandbox-runtime-network-policy-generation":"1",
                     "openshell.ai/sandbox-runtime-workload-uid":"pod-sb-1",
                     "openshell.ai/sandbox-runtime-supervisor-uid":"sup-sb-1")" +
         extra_annotations + R"(}},
    "spec":)" +
         spec + "}";
}

std::string Replace(std::string s, const std::string& from, const std::string& to) {
  auto pos = s.find(from);
  EXPECT_NE(pos, std::string::npos) << from;
  if (pos != std::string::npos) s.replace(pos, from.size(), to);
  return s;
}

domain::SandboxObservation Parse(const std::string& json, ApiVersion v = ApiVersion::kV1beta1) {
  auto p = ParseSandboxJson(json, v);
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  return p.ok() ? p->observation : domain::SandboxObservation{};
}

// docs/design.md#warm-pool-pairs: the resource id names the companions. A
// claimed pair keeps the physical pair id its pods are named by, while its
// sandbox id becomes the logical one.
TEST(ParseSandbox, AClaimedWarmPoolPairNamesItsSupervisorByThePairId) {
  const std::string pair = R"(,"openshell.ai/warm-pair-id":"0A1b2c3d4e5f60718293a4b5")";
  auto claimed =
      ParseSandboxJson(SandboxJson(R"({"operatingMode":"Running"})", pair), ApiVersion::kV1beta1);
  ASSERT_TRUE(claimed.ok());
  EXPECT_EQ(claimed->supervisor_pod_name, "os-supervisor-0a1b2c3d4e5f60718293a4b5");
  EXPECT_FALSE(claimed->observation.spare);
  // The pair id as a label serves as well; the annotation wins over the label.
  const std::string labelled = Replace(SandboxJson("{}"), R"("openshell.ai/sandbox-id":"AbC-123")",
                                       R"("openshell.ai/sandbox-id":"AbC-123",
                                          "openshell.ai/warm-pair-id":"Pair-L")");
  EXPECT_EQ(ParseSandboxJson(labelled, ApiVersion::kV1beta1)->supervisor_pod_name,
            "os-supervisor-pair-l");
  EXPECT_EQ(ParseSandboxJson(Replace(labelled, R"("annotations":{)",
                                     R"("annotations":{"openshell.ai/warm-pair-id":"Pair-A",)"),
                             ApiVersion::kV1beta1)
                ->supervisor_pod_name,
            "os-supervisor-pair-a");
  // An empty pair id falls back to the sandbox id, the annotation's first.
  EXPECT_EQ(ParseSandboxJson(SandboxJson("{}", R"(,"openshell.ai/warm-pair-id":"",
                                         "openshell.ai/sandbox-id":"From-Annotation")"),
                             ApiVersion::kV1beta1)
                ->supervisor_pod_name,
            "os-supervisor-from-annotation");
}

// A spare (row 1b): labelled openshell.ai/warm-pool, with no sandbox id, or
// an empty one, in its annotations or labels.
TEST(ParseSandbox, AWarmPoolPairWithoutASandboxIdIsASpare) {
  const std::string pool =
      Replace(SandboxJson("{}", R"(,"openshell.ai/warm-pair-id":"p1")"),
              R"("openshell.ai/sandbox-id":"AbC-123")", R"("openshell.ai/warm-pool":"default")");
  auto spare = ParseSandboxJson(pool, ApiVersion::kV1beta1);
  ASSERT_TRUE(spare.ok());
  EXPECT_TRUE(spare->observation.spare);
  EXPECT_EQ(spare->supervisor_pod_name, "os-supervisor-p1");
  EXPECT_TRUE(Parse(Replace(pool, R"("openshell.ai/warm-pool":"default")",
                            R"("openshell.ai/warm-pool":"default","openshell.ai/sandbox-id":"")"))
                  .spare);
  // Claimed: the sandbox id is there (label or annotation).
  EXPECT_FALSE(Parse(Replace(pool, R"("openshell.ai/warm-pool":"default")",
                             R"("openshell.ai/warm-pool":"default","openshell.ai/sandbox-id":"x")"))
                   .spare);
  EXPECT_FALSE(
      Parse(Replace(pool, R"("annotations":{)", R"("annotations":{"openshell.ai/sandbox-id":"x",)"))
          .spare);
  // Without the pool label, a sandbox with no id is an ordinary one.
  EXPECT_FALSE(
      Parse(Replace(SandboxJson("{}"), R"("openshell.ai/sandbox-id":"AbC-123")", R"("other":"x")"))
          .spare);
}

// The admitted generation is a number: OpenShell parses it as one, so "007"
// is generation 7, not the text "007".
TEST(ParseSandbox, TheAdmittedFenceGenerationIsComparedAsANumber) {
  auto sb = Parse(Replace(SandboxJson("{}"), R"(network-policy-generation":"1")",
                          R"(network-policy-generation":"007")"));
  EXPECT_EQ(sb.fence_generation, 7);
}

// While its pod is absent, a workload is selected by its template's labels,
// with the role OpenShell forces on it.
TEST(ParseSandbox, TheTemplatesLabelsAreTheWorkloadsWithTheForcedRole) {
  auto p = ParseSandboxJson(SandboxJson(R"({"podTemplate":{"metadata":{"labels":{"team":"research",
          "openshell.ai/boundary-role":"supervisor"}}}})"),
                            ApiVersion::kV1beta1);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->template_labels.Get("team", p->workload_pod_name), "research");
  EXPECT_EQ(p->template_labels.Get("openshell.ai/boundary-role", p->workload_pod_name), "workload");
  auto bare = ParseSandboxJson(SandboxJson("{}"), ApiVersion::kV1beta1);
  EXPECT_EQ(bare->template_labels.items(bare->workload_pod_name),
            (LabelSet::Items{{"openshell.ai/boundary-role", "workload"}}));
  // The cache keeps them, and the same set is interned once.
  auto compact = CachedSandbox::Of(*p);
  EXPECT_EQ(compact->Parsed("agents", "sb-1").template_labels, p->template_labels);
}

TEST(ParseSandbox, ReadsIdentityAnnotationsAndPodNames) {
  auto p = ParseSandboxJson(SandboxJson(R"({"operatingMode":"Running"})"), ApiVersion::kV1beta1);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->observation.ns, "agents");
  EXPECT_EQ(p->observation.uid, "u-1");
  EXPECT_EQ(p->observation.generation, 7);
  EXPECT_EQ(p->resource_version, "4711");
  EXPECT_EQ(p->observation.fence_uid, "fence-uid");
  EXPECT_EQ(p->observation.fence_generation, 1);
  EXPECT_EQ(p->observation.workload_uid, "pod-sb-1");
  EXPECT_EQ(p->workload_pod_name, "sb-1");
  EXPECT_EQ(p->supervisor_pod_name, "os-supervisor-abc-123");
  EXPECT_TRUE(p->observation.should_run);
  EXPECT_FALSE(p->observation.deleting);
}

// Issue 17, finding 5: text from the cluster becomes valid UTF-8 (invalid
// bytes -> U+FFFD, as the API server's own decoder does) before decide() or
// the journal sees it.
TEST(ParseSandbox, InvalidUtf8BecomesReplacementCharacters) {
  const std::string json =
      SandboxJson("{}", ",\"openshell.ai/sandbox-runtime-bootstrap-phase\":\"pre\xffparing\"");
  const auto sb = Parse(Replace(json, "\"pod-sb-1\"", "\"pod-\xc3(\""));
  EXPECT_EQ(sb.bootstrap_phase, "pre\xEF\xBF\xBDparing");
  EXPECT_EQ(sb.workload_uid, "pod-\xEF\xBF\xBD(");
}

TEST(ParseSandbox, ReadsTheIntentItCarries) {
  auto none = ParseSandboxJson(SandboxJson("{}"), ApiVersion::kV1beta1);
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->mark.has_value());
  auto seq_only = ParseSandboxJson(
      SandboxJson("{}", R"(,"openshell.ai/fail-closed-journal-seq":"5")"), ApiVersion::kV1beta1);
  ASSERT_TRUE(seq_only.ok() && seq_only->mark);
  EXPECT_EQ(*seq_only->mark, (IntentMark{5, ""}));
  auto both = ParseSandboxJson(SandboxJson("{}", R"(,"openshell.ai/fail-closed-journal-seq":"5",
      "openshell.ai/fail-closed-journal-writer":"w1")"),
                               ApiVersion::kV1beta1);
  ASSERT_TRUE(both.ok() && both->mark);
  EXPECT_EQ(*both->mark, (IntentMark{5, "w1"}));
  auto junk = ParseSandboxJson(SandboxJson("{}", R"(,"openshell.ai/fail-closed-journal-seq":"-5")"),
                               ApiVersion::kV1beta1);
  ASSERT_TRUE(junk.ok());
  EXPECT_FALSE(junk->mark.has_value());
}

TEST(ParseSandbox, PodNameAnnotationOverridesName) {
  auto p = ParseSandboxJson(SandboxJson("{}", R"(,"agents.x-k8s.io/pod-name":"custom-pod")"),
                            ApiVersion::kV1beta1);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->workload_pod_name, "custom-pod");
}

struct ModeCase {
  ApiVersion version;
  std::string spec;
  bool should_run;
};

void PrintTo(const ModeCase& c, std::ostream* os) {
  *os << domain::ToString(c.version) << " spec " << c.spec;
}

class DesiredMode : public ::testing::TestWithParam<ModeCase> {};

TEST_P(DesiredMode, MapsToRunningUnlessExplicitlySuspended) {
  const ModeCase& c = GetParam();
  domain::Snapshot s = testing::StaleSnapshot();
  s.sandbox = Parse(SandboxJson(c.spec), c.version);
  EXPECT_EQ(s.sandbox.should_run, c.should_run) << c.spec;
  // End to end: behind a stale fence a running sandbox is suspended, a
  // suspended one is held.
  s.workload_fence = {true, "fence-uid", 2, true};
  const auto d = domain::decide(s);
  EXPECT_EQ(d.verdict, c.should_run ? domain::Verdict::kSuspend : domain::Verdict::kHold) << c.spec;
}

INSTANTIATE_TEST_SUITE_P(
    V1beta1AndV1alpha1, DesiredMode,
    ::testing::Values(ModeCase{ApiVersion::kV1beta1, R"({"operatingMode":"Suspended"})", false},
                      ModeCase{ApiVersion::kV1beta1, R"({"operatingMode":"suspended"})", false},
                      ModeCase{ApiVersion::kV1beta1, R"({"operatingMode":"SUSPENDED"})", false},
                      ModeCase{ApiVersion::kV1beta1, R"({"operatingMode":"Running"})", true},
                      ModeCase{ApiVersion::kV1beta1, R"({})", true},
                      ModeCase{ApiVersion::kV1beta1, R"({"operatingMode":""})", true},
                      ModeCase{ApiVersion::kV1beta1, R"({"operatingMode":0})", true},
                      ModeCase{ApiVersion::kV1beta1, R"({"operatingMode":null})", true},
                      ModeCase{ApiVersion::kV1beta1, R"({"operatingMode":" Suspended"})", true},
                      ModeCase{ApiVersion::kV1beta1, R"("not-an-object")", true},
                      ModeCase{ApiVersion::kV1beta1, R"({"replicas":0})", true},
                      ModeCase{ApiVersion::kV1alpha1, R"({"replicas":0})", false},
                      ModeCase{ApiVersion::kV1alpha1, R"({"replicas":-1})", false},
                      ModeCase{ApiVersion::kV1alpha1, R"({"replicas":1})", true},
                      ModeCase{ApiVersion::kV1alpha1, R"({})", true},
                      ModeCase{ApiVersion::kV1alpha1, R"({"replicas":"0"})", true},
                      ModeCase{ApiVersion::kV1alpha1, R"({"replicas":0.0})", true},
                      ModeCase{ApiVersion::kV1alpha1, R"({"operatingMode":"Suspended"})", true}),
    [](const ::testing::TestParamInfo<ModeCase>& info) {
      return "case" + std::to_string(info.index);
    });

TEST(ParseDigits, AFenceGenerationIsOnlyPlainDigits) {
  EXPECT_EQ(ParseDigits("1"), 1);
  EXPECT_EQ(ParseDigits("0042"), 42);
  EXPECT_EQ(ParseDigits("9223372036854775807"), INT64_MAX);
  for (const char* bad : {"", "+1", "-1", " 1", "1 ", "1.0", "0x1", "one", "9223372036854775808",
                          "99999999999999999999"}) {
    EXPECT_EQ(ParseDigits(bad), std::nullopt) << "'" << bad << "'";
  }
}

TEST(ParseSandbox, UnparsableFenceGenerationIsAMismatch) {
  for (const char* bad : {"+1", " 1", "", "1.0", "x"}) {
    domain::Snapshot s = testing::HealthySnapshot();
    s.sandbox = Parse(Replace(SandboxJson("{}"), R"(-generation":"1")",
                              std::string(R"(-generation":")") + bad + "\""));
    EXPECT_EQ(s.sandbox.fence_generation, std::nullopt) << bad;
    s.workload_pod = {true, "pod-sb-1"};
    s.supervisor_pod = {true, "sup-sb-1"};
    EXPECT_EQ(domain::decide(s).reason, domain::Reason::kFenceStale) << bad;
  }
}

TEST(ParseSandbox, NonStringAnnotationsCountAsMissing) {
  auto p = ParseSandboxJson(R"({"metadata":{"name":"a","namespace":"n","uid":"u",
      "annotations":{"openshell.ai/sandbox-runtime-network-policy-generation":1,
                     "openshell.ai/sandbox-runtime-network-policy-uid":null}}})",
                            ApiVersion::kV1beta1);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->observation.fence_generation, std::nullopt);
  EXPECT_EQ(p->observation.fence_uid, std::nullopt);
}

TEST(ParseSandbox, BootstrapAnnotations) {
  auto p = Parse(SandboxJson("{}", R"(,"openshell.ai/sandbox-runtime-bootstrapping":"true",
                                    "openshell.ai/sandbox-runtime-bootstrap-operation":"restart")"));
  EXPECT_TRUE(p.bootstrapping);
  EXPECT_EQ(p.bootstrap_op, domain::BootstrapOp::kRestart);
  auto odd = Parse(SandboxJson("{}", R"(,"openshell.ai/sandbox-runtime-bootstrapping":"True",
                                      "openshell.ai/sandbox-runtime-bootstrap-operation":"resume")"));
  EXPECT_FALSE(odd.bootstrapping);  // only exactly "true"
  EXPECT_EQ(odd.bootstrap_op, domain::BootstrapOp::kOther);
}

TEST(ParseSandbox, BootstrapPhaseAndStartTime) {
  auto p = Parse(SandboxJson("{}", R"(,"openshell.ai/sandbox-runtime-bootstrap-phase":"preparing",
                                    "openshell.ai/sandbox-runtime-bootstrap-started-at-ms":"1800000000123")"));
  EXPECT_EQ(p.bootstrap_phase, "preparing");
  EXPECT_EQ(p.bootstrap_started_at_ms, 1'800'000'000'123);
  auto absent = Parse(SandboxJson("{}"));
  EXPECT_EQ(absent.bootstrap_phase, "");
  EXPECT_EQ(absent.bootstrap_started_at_ms, std::nullopt);
  auto raw =
      Parse(SandboxJson("{}", R"(,"openshell.ai/sandbox-runtime-bootstrap-phase":"Released")"));
  EXPECT_EQ(raw.bootstrap_phase, "Released");  // kept as written; only "preparing" admits
  for (const char* bad : {R"("")", R"("-5")", R"(" 12")", R"("1.8e12")",
                          R"("99999999999999999999")", "1800000000123", "null"}) {
    auto q = Parse(SandboxJson(
        "{}", std::string(R"(,"openshell.ai/sandbox-runtime-bootstrap-started-at-ms":)") + bad));
    EXPECT_EQ(q.bootstrap_started_at_ms, std::nullopt) << bad;
  }
}

// Parse, then decide: a create in progress with a gated workload pod is
// admitted, and the same sandbox once its pod is un-gated is suspended.
TEST(ParseSandbox, CreateInProgressIsAdmittingEndToEnd) {
  auto p = Parse(SandboxJson(R"({"operatingMode":"Running"})",
                             R"(,"openshell.ai/sandbox-runtime-bootstrapping":"true",
                                 "openshell.ai/sandbox-runtime-bootstrap-operation":"create",
                                 "openshell.ai/sandbox-runtime-bootstrap-phase":"preparing",
                                 "openshell.ai/sandbox-runtime-bootstrap-started-at-ms":"1800000000000")"));
  domain::Snapshot s;
  s.sandbox = p;
  s.workload_fence = {true, "fence-uid", 2, true};  // the annotations still name generation 1
  s.supervisor_fence = {true, "sup-fence-uid", 1, true};
  s.observed_at_ms = 1'800'000'030'000;
  auto pod = ParsePodJson(R"({"metadata":{"name":"sb-1","uid":"pod-sb-1"},
                              "spec":{"schedulingGates":[{"name":"openshell.ai/runtime"}]}})");
  ASSERT_TRUE(pod.ok());
  s.workload_pod = *pod;
  EXPECT_EQ(domain::decide(s).verdict, domain::Verdict::kAdmitting) << domain::decide(s).note;
  s.workload_pod = *ParsePodJson(
      R"({"metadata":{"name":"sb-1","uid":"pod-sb-1"},"spec":{"schedulingGates":[]}})");
  EXPECT_EQ(domain::decide(s).verdict, domain::Verdict::kSuspend) << domain::decide(s).note;
}

TEST(ParseSandbox, DeletionTimestampMeansDeleting) {
  auto p = ParseSandboxJson(R"({"metadata":{"name":"a","namespace":"n","uid":"u",
      "deletionTimestamp":"2026-11-29T00:00:00Z"}})",
                            ApiVersion::kV1beta1);
  ASSERT_TRUE(p.ok());
  EXPECT_TRUE(p->observation.deleting);
}

TEST(ParseSandbox, MalformedObjectsAreClearErrors) {
  const std::pair<const char*, const char*> cases[] = {
      {R"({"metadata":{"name":"a","namespace":"n")", "cannot be decoded"},
      {R"([1,2,3])", "not a JSON object"},
      {R"({"spec":{}})", "no metadata object"},
      {R"({"metadata":{"name":"a","namespace":"n"}})", "no metadata.uid"},
      {R"({"metadata":{"uid":"u","namespace":"n"}})", "no metadata.name"},
      {R"({"metadata":{"name":"a","uid":"u"}})", "no metadata.namespace"},
      {R"({"metadata":{"name":"a","uid":7,"namespace":"n"}})", "no metadata.uid"},
  };
  for (const auto& [json, message] : cases) {
    auto p = ParseSandboxJson(json, ApiVersion::kV1beta1);
    ASSERT_FALSE(p.ok()) << json;
    EXPECT_EQ(p.status().code(), Code::kInvalidArgument);
    EXPECT_NE(p.status().message().find(message), std::string::npos) << p.status().message();
  }
}

// Wrong types (and odd values) in every field decide() reads give a defined
// observation, never an exception: behind the fence it was admitted to, a
// sandbox whose fence annotations cannot be read is suspended (fail closed),
// and one whose other fields are odd is judged on what can be read.
TEST(ParseSandbox, WrongTypesInEveryFieldDecideFailClosed) {
  using domain::Verdict;
  const std::string gen = R"("openshell.ai/sandbox-runtime-network-policy-generation":"1")";
  const std::string uid = R"("openshell.ai/sandbox-runtime-network-policy-uid":"fence-uid")";
  const std::string big(1 << 20, 'u');
  const struct {
    std::string from, to;
    Verdict verdict;
  } cases[] = {
      {R"("annotations":{)", R"("annotations":42,"was":{)", Verdict::kSuspend},
      {R"("annotations":{)", R"("annotations":["a"],"was":{)", Verdict::kSuspend},
      {uid, R"("openshell.ai/sandbox-runtime-network-policy-uid":7)", Verdict::kSuspend},
      {uid, R"("openshell.ai/sandbox-runtime-network-policy-uid":")" + big + "\"",
       Verdict::kSuspend},
      {gen, R"("openshell.ai/sandbox-runtime-network-policy-generation":1)", Verdict::kSuspend},
      {gen, R"("openshell.ai/sandbox-runtime-network-policy-generation":"99999999999999999999")",
       Verdict::kSuspend},
      {gen, R"("openshell.ai/sandbox-runtime-network-policy-generation":{"a":1})",
       Verdict::kSuspend},
      {gen, gen + R"(,"openshell.ai/sandbox-runtime-network-policy-generation":"2")",
       Verdict::kSuspend},  // a duplicate key: the last one wins
      {R"("generation":7)", R"("generation":"7")", Verdict::kHealthy},
      {R"("generation":7)", R"("generation":1e300)", Verdict::kHealthy},
      {R"("generation":7)", R"("generation":18446744073709551615)", Verdict::kHealthy},
      {R"("generation":7)", R"("generation":123456789012345678901234567890)", Verdict::kHealthy},
      {R"("labels":{)", R"("labels":"x","was":{)", Verdict::kHealthy},
      {R"("uid":"u-1")", R"("uid":"u-1","deletionTimestamp":5)", Verdict::kHealthy},
      {R"("uid":"u-1")", R"("uid":"u-1","annotations2":"\u0000\n\u001b[31m")", Verdict::kHealthy},
      {R"("spec":{})", R"("spec":"x")", Verdict::kHealthy},
      {R"("spec":{})", R"("spec":{"operatingMode":7})", Verdict::kHealthy},
      {R"("spec":{})", R"("spec":{},"status":{"conditions":"x"})", Verdict::kHealthy},
      {R"("spec":{})", R"("spec":{},"status":{"conditions":[1,"a",null]})", Verdict::kHealthy},
  };
  for (const auto& c : cases) {
    const std::string json = Replace(SandboxJson("{}"), c.from, c.to);
    auto p = ParseSandboxJson(json, ApiVersion::kV1beta1);
    ASSERT_TRUE(p.ok()) << c.to.substr(0, 100) << ": " << p.status().ToString();
    domain::Snapshot s = testing::HealthySnapshot();
    s.sandbox = p->observation;
    s.workload_pod = {true, "pod-sb-1"};
    s.supervisor_pod = {true, "sup-sb-1"};
    EXPECT_EQ(domain::decide(s).verdict, c.verdict) << c.to.substr(0, 100);
    EXPECT_FALSE(s.sandbox.deleting) << c.to.substr(0, 100);  // only a timestamp string deletes
  }
}

TEST(ParseSandbox, LongNamesAndControlCharactersAreKeptAsTheyAre) {
  const std::string name(253, 'n');
  auto p =
      ParseSandboxJson(Replace(SandboxJson("{}"), R"("name":"sb-1")", R"("name":")" + name + "\""),
                       ApiVersion::kV1beta1);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->observation.name, name);
  auto q = ParseSandboxJson(
      Replace(SandboxJson("{}"), R"("namespace":"agents")", R"("namespace":"a\nb\u0001")"),
      ApiVersion::kV1beta1);
  ASSERT_TRUE(q.ok());
  EXPECT_EQ(q->observation.ns, "a\nb\x01");
}

constexpr const char* kWorkloadPolicy = R"({"metadata":{"name":"openshell-sandbox-workloads",
  "namespace":"agents","uid":"fence-uid","generation":3},
  "spec":{"podSelector":{"matchLabels":{"openshell.ai/boundary-role":"workload"}},
          "policyTypes":["Ingress","Egress"],
          "ingress":[{"from":[{"podSelector":{"matchLabels":{"openshell.ai/boundary-role":"supervisor"}}}],
                      "ports":[{"protocol":"TCP","port":5500}]}],
          "egress":[]}})";

constexpr const char* kSupervisorPolicy = R"({"metadata":{"name":"openshell-sandbox-supervisors",
  "namespace":"agents","uid":"sup-uid","generation":1},
  "spec":{"podSelector":{"matchLabels":{"openshell.ai/boundary-role":"supervisor"}},
          "policyTypes":["Egress"],"egress":[{}]}})";

bool Intact(const std::string& json, PolicyRole role, int port = domain::kDefaultBoundaryPort) {
  auto p = ParsePolicyJson(json, role, port);
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  return p.ok() && p->intact;
}

TEST(ParsePolicy, IntendedPoliciesAreIntact) {
  auto p = ParsePolicyJson(kWorkloadPolicy, PolicyRole::kWorkload, domain::kDefaultBoundaryPort);
  ASSERT_TRUE(p.ok());
  EXPECT_TRUE(p->present);
  EXPECT_EQ(p->uid, "fence-uid");
  EXPECT_EQ(p->generation, 3);
  EXPECT_TRUE(p->intact);
  EXPECT_TRUE(Intact(kSupervisorPolicy, PolicyRole::kSupervisor));
}

TEST(ParsePolicy, NormalizationIgnoresEmptyListsDefaultsAndOrder) {
  EXPECT_TRUE(Intact(Replace(kWorkloadPolicy, R"(,
          "egress":[])",
                             ""),
                     PolicyRole::kWorkload));
  EXPECT_TRUE(Intact(Replace(kWorkloadPolicy, R"("protocol":"TCP",)", ""), PolicyRole::kWorkload));
  EXPECT_TRUE(Intact(Replace(kWorkloadPolicy, R"(["Ingress","Egress"])", R"(["Egress","Ingress"])"),
                     PolicyRole::kWorkload));
}

TEST(ParsePolicy, AnyOtherSpecIsAltered) {
  EXPECT_FALSE(Intact(Replace(kWorkloadPolicy, "5500", "5501"), PolicyRole::kWorkload));
  EXPECT_TRUE(Intact(Replace(kWorkloadPolicy, "5500", "5501"), PolicyRole::kWorkload, 5501));
  EXPECT_FALSE(Intact(Replace(kWorkloadPolicy, R"("egress":[])", R"("egress":[{}])"),
                      PolicyRole::kWorkload));
  EXPECT_FALSE(Intact(Replace(kWorkloadPolicy, R"(["Ingress","Egress"])", R"(["Ingress"])"),
                      PolicyRole::kWorkload));
  EXPECT_FALSE(Intact(Replace(kWorkloadPolicy, R"("protocol":"TCP")", R"("protocol":"UDP")"),
                      PolicyRole::kWorkload));
  EXPECT_FALSE(Intact(Replace(kSupervisorPolicy, R"("egress":[{}])", R"("egress":[])"),
                      PolicyRole::kSupervisor));
  EXPECT_FALSE(Intact(kWorkloadPolicy, PolicyRole::kSupervisor));  // the wrong role's spec
  EXPECT_FALSE(
      Intact(R"({"metadata":{"name":"p","uid":"u","generation":1}})", PolicyRole::kWorkload));
}

TEST(ParsePolicy, AbsentPolicyIsNotPresent) {
  auto p = ParsePolicy(nullptr, PolicyRole::kWorkload, domain::kDefaultBoundaryPort);
  ASSERT_TRUE(p.ok());
  EXPECT_FALSE(p->present);
  EXPECT_FALSE(p->intact);
}

TEST(ParsePolicy, MissingGenerationIsZero) {
  auto p = ParsePolicyJson(R"({"metadata":{"name":"p","uid":"u"},"spec":{}})",
                           PolicyRole::kWorkload, domain::kDefaultBoundaryPort);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->generation, 0);
}

TEST(ParsePod, PresentWithUidOrError) {
  auto p = ParsePodJson(R"({"metadata":{"name":"sb-1","uid":"pod-uid"}})");
  ASSERT_TRUE(p.ok());
  EXPECT_TRUE(p->present);
  EXPECT_EQ(p->uid, "pod-uid");
  EXPECT_FALSE(ParsePod(nullptr)->present);
  EXPECT_FALSE(ParsePodJson(R"({"metadata":{"name":"sb-1"}})").ok());
  EXPECT_FALSE(ParsePodJson("{truncated").ok());
}

TEST(ParsePod, GatedOnlyByANonEmptySchedulingGatesList) {
  auto gated = ParsePodJson(R"({"metadata":{"name":"p","uid":"u"},
                                "spec":{"schedulingGates":[{"name":"openshell.ai/runtime"}]}})");
  ASSERT_TRUE(gated.ok());
  EXPECT_TRUE(gated->scheduling_gated);
  for (const char* spec :
       {R"({"schedulingGates":[]})", R"({})", R"({"schedulingGates":null})",
        R"({"schedulingGates":{"name":"x"}})", R"({"schedulingGates":"x"})", R"("odd")"}) {
    auto p =
        ParsePodJson(std::string(R"({"metadata":{"name":"p","uid":"u"},"spec":)") + spec + "}");
    ASSERT_TRUE(p.ok()) << spec;
    EXPECT_FALSE(p->scheduling_gated) << spec;  // not gated: rows 2-6 decide, which fails closed
  }
  auto no_spec = ParsePodJson(R"({"metadata":{"name":"p","uid":"u"}})");
  ASSERT_TRUE(no_spec.ok());
  EXPECT_FALSE(no_spec->scheduling_gated);
}

// ---- compact cached forms (what the informers keep) -----------------------

template <class T>
CachedRef<const T> Compact(const Transform& transform, const std::string& json) {
  auto doc = ParseJson(json);
  EXPECT_TRUE(doc.ok()) << json;
  auto cached = Transformed(transform, *doc);
  EXPECT_TRUE(cached.ok()) << cached.status().ToString();
  return cached.ok() ? As<T>(*cached) : nullptr;
}

Transform SandboxTransform() {
  return [](const DecodedObject& d) { return CompactSandbox(d, ApiVersion::kV1beta1); };
}
Transform PolicyTransform() {
  return [](const DecodedObject& d) { return CompactPolicy(d, domain::kDefaultBoundaryPort); };
}

// The compact form holds no name, namespace or uid of its own (the cache key
// and kube::Cached do), yet gives back exactly what ParseSandbox reads.
TEST(CompactCache, ASandboxComesBackWholeFromItsCompactForm) {
  int with_mark = 0, without_id = 0;
  for (const std::string& json :
       {SandboxJson(R"({"operatingMode":"Running"})"),
        SandboxJson("{}", R"(,"agents.x-k8s.io/pod-name":"custom-pod")"),
        SandboxJson(R"({"operatingMode":"Suspended"})",
                    R"(,"openshell.ai/sandbox-runtime-bootstrapping":"true")"),
        // An intent on it, a UUID uid, the pod-name annotation equal to the
        // sandbox's name, and no sandbox id at all.
        SandboxJson("{}", R"(,"openshell.ai/fail-closed-journal-seq":"42",
                             "openshell.ai/fail-closed-journal-writer":"w-1")"),
        Replace(SandboxJson("{}"), R"("uid":"u-1")",
                R"("uid":"d56ecc1b-5e3d-4000-8000-000000000014")"),
        SandboxJson("{}", R"(,"agents.x-k8s.io/pod-name":"sb-1")"),
        // Packed as bits (issue 36): an optional present but empty is not
        // absent, absent ones stay absent; a bootstrap's phase and start,
        // each alone, and an operation.
        Replace(
            Replace(SandboxJson("{}"), R"("openshell.ai/sandbox-runtime-workload-uid":"pod-sb-1")",
                    R"("openshell.ai/sandbox-runtime-workload-uid":"")"),
            R"("openshell.ai/sandbox-runtime-network-policy-generation":"1",)", ""),
        Replace(Replace(SandboxJson("{}"),
                        R"("openshell.ai/sandbox-runtime-network-policy-uid":"fence-uid",)", ""),
                R"(,
                     "openshell.ai/sandbox-runtime-supervisor-uid":"sup-sb-1")",
                ""),
        SandboxJson("{}", R"(,"openshell.ai/sandbox-runtime-bootstrap-phase":"preparing")"),
        SandboxJson(R"({"operatingMode":"Suspended"})",
                    R"(,"openshell.ai/sandbox-runtime-bootstrapping":"true",
                        "openshell.ai/sandbox-runtime-bootstrap-operation":"restart",
                        "openshell.ai/sandbox-runtime-bootstrap-started-at-ms":"1800000000123")"),
        Replace(SandboxJson("{}"), R"("openshell.ai/sandbox-id":"AbC-123")", R"("other":"x")")}) {
    auto full = ParseSandboxJson(json, ApiVersion::kV1beta1);
    ASSERT_TRUE(full.ok());
    auto compact = Compact<CachedSandbox>(SandboxTransform(), json);
    ASSERT_NE(compact, nullptr);
    EXPECT_EQ(compact->error, "");
    // Identity is stored once (the cache key, kube::Cached): the compact form
    // has no field for it, and is not a ParsedSandbox (568 bytes) either.
    // Its fields ordered for the padding (200 bytes, a 208-byte heap chunk;
    // 8 more would make it 224).
    static_assert(sizeof(CachedSandbox) <= 200);
    const ParsedSandbox back = compact->Parsed("agents", "sb-1");
    EXPECT_EQ(back.observation, full->observation);
    EXPECT_EQ(back.resource_version, full->resource_version);
    EXPECT_EQ(back.workload_pod_name, full->workload_pod_name);
    EXPECT_EQ(back.supervisor_pod_name, full->supervisor_pod_name);
    EXPECT_EQ(back.mark, full->mark);
    EXPECT_TRUE(compact->Names("sb-1", full->workload_pod_name));
    EXPECT_EQ(compact->Names("sb-1", "os-supervisor-abc-123"), !full->supervisor_pod_name.empty());
    EXPECT_FALSE(compact->Names("sb-1", "sb-2"));
    with_mark += full->mark.has_value();
    without_id += full->supervisor_pod_name.empty();
  }
  EXPECT_EQ(with_mark, 1);  // the samples cover what the packing keeps apart
  EXPECT_EQ(without_id, 1);
}

// One that does not parse is still cached, with its reason: it is reported
// (warn + skip) as before, not silently missing.
TEST(CompactCache, ASandboxThatDoesNotParseKeepsItsReason) {
  auto bad = Compact<CachedSandbox>(SandboxTransform(), R"({"metadata":{"name":"sb-1"}})");
  ASSERT_NE(bad, nullptr);
  EXPECT_NE(bad->error.str().find("no metadata.uid"), std::string::npos) << bad->error.str();
  EXPECT_FALSE(bad->Names("sb-1", "sb-1"));
}

TEST(CompactCache, EveryPolicyIsKeptAndOnlyAFencePolicyIsIntact) {
  const std::string intact = R"({"metadata":{"name":"openshell-sandbox-supervisors","uid":"p-1",
      "generation":3},"spec":{"podSelector":{"matchLabels":{"openshell.ai/boundary-role":
      "supervisor"}},"policyTypes":["Egress"],"egress":[{}]}})";
  auto kept = Compact<CachedPolicy>(PolicyTransform(), intact);
  ASSERT_NE(kept, nullptr);
  EXPECT_EQ(kept->Observation(), (domain::PolicyObservation{true, "p-1", 3, true}));
  // Any other policy is kept for the effective fence, never intact.
  auto other = Compact<CachedPolicy>(PolicyTransform(),
                                     Replace(intact, "openshell-sandbox-supervisors", "allow-dns"));
  ASSERT_NE(other, nullptr);
  EXPECT_FALSE(other->intact);
  EXPECT_TRUE(other->rules.types.egress);
  EXPECT_TRUE(other->rules.has_egress_rule);
  // A fence without a uid is present but not intact (fail closed), as a live read says.
  auto odd = Compact<CachedPolicy>(
      PolicyTransform(), R"({"metadata":{"name":"openshell-sandbox-workloads"},"spec":{}})");
  ASSERT_NE(odd, nullptr);
  EXPECT_EQ(odd->Observation(), (domain::PolicyObservation{true, "", 0, false}));
}

TEST(CompactCache, APodKeepsItsUidAndGateAndAnUnreadableOneIsAbsent) {
  const Transform pods = [](const DecodedObject& d) { return CompactPod(d); };
  auto gated = Compact<CachedPod>(pods, R"({"metadata":{"name":"p","uid":"u"},
      "spec":{"schedulingGates":[{"name":"g"}]}})");
  ASSERT_NE(gated, nullptr);
  EXPECT_EQ(gated->Observation(), (domain::PodObservation{true, "u", true}));
  // A workload keeps its labels (what policies select it by); a supervisor
  // does not: they are never matched, and its pair label would cost a set.
  auto workload = Compact<CachedPod>(pods, R"({"metadata":{"name":"p","uid":"u","labels":{
      "openshell.ai/boundary-role":"workload","team":"a"}}})");
  EXPECT_EQ(workload->labels.Get("team", "p"), "a");
  auto supervisor = Compact<CachedPod>(pods, R"({"metadata":{"name":"p","uid":"u","labels":{
      "openshell.ai/boundary-role":"supervisor","team":"a"}}})");
  EXPECT_TRUE(supervisor->labels.empty());
  auto unreadable = Compact<CachedPod>(pods, R"({"metadata":{"name":"p"}})");
  ASSERT_NE(unreadable, nullptr);
  EXPECT_EQ(unreadable->Observation(), domain::PodObservation{});
}

// The workload pod's labels and the template's carry the sandbox's own id;
// owned by the workload pod's name they are one interned set for every
// OpenShell sandbox, and each still reads its own id (what a selector on
// openshell.ai/boundary-pair or sandbox-id matches).
TEST(CompactCache, AWorkloadPodsLabelsAndItsTemplatesAreOneSetAcrossSandboxes) {
  const Transform pods = [](const DecodedObject& d) { return CompactPod(d); };
  auto pod = [&](const std::string& name) {
    return Compact<CachedPod>(pods, R"({"metadata":{"name":")" + name +
                                        R"(","uid":"u","labels":{"openshell.ai/boundary-role":
        "workload","openshell.ai/boundary-pair":")" +
                                        name + R"(","team":"a"}}})");
  };
  auto one = pod("sb-1"), two = pod("sb-2");
  ASSERT_NE(one, nullptr);
  ASSERT_NE(two, nullptr);
  EXPECT_EQ(one->labels, two->labels);
  EXPECT_EQ(one->labels.Get("openshell.ai/boundary-pair", "sb-1"), "sb-1");
  EXPECT_EQ(two->labels.Get("openshell.ai/boundary-pair", "sb-2"), "sb-2");
  auto sandbox = ParseSandboxJson(SandboxJson(R"({"podTemplate":{"metadata":{"labels":{"team":"a",
          "openshell.ai/boundary-pair":"sb-1"}}}})"),
                                  ApiVersion::kV1beta1);
  ASSERT_TRUE(sandbox.ok());
  EXPECT_EQ(sandbox->template_labels, one->labels);
  EXPECT_EQ(sandbox->template_labels.items(sandbox->workload_pod_name),
            (LabelSet::Items{{"openshell.ai/boundary-pair", "sb-1"},
                             {"openshell.ai/boundary-role", "workload"},
                             {"team", "a"}}));
}

// As<T> is the checked downcast that replaced dynamic_cast (kube::Cached has
// no vtable): an object of another kind, or none, gives null, never a
// pointer to the wrong type. Pods are 48 bytes with their labels' handle,
// without a vtable pointer, their count inside them (a 64-byte heap chunk).
TEST(CompactCache, AsGivesAnObjectOfItsOwnKindOnlyAndNullForAnyOther) {
  static_assert(sizeof(CachedPod) <= 48);
  const CachedPtr pod = MakeCached<CachedPod>();
  const CachedPtr policy = MakeCached<CachedPolicy>();
  const CachedPtr sandbox = MakeCached<CachedSandbox>();
  const CachedPtr json = MakeCached<CachedJson>(nullptr);
  EXPECT_EQ(As<CachedPod>(pod).get(), pod.get());
  EXPECT_EQ(As<CachedPod>(pod.get()), pod.get());
  EXPECT_EQ(As<CachedPolicy>(policy).get(), policy.get());
  EXPECT_EQ(As<CachedSandbox>(sandbox).get(), sandbox.get());
  EXPECT_EQ(As<CachedJson>(json.get()), json.get());
  for (const CachedPtr& other : {pod, policy, json}) {
    EXPECT_EQ(As<CachedSandbox>(other), nullptr);
    EXPECT_EQ(As<CachedSandbox>(other.get()), nullptr);
  }
  for (const CachedPtr& other : {sandbox, policy, json}) EXPECT_EQ(As<CachedPod>(other), nullptr);
  for (const CachedPtr& other : {sandbox, pod, json}) EXPECT_EQ(As<CachedPolicy>(other), nullptr);
  for (const CachedPtr& other : {sandbox, pod, policy}) {
    EXPECT_EQ(As<CachedJson>(other), nullptr);
    EXPECT_EQ(JsonOf(other), nullptr);
  }
  EXPECT_EQ(As<CachedSandbox>(CachedPtr()), nullptr);
  EXPECT_EQ(As<CachedSandbox>(static_cast<const Cached*>(nullptr)), nullptr);
}

// The count inside kube::Cached is shared across threads (the informer's
// thread writes the store while the workers read it): references taken and
// dropped on several threads delete the object once, after the last, and as
// its own type (the tree a CachedJson holds is released with it).
TEST(CompactCache, ReferencesOnManyThreadsDeleteTheObjectOnceAfterTheLast) {
  auto doc = ParseJson(R"({"kind":"Pod"})");
  ASSERT_TRUE(doc.ok());
  const std::weak_ptr<const boost::json::value> tree = *doc;
  CachedPtr json = MakeCached<CachedJson>(std::move(*doc));
  CachedPtr pod = MakeCached<CachedPod>();
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([json, pod] {
      for (int i = 0; i < 20000; ++i) {
        CachedPtr again = json;
        const auto as_pod = As<CachedPod>(pod);
        if (JsonOf(again) == nullptr || as_pod == nullptr) ADD_FAILURE() << "lost at " << i;
      }
    });
  }
  json = nullptr;
  pod = nullptr;
  for (auto& t : threads) t.join();
  EXPECT_TRUE(tree.expired());
}

}  // namespace
}  // namespace fk::kube
