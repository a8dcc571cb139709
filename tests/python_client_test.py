#!/usr/bin/python3
"""The official Kubernetes Python client (Debian's python3-kubernetes) against
`fencekeeper sim`, as an operator's rehearsal script would use it: typed
create and list of NetworkPolicies (policyTypes defaulted), the client's own
watch from a list's resourceVersion (it sends watch=True), merge patches,
404 and 409 Status bodies, paged lists, and events.k8s.io/v1.

Environment: FENCEKEEPER (the binary), SCENARIO (a scenario file).
Exits 77 (skipped) when the kubernetes module is missing; CI installs it.
"""
import datetime
import json
import os
import subprocess
import sys
import tempfile
import time

try:
    from kubernetes import client, config, watch
    from kubernetes.client.rest import ApiException
except ImportError:
    print("SKIPPED: python3-kubernetes is not installed; the Python client test did not run")
    sys.exit(77)

NS = "team-healthy"
GROUP, VERSION, PLURAL = "agents.x-k8s.io", "v1beta1", "sandboxes"


def start_simulator(workdir):
    kubeconfig = os.path.join(workdir, "kubeconfig")
    log = open(os.path.join(workdir, "sim.out"), "w")
    sim = subprocess.Popen([os.environ["FENCEKEEPER"], "sim", "--listen", "127.0.0.1:0",
                            "--scenario", os.environ["SCENARIO"],
                            "--write-kubeconfig", kubeconfig], stdout=log, stderr=log)
    deadline = time.monotonic() + 10
    while not (os.path.exists(kubeconfig) and os.path.getsize(kubeconfig) > 0):
        if sim.poll() is not None or time.monotonic() > deadline:
            sim.kill()
            sys.exit("FAIL: the simulator did not start")
        time.sleep(0.05)
    return sim, kubeconfig


def policy(name, egress=None, ingress=None):
    return client.V1NetworkPolicy(
        metadata=client.V1ObjectMeta(name=name),
        spec=client.V1NetworkPolicySpec(
            pod_selector=client.V1LabelSelector(match_labels={"app": name}),
            egress=egress, ingress=ingress))


def expect(cond, what):
    if not cond:
        sys.exit("FAIL: " + what)


def expect_status(call, code, reason):
    try:
        call()
    except ApiException as e:
        expect(e.status == code, "status %d, want %d: %s" % (e.status, code, e.body))
        body = json.loads(e.body)
        expect(body.get("kind") == "Status" and body.get("reason") == reason,
               "a Status body with reason %s: %s" % (reason, e.body))
        return
    sys.exit("FAIL: no %d %s" % (code, reason))


def network_policies(net):
    # Typed create: policyTypes defaulted as the API server does it.
    allow_dns = net.create_namespaced_network_policy(NS, policy(
        "allow-dns", egress=[client.V1NetworkPolicyEgressRule(
            ports=[client.V1NetworkPolicyPort(port=53, protocol="UDP")])]))
    expect(allow_dns.spec.policy_types == ["Ingress", "Egress"],
           "allow-dns policyTypes %s" % allow_dns.spec.policy_types)
    web = net.create_namespaced_network_policy(NS, policy(
        "web", ingress=[client.V1NetworkPolicyIngressRule()]))
    expect(web.spec.policy_types == ["Ingress"], "web policyTypes %s" % web.spec.policy_types)
    listed = net.list_namespaced_network_policy(NS)
    names = [p.metadata.name for p in listed.items]
    expect("allow-dns" in names and "web" in names, "typed list: %s" % names)
    # 409 AlreadyExists and 404 NotFound, as Status bodies the client parses.
    expect_status(lambda: net.create_namespaced_network_policy(NS, policy("web")),
                  409, "AlreadyExists")
    expect_status(lambda: net.read_namespaced_network_policy("no-such-policy", NS),
                  404, "NotFound")
    return listed.metadata.resource_version


def client_watch(net, from_rv):
    # The client's own watch (watch=True) from the list's resourceVersion
    # sees what was created after the list.
    net.create_namespaced_network_policy(NS, policy("late"))
    w = watch.Watch()
    seen = []
    for event in w.stream(net.list_namespaced_network_policy, NS,
                          resource_version=from_rv, timeout_seconds=5):
        seen.append((event["type"], event["object"].metadata.name))
        if event["object"].metadata.name == "late":
            w.stop()
    expect(("ADDED", "late") in seen, "the watch from rv %s saw %s" % (from_rv, seen))


def sandboxes(custom):
    # Paged list: limit and _continue until the last page.
    names, token, pages = [], None, 0
    while True:
        kwargs = {"limit": 2}
        if token:
            kwargs["_continue"] = token
        page = custom.list_cluster_custom_object(GROUP, VERSION, PLURAL, **kwargs)
        pages += 1
        names += [o["metadata"]["name"] for o in page["items"]]
        token = page["metadata"].get("continue")
        if not token:
            break
    expect(pages > 1 and len(names) == len(set(names)) and "active-1" in names,
           "paged list: %d pages, %s" % (pages, names))
    # Merge patch: a metadata-only change keeps the generation; a spec change bumps it.
    sb = custom.get_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, "healthy-1")
    generation = sb["metadata"]["generation"]
    patched = custom.patch_namespaced_custom_object(
        GROUP, VERSION, NS, PLURAL, "healthy-1",
        {"metadata": {"annotations": {"example.com/note": "hello"}}})
    expect(patched["metadata"]["generation"] == generation and
           patched["metadata"]["annotations"]["example.com/note"] == "hello",
           "merge patch of an annotation: %s" % patched["metadata"])
    # 409 Conflict: a replace carrying a stale resourceVersion.
    stale = dict(sb)
    expect_status(lambda: custom.replace_namespaced_custom_object(
        GROUP, VERSION, NS, PLURAL, "healthy-1", stale), 409, "Conflict")


def events(ev):
    created = ev.create_namespaced_event(NS, client.EventsV1Event(
        metadata=client.V1ObjectMeta(generate_name="rehearsal-"),
        event_time=datetime.datetime.now(datetime.timezone.utc),
        reporting_controller="example.com/rehearsal", reporting_instance="rehearsal-1",
        action="Rehearse", reason="Rehearsal", type="Normal", note="a rehearsal",
        regarding=client.V1ObjectReference(kind="Sandbox", namespace=NS, name="healthy-1",
                                           api_version="agents.x-k8s.io/v1beta1")))
    listed = ev.list_namespaced_event(NS)
    expect(any(e.metadata.name == created.metadata.name and e.reason == "Rehearsal"
               for e in listed.items), "events.k8s.io/v1 list lacks the created Event")


def main():
    with tempfile.TemporaryDirectory() as workdir:
        sim, kubeconfig = start_simulator(workdir)
        try:
            config.load_kube_config(config_file=kubeconfig)
            net = client.NetworkingV1Api()
            client_watch(net, network_policies(net))
            sandboxes(client.CustomObjectsApi())
            events(client.EventsV1Api())
        except SystemExit:
            print(open(os.path.join(workdir, "sim.out")).read())
            raise
        finally:
            sim.kill()
            sim.wait()
    print("ok: the official Python client works against fencekeeper sim")


if __name__ == "__main__":
    main()
