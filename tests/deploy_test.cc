// deploy/ rendered with `kubectl kustomize`: least-privilege RBAC, the
// StatefulSet's journal volume, probes and security context, the metrics
// Service, and the optional ServiceMonitor component.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>

#include "test_support.h"

namespace fk {
namespace {

// Where runbook_url points (docs/operations.md#alerts documents it).
constexpr const char* kRunbookBase =
    "https://github.com/openshell/fencekeeper/blob/main/docs/operations.md";

bool HaveKubectl() { return std::system("command -v kubectl >/dev/null 2>&1") == 0; }

std::vector<YAML::Node> Render(const std::string& dir) {
  const auto rendered = testing::RunShell("kubectl kustomize '" + dir + "' 2>&1");
  EXPECT_EQ(rendered.exit_code, 0) << rendered.out;
  return YAML::LoadAll(rendered.out);
}

const YAML::Node* Find(const std::vector<YAML::Node>& docs, const std::string& kind,
                       const std::string& name) {
  for (const auto& d : docs) {
    if (d["kind"].as<std::string>() == kind && d["metadata"]["name"].as<std::string>() == name)
      return &d;
  }
  return nullptr;
}

using Rules = std::map<std::pair<std::string, std::string>,
                       std::set<std::string>>;  // (group, resource) -> verbs

Rules RulesOf(const YAML::Node& role) {
  Rules out;
  for (const auto& rule : role["rules"]) {
    for (const auto& g : rule["apiGroups"]) {
      for (const auto& r : rule["resources"]) {
        for (const auto& v : rule["verbs"])
          out[{g.as<std::string>(), r.as<std::string>()}].insert(v.as<std::string>());
      }
    }
  }
  return out;
}

// Deploy copied under a temporary overlay listing `components` (paths under base/).
std::vector<YAML::Node> RenderWith(const testing::TempDir& dir, const std::string& components) {
  std::filesystem::copy(std::string(FK_SOURCE_DIR) + "/deploy", dir.File("base"),
                        std::filesystem::copy_options::recursive);
  testing::WriteBytes(dir.File("kustomization.yaml"),
                      "resources: [base]\ncomponents: [" + components + "]\n");
  return Render(dir.path().string());
}

class Deploy : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!HaveKubectl())
      GTEST_SKIP() << "kubectl is not installed: the rendered manifests were not checked";
    docs_ = Render(std::string(FK_SOURCE_DIR) + "/deploy");
    ASSERT_FALSE(docs_.empty());
  }
  std::vector<YAML::Node> docs_;
};

TEST_F(Deploy, RbacIsExactlyTheLeastPrivilegeSet) {
  const YAML::Node* cluster_role = Find(docs_, "ClusterRole", "fencekeeper");
  ASSERT_TRUE(cluster_role);
  const Rules want{{{"agents.x-k8s.io", "sandboxes"}, {"get", "list", "watch", "patch"}},
                   {{"networking.k8s.io", "networkpolicies"}, {"get", "list", "watch"}},
                   {{"", "pods"}, {"get", "list", "watch"}},
                   {{"", "namespaces"}, {"get"}},
                   {{"events.k8s.io", "events"}, {"create", "patch"}}};
  EXPECT_EQ(RulesOf(*cluster_role), want);
  const YAML::Node* role = Find(docs_, "Role", "fencekeeper-leader-election");
  ASSERT_TRUE(role);
  EXPECT_EQ((*role)["metadata"]["namespace"].as<std::string>(), "fencekeeper-system");
  EXPECT_EQ(RulesOf(*role),
            (Rules{{{"coordination.k8s.io", "leases"}, {"get", "create", "update"}}}));
  // Nothing else grants anything, and no rule anywhere has a wildcard or secrets.
  int roles = 0;
  for (const auto& d : docs_) {
    const std::string kind = d["kind"].as<std::string>();
    if (kind != "ClusterRole" && kind != "Role") continue;
    ++roles;
    for (const auto& [key, verbs] : RulesOf(d)) {
      EXPECT_NE(key.first, "*");
      EXPECT_NE(key.second, "*");
      EXPECT_NE(key.second, "secrets");
      EXPECT_FALSE(verbs.contains("*"));
    }
  }
  EXPECT_EQ(roles, 2);
  const YAML::Node* binding = Find(docs_, "RoleBinding", "fencekeeper-leader-election");
  ASSERT_TRUE(binding);
  EXPECT_EQ((*binding)["subjects"][0]["name"].as<std::string>(), "fencekeeper");
  EXPECT_EQ((*binding)["subjects"][0]["namespace"].as<std::string>(), "fencekeeper-system");
}

TEST_F(Deploy, StatefulSetMountsTheJournalProbesTheServedPathsAndLocksDown) {
  const YAML::Node* sts = Find(docs_, "StatefulSet", "fencekeeper");
  ASSERT_TRUE(sts);
  const YAML::Node spec = (*sts)["spec"];
  EXPECT_EQ(spec["replicas"].as<int>(), 2);  // HA: see HighAvailability below
  ASSERT_EQ(spec["volumeClaimTemplates"].size(), 1u);
  const std::string volume = spec["volumeClaimTemplates"][0]["metadata"]["name"].as<std::string>();
  const YAML::Node pod = spec["template"]["spec"];
  const YAML::Node c = pod["containers"][0];

  std::string journal, http_addr, metrics_addr;
  bool leader_elect = false;
  for (const auto& a : c["args"]) {
    const std::string arg = a.as<std::string>();
    if (arg.rfind("--journal=", 0) == 0) journal = arg.substr(10);
    if (arg.rfind("--http-addr=", 0) == 0) http_addr = arg.substr(12);
    if (arg.rfind("--metrics-addr=", 0) == 0) metrics_addr = arg.substr(15);
    leader_elect |= arg == "--leader-elect";
  }
  EXPECT_TRUE(leader_elect);
  std::string mount;
  for (const auto& m : c["volumeMounts"]) {
    if (m["name"].as<std::string>() == volume) mount = m["mountPath"].as<std::string>();
  }
  ASSERT_FALSE(mount.empty()) << "the journal volume is not mounted";
  EXPECT_EQ(journal.rfind(mount + "/", 0), 0u) << journal << " is not under " << mount;

  // Probes: the served paths, on the port --http-addr listens on.
  EXPECT_EQ(c["livenessProbe"]["httpGet"]["path"].as<std::string>(), "/healthz");
  EXPECT_EQ(c["readinessProbe"]["httpGet"]["path"].as<std::string>(), "/readyz?exclude=leader");
  const std::string port_name = c["livenessProbe"]["httpGet"]["port"].as<std::string>();
  EXPECT_EQ(c["readinessProbe"]["httpGet"]["port"].as<std::string>(), port_name);
  std::map<std::string, int> container_ports;  // by name
  for (const auto& p : c["ports"])
    container_ports[p["name"].as<std::string>()] = p["containerPort"].as<int>();
  EXPECT_EQ(http_addr.substr(http_addr.rfind(':') + 1), std::to_string(container_ports[port_name]));
  // Metrics on a port of their own, named "metrics", which the Service exposes alone.
  ASSERT_FALSE(metrics_addr.empty()) << "no --metrics-addr: /metrics shares the probes' port";
  EXPECT_EQ(metrics_addr.substr(metrics_addr.rfind(':') + 1),
            std::to_string(container_ports["metrics"]));
  EXPECT_NE(container_ports["metrics"], container_ports[port_name]);

  // Security context and resources.
  EXPECT_TRUE(pod["securityContext"]["runAsNonRoot"].as<bool>());
  EXPECT_EQ(pod["securityContext"]["seccompProfile"]["type"].as<std::string>(), "RuntimeDefault");
  EXPECT_TRUE(c["securityContext"]["readOnlyRootFilesystem"].as<bool>());
  EXPECT_FALSE(c["securityContext"]["allowPrivilegeEscalation"].as<bool>());
  EXPECT_EQ(c["securityContext"]["capabilities"]["drop"][0].as<std::string>(), "ALL");
  for (const char* kind : {"requests", "limits"}) {
    EXPECT_TRUE(c["resources"][kind]["cpu"] && c["resources"][kind]["memory"]) << kind;
  }
  EXPECT_GE(pod["terminationGracePeriodSeconds"].as<int>(), 10);
  EXPECT_EQ(pod["serviceAccountName"].as<std::string>(), "fencekeeper");

  // The metrics Service selects these pods.
  const YAML::Node* svc = Find(docs_, "Service", "fencekeeper-metrics");
  ASSERT_TRUE(svc);
  ASSERT_EQ((*svc)["spec"]["ports"].size(), 1u);
  EXPECT_EQ((*svc)["spec"]["ports"][0]["targetPort"].as<std::string>(), "metrics");
  for (const auto& kv : (*svc)["spec"]["selector"]) {
    EXPECT_EQ(spec["template"]["metadata"]["labels"][kv.first.as<std::string>()].as<std::string>(),
              kv.second.as<std::string>());
  }
}

// Issue 37: what a reviewer sent back. Liveness waits for a startupProbe
// that allows minutes; the /tmp emptyDir is bounded and ephemeral storage is
// requested and limited around it; the pod has a priority class of its own.
int64_t Quantity(const YAML::Node& q) {  // "1Gi", "64Mi", "1280Mi", bytes
  const std::string text = q.as<std::string>();
  const std::map<std::string, int64_t> units = {
      {"Ki", 1LL << 10}, {"Mi", 1LL << 20}, {"Gi", 1LL << 30}, {"", 1}};
  const size_t digits = text.find_first_not_of("0123456789");
  const std::string unit = digits == std::string::npos ? "" : text.substr(digits);
  EXPECT_TRUE(units.contains(unit)) << text;
  return std::stoll(text.substr(0, digits)) * (units.contains(unit) ? units.at(unit) : 0);
}

TEST_F(Deploy, StartupProbeBoundedScratchSpaceAndAPriorityClass) {
  const YAML::Node* sts = Find(docs_, "StatefulSet", "fencekeeper");
  ASSERT_TRUE(sts);
  const YAML::Node pod = (*sts)["spec"]["template"]["spec"];
  const YAML::Node c = pod["containers"][0];
  const YAML::Node startup = c["startupProbe"];
  ASSERT_TRUE(startup) << "no startupProbe: liveness runs from t=0";
  EXPECT_EQ(startup["httpGet"]["path"].as<std::string>(), "/healthz");
  EXPECT_GE(startup["periodSeconds"].as<int>() * startup["failureThreshold"].as<int>(), 300);

  int64_t tmp_limit = 0;
  for (const auto& v : pod["volumes"]) {
    if (v["name"].as<std::string>() == "tmp") tmp_limit = Quantity(v["emptyDir"]["sizeLimit"]);
  }
  EXPECT_GE(tmp_limit, 1LL << 30) << "the /tmp emptyDir has no sizeLimit as large as the journal";
  const int64_t request = Quantity(c["resources"]["requests"]["ephemeral-storage"]);
  const int64_t limit = Quantity(c["resources"]["limits"]["ephemeral-storage"]);
  EXPECT_GT(request, 0);
  EXPECT_GT(limit, tmp_limit) << "the container's limit leaves no room for logs beside /tmp";

  const YAML::Node* priority = Find(docs_, "PriorityClass", "fencekeeper");
  ASSERT_TRUE(priority);
  EXPECT_EQ(pod["priorityClassName"].as<std::string>(), "fencekeeper");
  const int64_t value = (*priority)["value"].as<int64_t>();
  EXPECT_GT(value, 0);
  EXPECT_LT(value, 1'000'000'000) << "user classes stay below the system-* classes";
  EXPECT_FALSE((*priority)["globalDefault"].as<bool>());
  EXPECT_FALSE((*priority)["metadata"]["namespace"]) << "a PriorityClass is cluster-scoped";
}

// The namespace enforces the Pod Security Standard "restricted", and the pod
// meets it: every field the standard checks, read from the rendered pod.
TEST_F(Deploy, TheNamespaceEnforcesRestrictedAndThePodMeetsIt) {
  const YAML::Node* ns = Find(docs_, "Namespace", "fencekeeper-system");
  ASSERT_TRUE(ns);
  const YAML::Node labels = (*ns)["metadata"]["labels"];
  EXPECT_EQ(labels["pod-security.kubernetes.io/enforce"].as<std::string>(), "restricted");
  EXPECT_EQ(labels["pod-security.kubernetes.io/warn"].as<std::string>(), "restricted");
  const YAML::Node* sts = Find(docs_, "StatefulSet", "fencekeeper");
  ASSERT_TRUE(sts);
  const YAML::Node pod = (*sts)["spec"]["template"]["spec"];
  EXPECT_FALSE(pod["hostNetwork"] || pod["hostPID"] || pod["hostIPC"]);
  EXPECT_TRUE(pod["securityContext"]["runAsNonRoot"].as<bool>());
  EXPECT_NE(pod["securityContext"]["runAsUser"].as<int>(), 0);
  EXPECT_EQ(pod["securityContext"]["seccompProfile"]["type"].as<std::string>(), "RuntimeDefault");
  for (const auto& v : pod["volumes"]) {
    EXPECT_FALSE(v["hostPath"]) << v["name"].as<std::string>();
  }
  for (const auto& c : pod["containers"]) {
    const YAML::Node sc = c["securityContext"];
    EXPECT_FALSE(sc["privileged"] && sc["privileged"].as<bool>());
    EXPECT_FALSE(sc["allowPrivilegeEscalation"].as<bool>());
    ASSERT_EQ(sc["capabilities"]["drop"].size(), 1u);
    EXPECT_EQ(sc["capabilities"]["drop"][0].as<std::string>(), "ALL");
    EXPECT_FALSE(sc["capabilities"]["add"]);
    for (const auto& p : c["ports"]) EXPECT_FALSE(p["hostPort"]);
  }
}

// Two replicas that a node loss cannot both take, each with its journal, a
// drain that evicts one at a time, and the governing Service headless.
TEST_F(Deploy, HighAvailabilityTwoReplicasOnTwoNodesOneEvictedAtATime) {
  const YAML::Node* sts = Find(docs_, "StatefulSet", "fencekeeper");
  ASSERT_TRUE(sts);
  const YAML::Node spec = (*sts)["spec"];
  const YAML::Node labels = spec["template"]["metadata"]["labels"];
  const auto selects_pods = [&](const YAML::Node& selector) {
    bool any = false;
    for (const auto& kv : selector["matchLabels"]) {
      any = true;
      if (!labels[kv.first.as<std::string>()] ||
          labels[kv.first.as<std::string>()].as<std::string>() != kv.second.as<std::string>())
        return false;
    }
    return any;
  };
  EXPECT_EQ(spec["replicas"].as<int>(), 2);
  EXPECT_EQ(spec["podManagementPolicy"].as<std::string>(), "Parallel");
  ASSERT_EQ(spec["volumeClaimTemplates"].size(), 1u);  // a journal per replica
  // Required anti-affinity on the host name: never both on one node.
  const YAML::Node anti = spec["template"]["spec"]["affinity"]["podAntiAffinity"]
                              ["requiredDuringSchedulingIgnoredDuringExecution"];
  ASSERT_TRUE(anti && anti.size() == 1u);
  EXPECT_EQ(anti[0]["topologyKey"].as<std::string>(), "kubernetes.io/hostname");
  EXPECT_TRUE(selects_pods(anti[0]["labelSelector"]));
  // Leader election on, so only one of them writes.
  bool leader_elect = false;
  for (const auto& a : spec["template"]["spec"]["containers"][0]["args"])
    leader_elect |= a.as<std::string>() == "--leader-elect";
  EXPECT_TRUE(leader_elect);
  // serviceName names a headless Service that selects the pods.
  const YAML::Node* governing = Find(docs_, "Service", spec["serviceName"].as<std::string>());
  ASSERT_TRUE(governing) << spec["serviceName"].as<std::string>();
  EXPECT_EQ((*governing)["spec"]["clusterIP"].as<std::string>(), "None");
  for (const auto& kv : (*governing)["spec"]["selector"])
    EXPECT_EQ(labels[kv.first.as<std::string>()].as<std::string>(), kv.second.as<std::string>());
  // A drain evicts at most one: maxUnavailable 1 over these pods (both
  // count as available: readiness excludes leadership, checked above).
  const YAML::Node* pdb = Find(docs_, "PodDisruptionBudget", "fencekeeper");
  ASSERT_TRUE(pdb);
  EXPECT_EQ((*pdb)["spec"]["maxUnavailable"].as<int>(), 1);
  EXPECT_FALSE((*pdb)["spec"]["minAvailable"]);
  EXPECT_TRUE(selects_pods((*pdb)["spec"]["selector"]));
}

// fencekeeper's own pod: egress to the API server and DNS only, ingress only
// on ports its container serves.
TEST_F(Deploy, NetworkPolicyLetsThePodReachOnlyTheApiServerAndDns) {
  const YAML::Node* np = Find(docs_, "NetworkPolicy", "fencekeeper");
  ASSERT_TRUE(np);
  const YAML::Node* sts = Find(docs_, "StatefulSet", "fencekeeper");
  ASSERT_TRUE(sts);
  const YAML::Node pod_labels = (*sts)["spec"]["template"]["metadata"]["labels"];
  const YAML::Node spec = (*np)["spec"];
  ASSERT_TRUE(spec["podSelector"]["matchLabels"].size() > 0);
  for (const auto& kv : spec["podSelector"]["matchLabels"])
    EXPECT_EQ(pod_labels[kv.first.as<std::string>()].as<std::string>(),
              kv.second.as<std::string>());
  std::set<std::string> types;
  for (const auto& t : spec["policyTypes"]) types.insert(t.as<std::string>());
  EXPECT_EQ(types, (std::set<std::string>{"Ingress", "Egress"}));

  // Egress: exactly the API server's ports (any address) and DNS to kube-dns.
  std::set<std::string> egress;
  for (const auto& rule : spec["egress"]) {
    const bool to_dns =
        rule["to"] && rule["to"][0]["podSelector"]["matchLabels"]["k8s-app"] &&
        rule["to"][0]["podSelector"]["matchLabels"]["k8s-app"].as<std::string>() == "kube-dns";
    for (const auto& p : rule["ports"]) {
      egress.insert((to_dns ? "dns " : "any ") + p["protocol"].as<std::string>() + "/" +
                    p["port"].as<std::string>());
    }
  }
  EXPECT_EQ(egress,
            (std::set<std::string>{"any TCP/443", "any TCP/6443", "dns UDP/53", "dns TCP/53"}));

  // Ingress: only named ports the container declares, probes and metrics among them.
  std::set<std::string> container_ports, ingress;
  for (const auto& p : (*sts)["spec"]["template"]["spec"]["containers"][0]["ports"])
    container_ports.insert(p["name"].as<std::string>());
  for (const auto& rule : spec["ingress"]) {
    for (const auto& p : rule["ports"]) ingress.insert(p["port"].as<std::string>());
  }
  EXPECT_EQ(ingress, container_ports);
  EXPECT_TRUE(ingress.contains("metrics"));
}

// With --namespace, fencekeeper's rights hold in that namespace only: no
// ClusterRoleBinding, a RoleBinding there to exactly the ClusterRole's rules,
// and run told the namespace it may watch.
TEST_F(Deploy, NamespacedComponentGrantsNothingOutsideTheWatchedNamespace) {
  testing::TempDir dir;
  std::filesystem::copy(std::string(FK_SOURCE_DIR) + "/deploy", dir.File("base"),
                        std::filesystem::copy_options::recursive);
  testing::WriteBytes(dir.File("kustomization.yaml"),
                      "resources: [base]\ncomponents: [base/components/namespaced]\n");
  const auto docs = Render(dir.path().string());
  ASSERT_FALSE(docs.empty());
  for (const auto& d : docs)
    EXPECT_NE(d["kind"].as<std::string>(), "ClusterRoleBinding") << "a grant across namespaces";
  const YAML::Node* binding = nullptr;
  for (const auto& d : docs) {
    if (d["kind"].as<std::string>() == "RoleBinding" &&
        d["metadata"]["namespace"].as<std::string>() == "openshell-agents")
      binding = &d;
  }
  ASSERT_TRUE(binding);
  EXPECT_EQ((*binding)["roleRef"]["kind"].as<std::string>(), "ClusterRole");
  const YAML::Node* role =
      Find(docs, "ClusterRole", (*binding)["roleRef"]["name"].as<std::string>());
  ASSERT_TRUE(role);
  EXPECT_EQ(RulesOf(*role), RulesOf(*Find(docs_, "ClusterRole", "fencekeeper")));
  EXPECT_EQ((*binding)["subjects"][0]["name"].as<std::string>(), "fencekeeper");
  EXPECT_EQ((*binding)["subjects"][0]["namespace"].as<std::string>(), "fencekeeper-system");
  const YAML::Node* sts = Find(docs, "StatefulSet", "fencekeeper");
  ASSERT_TRUE(sts);
  std::vector<std::string> namespaces;
  for (const auto& a : (*sts)["spec"]["template"]["spec"]["containers"][0]["args"]) {
    const std::string arg = a.as<std::string>();
    if (arg.rfind("--namespace=", 0) == 0) namespaces.push_back(arg.substr(12));
  }
  EXPECT_EQ(namespaces, std::vector<std::string>{"openshell-agents"});
}

TEST_F(Deploy, MonitoringComponentsRender) {
  testing::TempDir dir;
  const auto docs =
      RenderWith(dir, "base/components/servicemonitor, base/components/prometheus-rule");
  const YAML::Node* sm = Find(docs, "ServiceMonitor", "fencekeeper");
  ASSERT_TRUE(sm);
  EXPECT_EQ((*sm)["spec"]["endpoints"][0]["path"].as<std::string>(), "/metrics");
  EXPECT_EQ((*sm)["metadata"]["namespace"].as<std::string>(), "fencekeeper-system");
  // The ServiceMonitor scrapes the Service's metrics port by name.
  const YAML::Node* svc = Find(docs, "Service", "fencekeeper-metrics");
  ASSERT_TRUE(svc);
  EXPECT_EQ((*sm)["spec"]["endpoints"][0]["port"].as<std::string>(),
            (*svc)["spec"]["ports"][0]["name"].as<std::string>());

  // Every alert names its runbook section in docs/operations.md.
  const std::string operations =
      testing::ReadBytes(std::string(FK_SOURCE_DIR) + "/docs/operations.md");
  const YAML::Node* rule = Find(docs, "PrometheusRule", "fencekeeper");
  ASSERT_TRUE(rule);
  EXPECT_EQ((*rule)["metadata"]["namespace"].as<std::string>(), "fencekeeper-system");
  std::set<std::string> alerts;
  for (const auto& group : (*rule)["spec"]["groups"]) {
    for (const auto& r : group["rules"]) {
      const std::string name = r["alert"].as<std::string>();
      alerts.insert(name);
      std::string anchor = "docs/operations.md#" + ("alert-" + name);  // lowercased next
      std::transform(anchor.begin(), anchor.end(), anchor.begin(),
                     [](unsigned char ch) { return std::tolower(ch); });
      EXPECT_NE(r["annotations"]["description"].as<std::string>().find(anchor), std::string::npos)
          << name;
      EXPECT_TRUE(r["annotations"]["summary"]) << name;
      EXPECT_TRUE(r["labels"]["severity"]) << name;
      // runbook_url: the same section, under the documented base.
      ASSERT_TRUE(r["annotations"]["runbook_url"]) << name;
      EXPECT_EQ(r["annotations"]["runbook_url"].as<std::string>(),
                std::string(kRunbookBase) + anchor.substr(anchor.find('#')))
          << name;
      EXPECT_TRUE(operations.find("\n### Alert: " + name + "\n") != std::string::npos)
          << "docs/operations.md has no runbook section for " << name;
    }
  }
  EXPECT_EQ(alerts, (std::set<std::string>{
                        "FencekeeperNotReady", "FencekeeperLeaderAbsent",
                        "FencekeeperFenceBypassed", "FencekeeperJournalErrors",
                        "FencekeeperJournalVolumeFilling", "FencekeeperJournalPruningFailing",
                        "FencekeeperTransitionsFailed", "FencekeeperTransitionConflicts",
                        "FencekeeperPendingIntentStuck", "FencekeeperDecodeErrors",
                        "FencekeeperWouldSuspend", "FencekeeperReconcilePanics"}));
}

// components/prometheus-rule-labels gives the PrometheusRule, and nothing
// else, the labels kube-prometheus's ruleSelector matches; without it the
// rule has none of them.
TEST_F(Deploy, TheRuleLabelsComponentLabelsThePrometheusRuleForTheOperatorsSelector) {
  testing::TempDir with_dir, without_dir;
  const auto with = RenderWith(with_dir,
                               "base/components/prometheus-rule, "
                               "base/components/prometheus-rule-labels");
  const YAML::Node* rule = Find(with, "PrometheusRule", "fencekeeper");
  ASSERT_TRUE(rule);
  EXPECT_EQ((*rule)["metadata"]["labels"]["prometheus"].as<std::string>(), "k8s");
  EXPECT_EQ((*rule)["metadata"]["labels"]["role"].as<std::string>(), "alert-rules");
  EXPECT_GT((*rule)["spec"]["groups"][0]["rules"].size(), 0u) << "the rules are kept";
  for (const auto& d : with) {
    if (d["kind"].as<std::string>() == "PrometheusRule") continue;
    EXPECT_FALSE(d["metadata"]["labels"] && d["metadata"]["labels"]["role"])
        << d["kind"] << " " << d["metadata"]["name"];
  }
  const auto without = RenderWith(without_dir, "base/components/prometheus-rule");
  const YAML::Node* plain = Find(without, "PrometheusRule", "fencekeeper");
  ASSERT_TRUE(plain);
  EXPECT_FALSE((*plain)["metadata"]["labels"] && (*plain)["metadata"]["labels"]["prometheus"]);
}

// deploy/dashboards ships the dashboard as a ConfigMap for Grafana's sidecar:
// labelled grafana_dashboard, in fencekeeper's namespace, holding the JSON file
// unchanged.
TEST_F(Deploy, TheDashboardComponentShipsTheDashboardJsonAsAConfigMap) {
  testing::TempDir dir;
  const auto docs = RenderWith(dir, "base/dashboards");
  const YAML::Node* cm = Find(docs, "ConfigMap", "fencekeeper-dashboard");
  ASSERT_TRUE(cm);
  EXPECT_EQ((*cm)["metadata"]["namespace"].as<std::string>(), "fencekeeper-system");
  EXPECT_EQ((*cm)["metadata"]["labels"]["grafana_dashboard"].as<std::string>(), "1");
  EXPECT_EQ((*cm)["data"]["fencekeeper.json"].as<std::string>(),
            testing::ReadBytes(std::string(FK_SOURCE_DIR) + "/deploy/dashboards/fencekeeper.json"));
}

}  // namespace
}  // namespace fk
