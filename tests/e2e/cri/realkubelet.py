#!/usr/bin/python3
"""The real kubelet (issue #43): v1.37, built from its published Go module
by `make kubelet` (tests/e2e/k8s/mkkubelet.sh), run in the node guest in
standalone mode (no API server: static pods only) the way docs/guide.md
tells an operator to configure it: `cgroupDriver: systemd`, containerd's
snippet for that driver, `cpuManagerPolicy: none` (corecarve owns the
exclusive CPUs); corecarve installed by the DaemonSet's installer and
`corecarve device-plugin` run as its systemd unit runs it.

What is checked is what the kubelet itself does and says, in its own log
(journalctl -u) and in its device manager's checkpoint:

  registered  every exclusive class of the policy registers: the kubelet
              logs "Got registration request from device plugin" for each
              resource (its Register handler calls the plugin's
              GetDevicePluginOptions back before it answers: a plugin that
              cannot serve while it registers never gets there), and its
              checkpoint (kubelet_internal_checkpoint) lists each
              resource's devices, those the plugin offers
  restart     the kubelet restarted (it removes the plugin's sockets and
              makes its own anew): every resource registers again, the
              devices are listed again
  plugin      the plugin ran through it, registering each resource twice
  pod         a static pod asking `cpu: 2` and `corecarve.io/latency-cores:
              2` (Guaranteed): the kubelet admits it, calls Allocate, and
              puts the grant's annotation into the container's CRI config;
              the hook carves exactly the granted cores; the container's
              and the pod's cpu.max are `max` while it runs (no quota on a
              carve); the manifest removed, the pod goes and its grant is
              freed (PodResources no longer lists it).  On 6.1 (no
              partitions: cpuset-only) the root's other children still run
              on the carved CPUs until the audit's --fix takes them back
  burstable   a Burstable pod (requests.cpu 100m, limits 2) asking for the
              class: granted by the kubelet, refused by the hook at its
              start as the kubelet's log shows, nothing carved, the grant
              freed when the pod goes
  audit       corecarve audit is clean while it runs and after
"""
import json
import os
import re
import time

import e2e
import node

KUBELET = "/e2e/bin/kubelet"
DP_DIR = "/var/lib/kubelet/device-plugins"
CHECKPOINT = DP_DIR + "/kubelet_internal_checkpoint"
CONFIG = "/etc/kubernetes/kubelet.yaml"
# Standalone: no kubeconfig, static pods from a directory.  The server
# answers on localhost only, without authentication (a test guest).
KUBELET_CONFIG = """apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
cgroupDriver: systemd
containerRuntimeEndpoint: unix:///run/containerd/containerd.sock
staticPodPath: /etc/kubernetes/manifests
cpuManagerPolicy: none
failSwapOn: false
address: 127.0.0.1
readOnlyPort: 0
authentication:
  anonymous:
    enabled: true
  webhook:
    enabled: false
authorization:
  mode: AlwaysAllow
fileCheckFrequency: 2s
syncFrequency: 5s
"""
# The policy's exclusive classes (node.POLICY): each is a resource.
RESOURCES = ["corecarve.io/latency-cores", "corecarve.io/throughput-cores"]


def sh(cmd, check=True, timeout=120):
    return node.sh(cmd, check=check, timeout=timeout)


def journal(unit):
    return sh("journalctl -q -o cat --no-pager -u %s" % unit, check=False)


def registrations(log):
    """The resources of the kubelet's "Got registration request" lines, in
    order (server.go Register, klog structured: resourceName="...")."""
    return re.findall(r'Got registration request from device plugin with resource"? resourceName="([^"]+)"', log)


def checkpoint_devices():
    """{resource: [device IDs]} from the kubelet's device manager
    checkpoint (checkpoint.Data: RegisteredDevices)."""
    try:
        with open(CHECKPOINT) as f:
            doc = json.load(f)
    except (OSError, ValueError):
        return {}
    return (doc.get("Data") or {}).get("RegisteredDevices") or {}


def start_kubelet():
    sh("systemd-run --unit=e2e-kubelet --property=Delegate=yes --property=KillMode=process %s --config=%s --v=2"
       % (KUBELET, CONFIG))


POD = """apiVersion: v1
kind: Pod
metadata:
  name: carved
  namespace: default
spec:
  # No CNI in the guest: the node's network, as the stand-in's pods have.
  hostNetwork: true
  containers:
  - name: engine
    image: localhost/e2e/busybox:1
    imagePullPolicy: Never
    command: ["/bin/sh", "-c", "while :; do grep Cpus_allowed_list /proc/self/status; sleep 5; done"]
    resources:
      requests: {cpu: "2", memory: 32Mi, corecarve.io/latency-cores: "2"}
      limits: {cpu: "2", memory: 32Mi, corecarve.io/latency-cores: "2"}
"""


def engine():
    """The static pod's running container, as containerd's CRI lists it."""
    import cri
    for c in cri.Client().call("ListContainers", {}).get("containers", []):
        if c.get("metadata", {}).get("name") == "engine" and c.get("state") == "CONTAINER_RUNNING":
            return c
    return None


def grants():
    return {i: c for i, c in node.carves().items() if c.get("kind") == "grant" or c.get("grant")}


def static_pod():
    path = "/etc/kubernetes/manifests/carved.yaml"
    with open(path, "w") as f:
        f.write(POD)
    t0 = time.time()
    up = node.wait(lambda: engine() is not None, timeout=180, step=1)
    for line in journal("e2e-device-plugin").splitlines():
        if "Allocate" in line:
            e2e.info("plugin: " + line.strip()[:300])
    if not e2e.check("pod-running", up, "no running engine after 180 s; kubelet: %s" % journal("e2e-kubelet")[-600:]):
        os.unlink(path)
        return
    e2e.info("the static pod's container running after %.1f s" % (time.time() - t0))
    import cri
    c = engine()
    ann = cri.Client().call("ContainerStatus", {"container_id": c["id"]}).get("status", {}).get("annotations", {})
    e2e.check("pod-grant-annotation", "corecarve.io/grant" in ann, "annotations: %s" % sorted(ann))
    carved = [x for x in node.carves().values() if x.get("kind") == "container" and x.get("grant")]
    if e2e.check("pod-carved", len(carved) == 1, "carves: %s" % node.carves()):
        k = carved[0]
        gid = ann.get("corecarve.io/grant", "").rsplit(":", 1)[0]
        e2e.check_eq("pod-carved-the-grant", gid, k.get("grant"))
        e2e.check_eq("pod-two-cpus", 2, len(node.expand(k.get("cpus"))))
        cg = k.get("cgroup", "")
        e2e.check_eq("pod-container-no-quota", "max", node.sh("cat /sys/fs/cgroup%s/cpu.max" % cg).split()[0])
        e2e.check_eq("pod-pod-no-quota", "max",
                     node.sh("cat /sys/fs/cgroup%s/cpu.max" % os.path.dirname(cg)).split()[0])
        e2e.info("carve %s: cpus %s parked %s cgroup %s" % (k.get("id"), k.get("cpus"), k.get("parked"), cg))
    doc = node.audit()
    found = sorted("%s %s" % (f["code"], f.get("object")) for f in doc.get("findings", []))
    if carved and carved[0].get("mode") == "cpuset-only":
        # Linux 6.1 has no partition to carve: the carve is cpuset-only,
        # and the kubelet's systemd driver has enabled cpuset at the root,
        # so the root's other children (the services' slice and init's
        # scope, which the hook does not narrow) still run on the carved
        # CPUs: what the audit finds, and what its --fix (the DaemonSet's
        # AUTOFIX) takes back, as on every cpuset-only node.
        e2e.check_eq("pod-cpuset-only-leaks", ["SOFT_EXCLUSIVITY_LEAK cgroup /init.scope",
                                               "SOFT_EXCLUSIVITY_LEAK cgroup /system.slice",
                                               "SPLIT_CORE cgroup /init.scope", "SPLIT_CORE cgroup /system.slice"],
                     found)
        fixed = node.audit("--fix")
        e2e.check_eq("pod-audit-fixed", [], node.codes(fixed))
    else:
        e2e.check_eq("pod-audit-clean", [], found)
    os.unlink(path)
    gone = node.wait(lambda: engine() is None, timeout=120, step=1)
    e2e.check("pod-gone", gone, "engine still running")
    freed = node.wait(lambda: not grants(), timeout=60, step=1)
    e2e.check("pod-grant-freed", freed, "grants left: %s; plugin: %s" %
              (sorted(grants()), journal("e2e-device-plugin")[-300:]))


BURSTABLE = POD.replace("name: carved", "name: burstable").replace(
    'requests: {cpu: "2", memory: 32Mi, corecarve.io/latency-cores: "2"}',
    'requests: {cpu: 100m, memory: 32Mi, corecarve.io/latency-cores: "2"}')


def burstable_pod():
    """A Burstable pod (requests.cpu 100m, limits.cpu 2) asking for the
    class: the kubelet admits it and grants the cores, the hook refuses its
    container at the start (the scheduler charged 0.1 CPU), nothing is
    carved; what the kubelet says of it is its own log's line."""
    path = "/etc/kubernetes/manifests/burstable.yaml"
    with open(path, "w") as f:
        f.write(BURSTABLE)
    said = lambda: [l for l in journal("e2e-kubelet").splitlines() if "burstable" in l and "corecarve:" in l]
    ok = node.wait(lambda: said(), timeout=180, step=1)
    e2e.check("burstable-refused", ok, "the kubelet said nothing of corecarve's refusal: %s" %
              journal("e2e-kubelet")[-500:])
    if ok:
        line = said()[0]
        e2e.info("kubelet: " + line.strip()[:400])
        e2e.check("burstable-names-request", "requests.cpu" in line, line[:400])
    e2e.check_eq("burstable-nothing-carved", [], [c for c in node.carves().values() if c.get("kind") == "container"])
    os.unlink(path)
    gone = node.wait(lambda: not grants(), timeout=120, step=1)
    e2e.check("burstable-grant-freed", gone, "grants left: %s" % sorted(grants()))


def main():
    if not os.access(KUBELET, os.X_OK):
        e2e.fail("kubelet-present", "%s missing: mkinit.sh copies it for scenarios marked e2e-needs: kubelet" % KUBELET)
        return
    e2e.info("kubelet: %s" % sh(KUBELET + " --version").strip())
    node.install_corecarve()
    node.containerd("systemd")
    os.makedirs("/etc/kubernetes/manifests", exist_ok=True)
    with open(CONFIG, "w") as f:
        f.write(KUBELET_CONFIG)
    t0 = time.time()
    start_kubelet()
    up = node.wait(lambda: os.path.exists(DP_DIR + "/kubelet.sock"), timeout=180, step=0.5)
    if not e2e.check("kubelet-started", up, "no %s/kubelet.sock after 180 s: %s" % (DP_DIR, journal("e2e-kubelet")[-600:])):
        return
    e2e.info("kubelet: its registration socket after %.1f s" % (time.time() - t0))
    # corecarve-device-plugin.service's command, as its unit runs it.
    sh("systemd-run --unit=e2e-device-plugin --property=Environment=CORECARVE_POLICY=/etc/corecarve/policy.yaml "
       "/usr/bin/corecarve device-plugin --dir %s --grace 5" % DP_DIR)
    t0 = time.time()
    ok = node.wait(lambda: set(RESOURCES) <= set(registrations(journal("e2e-kubelet"))), timeout=60, step=0.5)
    log = journal("e2e-kubelet")
    e2e.check("registered", ok, "the kubelet logged %s; plugin: %s" %
              (registrations(log), journal("e2e-device-plugin")[-400:]))
    for line in log.splitlines():
        if "registration request" in line or "Device plugin connected" in line or "Connected to new client" in line:
            e2e.info("kubelet: " + line.strip()[:300])
    e2e.info("registered within %.1f s" % (time.time() - t0))
    ok = node.wait(lambda: all(checkpoint_devices().get(r) for r in RESOURCES), timeout=60, step=0.5)
    devs = checkpoint_devices()
    e2e.check("checkpoint-devices", ok, "checkpoint: %s" % devs)
    e2e.info("the kubelet's checkpoint: %s" % {r: sorted(devs.get(r, [])) for r in RESOURCES})

    # A kubelet restart: its directory emptied, its socket made anew.
    before = len(registrations(journal("e2e-kubelet")))
    sh("systemctl restart e2e-kubelet")
    ok = node.wait(lambda: len(registrations(journal("e2e-kubelet"))) >= before + len(RESOURCES), timeout=120,
                   step=0.5)
    e2e.check("restart-registered", ok, "registrations %s; plugin: %s" %
              (registrations(journal("e2e-kubelet")), journal("e2e-device-plugin")[-400:]))
    again = registrations(journal("e2e-kubelet"))[before:]
    e2e.check_eq("restart-every-resource", sorted(RESOURCES), sorted(set(again)))

    # The plugin went on through the restart (it says, once, that it waits
    # for the kubelet's new socket and its own sockets made again).
    plog = journal("e2e-device-plugin")
    e2e.check_eq("plugin-running", "active", sh("systemctl is-active e2e-device-plugin", check=False).strip())
    for r in RESOURCES:
        e2e.check_eq("plugin-registered-twice-" + r.split("/")[1], 2, plog.count("registered %s on" % r))
    static_pod()
    burstable_pod()
    doc = node.audit()
    e2e.check_eq("audit-clean", [], node.codes(doc))
    sh("systemctl stop e2e-device-plugin", check=False)
    sh("systemctl stop e2e-kubelet", check=False)


if __name__ == "__main__":
    e2e.run(main)
