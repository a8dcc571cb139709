#!/usr/bin/env python3
"""Writes the seed corpora of tests/fuzz/corpus/<target>/ (docs/fuzzing.md).

Seeds are small valid inputs in the shapes the real sources produce (the CRDs
in the design's reference, the simulator's intended policies, the journal's
encoder) plus edge cases each decoder must reject or map to a defined value.
Run it again after changing it; the files are committed so CI needs no Python.
Targets whose first input byte selects a variant get that byte prepended.
"""
import json
import os
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "corpus")
REPO = os.path.dirname(os.path.dirname(HERE))

FENCE_UID = "openshell.ai/sandbox-runtime-network-policy-uid"
FENCE_GEN = "openshell.ai/sandbox-runtime-network-policy-generation"


def dumps(v):
    return json.dumps(v, separators=(",", ":"))


def sandbox(api="v1beta1", spec=None, annotations=None, **meta):
    m = {"name": "sb-1", "namespace": "openshell-agents", "uid": "u-1", "generation": 3,
         "resourceVersion": "4711", "labels": {"openshell.ai/sandbox-id": "AbC-123"},
         "annotations": {FENCE_UID: "fence-uid", FENCE_GEN: "1",
                         "openshell.ai/sandbox-runtime-workload-uid": "pod-sb-1",
                         "openshell.ai/sandbox-runtime-supervisor-uid": "sup-sb-1"}}
    if annotations is not None:
        m["annotations"].update(annotations)
    m.update(meta)
    return {"apiVersion": "agents.x-k8s.io/" + api, "kind": "Sandbox", "metadata": m,
            "spec": spec if spec is not None else {"operatingMode": "Running"}}


def sandbox_seeds():
    admitting = {"openshell.ai/sandbox-runtime-bootstrapping": "true",
                 "openshell.ai/sandbox-runtime-bootstrap-operation": "create",
                 "openshell.ai/sandbox-runtime-bootstrap-phase": "preparing",
                 "openshell.ai/sandbox-runtime-bootstrap-started-at-ms": "1700000000000"}
    seeds = {
        "v1beta1-running": sandbox(),
        "v1beta1-suspended": sandbox(spec={"operatingMode": "Suspended"}),
        "v1beta1-lowercase": sandbox(spec={"operatingMode": "suspended"}),
        "v1beta1-mode-number": sandbox(spec={"operatingMode": 0}),
        "v1alpha1-replicas-0": sandbox("v1alpha1", spec={"replicas": 0}),
        "v1alpha1-replicas-big": sandbox("v1alpha1", spec={"replicas": 18446744073709551615}),
        "v1alpha1-replicas-float": sandbox("v1alpha1", spec={"replicas": -0.5}),
        "deleting": sandbox(deletionTimestamp="2026-01-01T00:00:00Z"),
        "admitting": sandbox(annotations=admitting),
        "pod-name": sandbox(annotations={"agents.x-k8s.io/pod-name": "custom-pod"}),
        "generation-bad": sandbox(annotations={FENCE_GEN: "-1"}),
        "generation-overflow": sandbox(annotations={FENCE_GEN: "99999999999999999999"}),
        "generation-string": sandbox(generation="7"),
        "no-uid": {"metadata": {"name": "x", "namespace": "y"}},
        "annotations-not-map": sandbox(annotations=None) | {"metadata": {"name": "a", "namespace": "b",
                                                                          "uid": "c", "annotations": []}},
        "control-chars": sandbox(name="sb\u0000\n\u001b[31m"),
    }
    out = {k: dumps(v) for k, v in seeds.items()}
    out["duplicate-keys"] = ('{"metadata":{"name":"a","name":"b","namespace":"n","uid":"u"},'
                             '"spec":{"operatingMode":"Suspended","operatingMode":"Running"}}')
    out["invalid-utf8"] = b'{"metadata":{"name":"\xff\xfe","namespace":"n","uid":"u"}}'
    out["deep-64"] = ('{"metadata":{"name":"a","namespace":"n","uid":"u"},"spec":'
                      + "[" * 64 + "]" * 64 + "}")
    out["empty"] = ""
    out["not-object"] = "[]"
    return out


def policy(role="workload", port=5500, **meta):
    name = "openshell-sandbox-workloads" if role == "workload" else "openshell-sandbox-supervisors"
    m = {"name": name, "namespace": "openshell-agents", "uid": "fence-uid", "generation": 1}
    m.update(meta)
    if role == "workload":
        spec = {"podSelector": {"matchLabels": {"openshell.ai/boundary-role": "workload"}},
                "policyTypes": ["Ingress", "Egress"],
                "ingress": [{"from": [{"podSelector": {"matchLabels": {
                    "openshell.ai/boundary-role": "supervisor"}}}],
                    "ports": [{"protocol": "TCP", "port": port}]}],
                "egress": []}
    else:
        spec = {"podSelector": {"matchLabels": {"openshell.ai/boundary-role": "supervisor"}},
                "policyTypes": ["Egress"], "egress": [{}]}
    return {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy", "metadata": m, "spec": spec}


def policy_seeds():
    # First byte < 128: the default boundary port 5500 (see policy_json_fuzz.cc).
    seeds = {
        "workload-intact": policy(),
        "workload-port-5501": policy(port=5501),
        "workload-port-string": policy(port="http"),
        "supervisor-intact": policy("supervisor"),
        "supervisor-null-egress": policy("supervisor") | {"spec": {"egress": None}},
        "no-uid": {"metadata": {"name": "openshell-sandbox-workloads"}},
        "generation-huge": policy(generation=18446744073709551615),
    }
    return {k: b"\x00" + dumps(v).encode() for k, v in seeds.items()} | {"odd-port": b"\xff" + dumps(policy(port=65535)).encode()}


def pod_seeds():
    base = {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "sb-1", "namespace": "openshell-agents", "uid": "pod-sb-1"},
            "spec": {"containers": [{"name": "main", "image": "agent:latest"}]}}
    gated = json.loads(dumps(base))
    gated["spec"]["schedulingGates"] = [{"name": "openshell.ai/fence"}]
    odd = json.loads(dumps(base))
    odd["spec"]["schedulingGates"] = {"name": "x"}
    return {"pod": dumps(base), "gated": dumps(gated), "gates-not-list": dumps(odd),
            "no-uid": '{"metadata":{"name":"p"}}', "garbage": "{\"metadata\":"}


def status_seeds():
    def status(code, reason, message="m", details=None):
        s = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
             "message": message, "reason": reason, "code": code}
        if details is not None:
            s["details"] = details
        return dumps(s).encode()
    # First byte picks the HTTP status (api_status_fuzz.cc): 0 -> 200, 6 -> 410, 5 -> 409, 8 -> 429.
    return {
        "watch-410": b"\x00" + status(410, "Expired", "too old resource version: 1 (2)"),
        "watch-no-code": b"\x00" + dumps({"kind": "Status", "reason": "Gone"}).encode(),
        "watch-code-huge": b"\x00" + status(4294967706, "Expired"),
        "conflict": b"\x05" + status(409, "Conflict", details={"name": "sb-1", "kind": "sandboxes"}),
        "already-exists": b"\x05" + status(409, "AlreadyExists"),
        "retry-after": b"\x08" + status(429, "TooManyRequests", details={"retryAfterSeconds": 5}),
        "retry-after-huge": b"\x08" + status(429, "TooManyRequests",
                                            details={"retryAfterSeconds": 9223372036854775807}),
        "plain-text": b"\x08Too many requests, please try again later.\r\n",
        "empty": b"\x09",
    }


def codec_seeds():
    # First byte: 0..5 event kinds in EventKind order, 6 snapshot, 7 decision (codec_fuzz.cc).
    fence = {"present": True, "uid": "fence-uid", "generation": 2, "intact": True}
    pod = {"present": True, "uid": "pod-sb-1", "scheduling_gated": False}
    snapshot = {"sandbox": {"namespace": "agents", "name": "sb-1", "uid": "u-1", "generation": 2,
                            "api_version": "v1beta1", "deleting": False, "should_run": True,
                            "bootstrapping": True, "bootstrap_op": "create",
                            "bootstrap_phase": "preparing", "bootstrap_started_at_ms": 1700000000000,
                            "fence_uid": "fence-uid", "fence_generation": 1,
                            "workload_uid": "pod-sb-1", "supervisor_uid": None},
                "workload_fence": fence, "supervisor_fence": fence | {"uid": "sup"},
                "workload_pod": pod | {"scheduling_gated": True}, "supervisor_pod": pod,
                "history": {"pending_intent_seq": None, "applied_generation": 3},
                "observed_at_ms": 1700000001000}
    old_snapshot = json.loads(dumps(snapshot))
    for k in ("bootstrap_phase", "bootstrap_started_at_ms"):
        del old_snapshot["sandbox"][k]
    del old_snapshot["observed_at_ms"]
    # schema 9: a spare, and the policies that widen the fence
    bypassed = json.loads(dumps(snapshot))
    bypassed["sandbox"]["spare"] = True
    bypassed["bypass"] = [
        {"policy": "allow-dns", "uid": "np-1", "generation": 3, "widens": "egress"},
        {"policy": "ssh", "uid": "np-2", "generation": 1, "widens": "both"}]
    decision = {"verdict": "admitting", "reason": "", "action": "none", "note": "n",
                "reevaluate_at_ms": 9223372036854775807}
    seeds = {
        "fence-observed": (0, {"policy": "openshell-sandbox-workloads"} | fence),
        "sandbox-observed": (1, snapshot),
        "sandbox-observed-old": (1, old_snapshot),
        "decided": (2, {"verdict": "suspend", "reason": "fence-stale", "action": "patch-suspend",
                        "note": "fence generation 1 -> 2"}),
        "intent": (3, {"action": "suspend", "reason": "fence-stale", "observed_generation": 2,
                       "resource_version": "4711", "api_version": "v1alpha1", "note": "x"}),
        "outcome": (4, {"outcome": "applied", "applied_generation": 3, "detail": ""}),
        "outcome-null": (4, {"outcome": "failed", "applied_generation": None, "detail": "403"}),
        "leadership": (5, {"identity": "pod-a", "state": "acquired"}),
        "snapshot": (6, snapshot),
        "snapshot-extremes": (6, snapshot | {"observed_at_ms": -9223372036854775808}),
        "snapshot-bypassed": (6, bypassed),
        "snapshot-bypass-bad": (6, snapshot | {"bypass": [{"policy": "p", "uid": "u",
                                                           "generation": 1, "widens": "sideways"}]}),
        "decided-bypassed": (2, {"verdict": "suspend", "reason": "fence-bypassed",
                                 "action": "patch-suspend",
                                 "note": "fence bypassed: NetworkPolicy allow-dns widens egress"}),
        "decision": (7, decision),
    }
    out = {k: bytes([sel]) + dumps(v).encode() for k, (sel, v) in seeds.items()}
    out["decided-not-json"] = b"\x02{nope"
    out["intent-bad-enum"] = b'\x03{"reason":"maybe"}'
    return out


def duration_seeds():
    return {n: v for n, v in [("zero", "0"), ("ms", "200ms"), ("s", "30s"), ("hm", "1h30m"),
                              ("fraction", "1.5s"), ("micro", "\u00b5s"), ("us", "10us"),
                              ("ns", "999ns"), ("empty", ""), ("negative", "-1s"),
                              ("dots", "1..2s"), ("big", "9223372036854775807h"),
                              ("no-unit", "5")]}


def selector_seeds():
    return {n: v for n, v in [
        ("equals", "openshell.ai/sandbox-id=abc"), ("double-equals", "app==x"),
        ("not-equals", "app!=y"), ("exists", "app"), ("not-exists", "!app"),
        ("in", "app in (x,y)"), ("notin", "app notin (z)"),
        ("combined", "a=b,c!=d,e,!f,g in (x,y),h notin (z)"),
        ("fields", "metadata.name=sb-1,metadata.namespace=agents"),
        ("unbalanced", "a in (x,(y)"), ("empty", ""), ("empty-term", "a=b,,c")]}


def kubeconfig_seeds():
    base = """apiVersion: v1
kind: Config
current-context: dev
clusters:
- name: dev
  cluster:
    server: https://127.0.0.1:6443
    certificate-authority-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCg==
    tls-server-name: kubernetes
contexts:
- name: dev
  context: {cluster: dev, user: dev, namespace: openshell-agents}
users:
- name: dev
  user:
    token: abc
"""
    return {
        "token": base,
        "insecure": base.replace("    tls-server-name: kubernetes\n",
                                 "    insecure-skip-tls-verify: true\n"),
        "client-cert": base.replace("    token: abc\n",
                                    "    client-certificate-data: QUJD\n    client-key-data: REVG\n"),
        "token-file": base.replace("    token: abc\n", "    tokenFile: token\n"),
        "bad-base64": base.replace("LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCg==", "!!!="),
        "relative-ca": base.replace("certificate-authority-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCg==",
                                    "certificate-authority: ca.crt"),
        "no-context": "apiVersion: v1\nclusters: []\n",
        "http": base.replace("https://127.0.0.1:6443", "http://localhost:8080"),
        "bad-scheme": base.replace("https://127.0.0.1:6443", "ftp://x"),
        "wrong-types": "current-context: [a]\ncontexts: {name: x}\n",
        "not-yaml": "{[:",
    }


def scenario_seeds():
    out = {}
    scen_dir = os.path.join(REPO, "tests", "scenarios")
    for name in sorted(os.listdir(scen_dir)):
        with open(os.path.join(scen_dir, name)) as f:
            out[name.rsplit(".", 1)[0]] = f.read()
    out["faults"] = """options: {latency: 10ms, dropWatchAfterEvents: 3, historyLimit: 50, emulateAgentSandbox: false}
faults:
  - {verb: patch, resource: sandboxes, status: 409, count: 2}
  - {verb: list, resource: "*", status: 429, retryAfterSeconds: 1, plainText: true}
namespaces:
  - name: ns-a
    fence: {boundaryPort: 5501, generation: 3}
    sandboxes:
      - {name: a, mode: Running, admittedFenceGeneration: 1, pods: false}
  - name: ns-b
    fence: false
"""
    out["objects"] = """objects:
  - apiVersion: v1
    kind: Namespace
    metadata: {name: extra}
  - apiVersion: agents.x-k8s.io/v1beta1
    kind: Sandbox
    metadata:
      name: raw
      namespace: extra
      annotations: {"openshell.ai/sandbox-runtime-network-policy-generation": "1"}
    spec: {operatingMode: Running, replicas: 1, ratio: 0.5, nothing: null, flag: yes, quoted: "true"}
"""
    out["empty"] = ""
    out["not-mapping"] = "- a\n- b\n"
    out["unknown-key"] = "surprise: 1\n"
    return out


def list_page_seeds():
    items = [sandbox(), sandbox(name="sb-2", uid="u-2", spec={"operatingMode": "Suspended"})]
    def page(its, rv="100", cont=None):
        meta = {"resourceVersion": rv}
        if cont is not None:
            meta["continue"] = cont
        return dumps({"apiVersion": "agents.x-k8s.io/v1beta1", "kind": "SandboxList",
                      "metadata": meta, "items": its})
    good = dumps(sandbox(name="ok", uid="u-ok"))
    deep = '{"metadata":{"name":"deep","namespace":"n","uid":"u-d"},"spec":' + "[" * 300 + "]" * 300 + "}"
    return {
        "two-items": page(items),
        "continue": page(items[:1], cont="eyJ2IjoxfQ"),
        "empty-items": page([]),
        "null-items": '{"metadata":{"resourceVersion":"1"},"items":null}',
        "no-items": '{"metadata":{"resourceVersion":"1"}}',
        "bad-item-between": ('{"metadata":{"resourceVersion":"7"},"items":[' + good
                             + ',{"metadata":{"name":5}},"string",' + deep + "," + good + "]}"),
        "escapes-in-strings": ('{"metadata":{"resourceVersion":"2"},"items":[{"metadata":'
                               '{"name":"a\\\"]}","namespace":"n","uid":"u"}}]}'),
        "truncated": page(items)[:-7],
        "not-json": "<html>",
    }


def watch_line_seeds():
    def event(kind, obj):
        return dumps({"type": kind, "object": obj})
    status = {"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "Expired",
              "code": 410, "message": "too old resource version"}
    lines = [event("ADDED", sandbox()), event("MODIFIED", sandbox(spec={"operatingMode": "Suspended"})),
             event("DELETED", sandbox()),
             event("BOOKMARK", {"kind": "Sandbox", "metadata": {"resourceVersion": "12"}}),
             event("ERROR", status)]
    # The first byte picks the chunk size the stream is cut into.
    return {
        "stream": b"\x07" + "\n".join(lines).encode() + b"\n",
        "crlf-keepalives": b"\x01" + "\r\n\n".join(lines[:2]).encode(),
        "too-deep-deleted": b"\x05" + ('{"type":"DELETED","object":{"metadata":{"name":"a",'
                                        '"namespace":"n","uid":"u"},"spec":' + "[" * 200
                                        + "]" * 200 + "}}").encode() + b"\n",
        "overlong": b"\x3f" + event("MODIFIED", sandbox(annotations={"x": "y" * 5000})).encode(),
        "garbage": b"\x02not json\n{\"type\":1}\n",
    }


TARGETS = {
    "sandbox_json": sandbox_seeds, "policy_json": policy_seeds, "pod_json": pod_seeds,
    "api_status": status_seeds, "codec": codec_seeds, "duration": duration_seeds,
    "selector": selector_seeds, "kubeconfig": kubeconfig_seeds, "scenario": scenario_seeds,
    "list_page": list_page_seeds, "watch_line": watch_line_seeds,
}


def main():
    for target, make in TARGETS.items():
        d = os.path.join(CORPUS, target)
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        for name, data in make().items():
            if isinstance(data, str):
                data = data.encode()
            with open(os.path.join(d, name), "wb") as f:
                f.write(data)
    return 0


if __name__ == "__main__":
    sys.exit(main())
