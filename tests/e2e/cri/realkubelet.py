#!/usr/bin/python3
"""The real kubelet (issue #43): v1.37, built from its published Go module
by `make kubelet` (tests/e2e/k8s/mkkubelet.sh), run in the node guest in
standalone mode (no API server: static pods only) the way docs/guide.md
tells an operator to configure it: `cgroupDriver: systemd`, containerd's
snippet for that driver, `cpuManagerPolicy: none` (corecarve owns the
exclusive CPUs); corecarve's DaemonSet run as a static pod (its install,
audit and device-plugin containers, as daemonset_pod() says).

What is checked is what the kubelet itself does and says, in its own log
(journalctl -u) and in its device manager's checkpoint:

  ds          the DaemonSet's pod put before the hook is on the node: the
              kubelet cannot start it (runc fails its sandbox at the base
              spec's hook), and starts it by itself once the hook's files
              are there; its init container installs the policy
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
  plugin      the plugin's container ran through it, registering each
              resource twice
  pod         a static pod asking `cpu: 2` and `corecarve.io/latency-cores:
              2` (Guaranteed): the kubelet admits it, calls Allocate, and
              puts the grant's annotation into the container's CRI config;
              the hook carves exactly the granted cores, the devices the
              kubelet's checkpoint says it gave the pod; the container's
              and the pod's cpu.max are `max` while it runs (no quota on a
              carve).  On 6.1 (no partitions: cpuset-only) the root's other
              children still run on the carved CPUs until the audit's --fix
              takes them back
  restart     its container killed: the kubelet starts it again and the
              hook carves the same cores from the same grant
  annotated   a pod carved by its annotation alone beside it: a core of its
              own, and the kubelet's Healthy devices one fewer
  full        a pod asking one core more than the class has left: denied
              at the kubelet's admission (UnexpectedAdmissionError, its
              device manager's "requested number of devices unavailable"),
              no sandbox, nothing granted or carved
  gone        the manifests removed, the pods go and the grant is freed
              (PodResources no longer lists it)
  burstable   a Burstable pod (requests.cpu 100m, limits 2) and one without
  nolimit     any CPU asking for the class: granted by the kubelet (its
              device manager does not look at the CPU), refused by the hook
              at the start as the kubelet's log shows, naming the rule;
              nothing carved, the grant freed when the pod goes
  audit       corecarve audit is clean while they run and after; the
              node's top-level cgroups, IRQs and ledger as before; the
              DaemonSet's pod removed, the plugin's sockets go with it
"""
import copy
import glob
import json
import os
import re
import time

import yaml

import cri
import e2e
import node

KUBELET = "/e2e/bin/kubelet"
DP_DIR = "/var/lib/kubelet/device-plugins"
CHECKPOINT = DP_DIR + "/kubelet_internal_checkpoint"
CONFIG = "/etc/kubernetes/kubelet.yaml"
STATIC = "/etc/kubernetes/manifests"
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


def manifest(name, cpu, cores=None, annotations=None, requests_cpu=None):
    """A static pod of one container `engine`; `cores` of
    corecarve.io/latency-cores asked (requests and limits alike, as the API
    server requires of an extended resource); `cpu` its CPU limit (None:
    none), `requests_cpu` its CPU request when it differs."""
    req, lim = ["memory: 32Mi"], ["memory: 32Mi"]
    if cpu is not None:
        lim.append('cpu: "%s"' % cpu)
    if requests_cpu or cpu is not None:
        req.append('cpu: "%s"' % (requests_cpu or cpu))
    if cores:
        req.append('corecarve.io/latency-cores: "%d"' % cores)
        lim.append('corecarve.io/latency-cores: "%d"' % cores)
    ann = ""
    if annotations:
        ann = "  annotations:\n" + "".join("    %s: %s\n" % (k, json.dumps(v)) for k, v in annotations.items())
    return """apiVersion: v1
kind: Pod
metadata:
  name: %s
  namespace: default
%sspec:
  # No CNI in the guest: the node's network, as the stand-in's pods have.
  hostNetwork: true
  containers:
  - name: engine
    image: localhost/e2e/busybox:1
    imagePullPolicy: Never
    # The shell is its container's PID 1, which ignores a signal it set no
    # handler for: without the trap each pod's deletion waits out the
    # kubelet's 30 s grace period before SIGKILL.
    command: ["/bin/sh", "-c", "trap 'exit 0' TERM; while :; do grep Cpus_allowed_list /proc/self/status; sleep 5 & wait $!; done"]
    resources:
      requests: {%s}
      limits: {%s}
""" % (name, ann, ", ".join(req), ", ".join(lim))


def put(name, text):
    with open("%s/%s.yaml" % (STATIC, name), "w") as f:
        f.write(text)


def drop(name):
    try:
        os.unlink("%s/%s.yaml" % (STATIC, name))
    except FileNotFoundError:
        pass


def sandbox(pod):
    """The static pod's sandbox (its name is the manifest's, suffixed with
    the node's by the kubelet), as containerd's CRI lists it."""
    for s in cri.Client().call("ListPodSandbox", {}).get("items", []):
        md = s.get("metadata", {})
        # proto3 JSON leaves out an enum at its default: SANDBOX_READY is 0.
        if md.get("name", "").startswith(pod + "-") and s.get("state", "SANDBOX_READY") == "SANDBOX_READY":
            return s
    return None


def engine(pod, attempt=0):
    """The running container `engine` of `pod`, its restart count at least
    `attempt`, as containerd's CRI lists it."""
    sb = sandbox(pod)
    if sb is None:
        return None
    for c in cri.Client().call("ListContainers", {"filter": {"pod_sandbox_id": sb["id"]}}).get("containers", []):
        md = c.get("metadata", {})
        if md.get("name") == "engine" and c.get("state") == "CONTAINER_RUNNING" and md.get("attempt", 0) >= attempt:
            return c
    return None


def grants():
    return {i: c for i, c in node.carves().items() if c.get("kind") == "grant" or c.get("grant")}


def container_carves():
    return [c for c in node.carves().values() if c.get("kind") == "container"]


def carve_of(c):
    """The container's carve in the ledger (its id is the container's)."""
    return node.carves().get(c["id"]) if c else None


def core_ids(carve):
    """The devices (cpu<N>, N a core's lowest CPU) of a carve's cores: its
    CPUs with their parked siblings, one per core."""
    cpus = node.expand(carve.get("cpus")) | node.expand(carve.get("parked") or "")
    out = set()
    for c in cpus:
        sib = node.expand(sh("cat /sys/devices/system/cpu/cpu%d/topology/thread_siblings_list" % c).strip())
        out.add("cpu%d" % min(sib))
    return sorted(out)


def pod_devices(pod):
    """The device IDs the kubelet's device manager allocated to `pod`'s
    containers, from its checkpoint (PodDeviceEntries)."""
    try:
        with open(CHECKPOINT) as f:
            doc = json.load(f)
    except (OSError, ValueError):
        return []
    sb = sandbox(pod)
    uid = sb["metadata"]["uid"] if sb else None
    out = []
    for e in (doc.get("Data") or {}).get("PodDeviceEntries") or []:
        if e.get("PodUID") == uid:
            for ids in (e.get("DeviceIDs") or {}).values():
                out += ids
    return sorted(out)


def systemd_applies_again(carve):
    """What the kubelet's QoS update does through systemd at each pod's
    admission and every minute (CPUWeight= on kubepods-besteffort.slice
    and kubepods-burstable.slice): systemd applies each slice again and
    writes its cpuset.cpus from AllowedCPUs=.  corecarve gave systemd the
    value it wrote (cgroup/host.c), so a cpuset-only carve's narrowing of
    the slices stays (it was gone until the audit's repair, seen on Linux
    6.1).  CPUAccounting=yes changes nothing but makes systemd apply the
    unit again, as any property set through it does."""
    for unit in ("kubepods-besteffort.slice", "kubepods-burstable.slice"):
        path = "/sys/fs/cgroup/kubepods.slice/%s/cpuset.cpus" % unit
        if not os.path.exists(path):
            continue
        what = "%s-systemd-keeps-%s" % (carve, unit.split("-")[1].split(".")[0])
        before = sh("cat %s" % path).strip()
        if os.uname().release.startswith("6.1."):
            # cpuset-only: the carve narrowed the slice (else nothing to keep).
            e2e.check(what + "-narrowed", before != "", "%s reads \"\"" % path)
        sh("systemctl set-property --runtime %s CPUAccounting=yes" % unit)
        time.sleep(0.5)
        e2e.check_eq(what, before, sh("cat %s" % path).strip())
        e2e.info("%s: %s cpuset.cpus \"%s\" after systemd applied it again" % (what, unit, before))


def audit_clean(carve, what):
    """The audit while a carve runs: clean, on every kernel.  On Linux 6.1
    (no partitions: cpuset-only) that takes the carve's narrowing of every
    cgroup beside it and beside its ancestors: its pod's sandbox, the
    other pods' cgroups, the root's other children (the services' slice,
    init's scope: the kubelet's systemd driver enabled cpuset at the
    root), kept through systemd applying the slices again.  Each finding is
    logged."""
    systemd_applies_again(what)
    doc = node.audit()
    found = sorted("%s %s" % (f["code"], f.get("object")) for f in doc.get("findings", []))
    for f in doc.get("findings", []):
        e2e.info("%s (%s): audit: %s %s: %s" % (what, carve.get("mode"), f["code"], f.get("object"),
                                                f.get("actual")))
    e2e.check_eq(what + "-audit-clean", [], found)


def granted_pod():
    """A Guaranteed pod asking 2 cores of the class: admitted, allocated,
    carved on exactly the granted cores, no quota on it or its pod."""
    put("carved", manifest("carved", 2, cores=2))
    t0 = time.time()
    up = node.wait(lambda: engine("carved") is not None, timeout=180, step=1)
    for line in plugin_log().splitlines():
        if "Allocate" in line:
            e2e.info("plugin: " + line.strip()[:300])
    if not e2e.check("pod-running", up, "no running engine after 180 s; kubelet: %s" % journal("e2e-kubelet")[-600:]):
        return None
    e2e.info("the static pod's container running after %.1f s" % (time.time() - t0))
    c = engine("carved")
    ann = cri.Client().call("ContainerStatus", {"container_id": c["id"]}).get("status", {}).get("annotations", {})
    e2e.check("pod-grant-annotation", "corecarve.io/grant" in ann, "annotations: %s" % sorted(ann))
    k = carve_of(c)
    if not e2e.check("pod-carved", k is not None and k.get("grant"), "carves: %s" % node.carves()):
        return None
    gid = ann.get("corecarve.io/grant", "").rsplit(":", 1)[0]
    e2e.check_eq("pod-carved-the-grant", gid, k.get("grant"))
    e2e.check_eq("pod-two-cpus", 2, len(node.expand(k.get("cpus"))))
    # The kubelet's own record of what it gave: the carve's cores.
    e2e.check_eq("pod-kubelet-devices", core_ids(k), pod_devices("carved"))
    cg = k.get("cgroup", "")
    e2e.check_eq("pod-container-no-quota", "max", sh("cat /sys/fs/cgroup%s/cpu.max" % cg).split()[0])
    e2e.check_eq("pod-pod-no-quota", "max", sh("cat /sys/fs/cgroup%s/cpu.max" % os.path.dirname(cg)).split()[0])
    e2e.info("carve %s: cpus %s parked %s cgroup %s" % (k.get("id"), k.get("cpus"), k.get("parked"), cg))
    audit_clean(k, "pod")
    return k


def restarted(k):
    """The container killed: the kubelet starts it again (restartPolicy
    Always) with the same devices and so the same grant, and the hook
    carves the same cores; the dead container's carve is gone."""
    for pid in sh("cat /sys/fs/cgroup%s/cgroup.procs" % k["cgroup"]).split():
        sh("kill -KILL %s" % pid, check=False)
    t0 = time.time()
    up = node.wait(lambda: engine("carved", attempt=1) is not None, timeout=120, step=1)
    if not e2e.check("restart-running", up, "no restarted engine after 120 s; kubelet: %s" %
                     journal("e2e-kubelet")[-600:]):
        return k
    e2e.info("the container running again after %.1f s" % (time.time() - t0))
    again = carve_of(engine("carved", attempt=1))
    if not e2e.check("restart-carved", again is not None, "carves: %s" % node.carves()):
        return k
    e2e.check_eq("restart-same-cpus", (k.get("cpus"), k.get("parked")), (again.get("cpus"), again.get("parked")))
    e2e.check_eq("restart-same-grant", k.get("grant"), again.get("grant"))
    e2e.check_eq("restart-one-carve", [again["id"]], [c["id"] for c in container_carves()])
    return again


def annotated(k):
    """A Guaranteed pod of one CPU carved by its annotation alone beside the
    granted pod: its own core, and the class's capacity as the kubelet's
    device manager counts it (its checkpoint lists Healthy devices only)
    one core less: the carved core, or, where that was the one minShared
    kept, the next the plugin now keeps for the shared pool."""
    healthy = set(checkpoint_devices().get(RESOURCES[0], []))
    put("annotated", manifest("annotated", 1, annotations={"corecarve.io/placement": "{class: latency, cpus: 1}"}))
    up = node.wait(lambda: engine("annotated") is not None, timeout=180, step=1)
    if not e2e.check("annotated-running", up, "kubelet: %s" % journal("e2e-kubelet")[-600:]):
        return None
    a = carve_of(engine("annotated"))
    if not e2e.check("annotated-carved", a is not None and not a.get("grant"), "carves: %s" % node.carves()):
        return None
    e2e.check_eq("annotated-own-core", set(), set(core_ids(a)) & set(core_ids(k)))
    t0 = time.time()
    now = lambda: set(checkpoint_devices().get(RESOURCES[0], []))
    ok = node.wait(lambda: len(now()) == len(healthy) - 1 and not set(core_ids(a)) & now(), timeout=30, step=0.2)
    e2e.check("annotated-capacity", ok, "Healthy before %s, now %s, the carve's core %s" %
              (sorted(healthy), sorted(now()), core_ids(a)))
    e2e.info("annotated carve on %s: the kubelet's Healthy devices %s -> %s within %.1f s" %
             (core_ids(a), sorted(healthy), sorted(now()), time.time() - t0))
    audit_clean(a, "annotated")
    return a


def full():
    """A Guaranteed pod asking one core more than the class has left: the
    kubelet's admission refuses it (its device manager's Allocate at
    admission), no sandbox is made, nothing is granted or carved."""
    left = len(checkpoint_devices().get(RESOURCES[0], [])) - len(pod_devices("carved"))
    want = left + 1
    before = (sorted(grants()), sorted(c["id"] for c in container_carves()))
    put("full", manifest("full", want, cores=want))
    said = lambda: [l for l in journal("e2e-kubelet").splitlines()
                    if "Pod admission denied" in l and 'pod="default/full-' in l]
    ok = node.wait(said, timeout=120, step=1)
    if e2e.check("full-denied", ok, "kubelet: %s" % journal("e2e-kubelet")[-600:]):
        line = said()[0]
        e2e.info("kubelet: " + line.strip()[:500])
        e2e.check("full-devices-unavailable", "requested number of devices unavailable for %s. Requested: %d, Available: %d"
                  % (RESOURCES[0], want, left) in line, line[:500])
        e2e.check_in("full-reason", 'reason="UnexpectedAdmissionError"', line)
    time.sleep(3)
    e2e.check_eq("full-no-sandbox", None, sandbox("full"))
    e2e.check_eq("full-nothing-granted", before, (sorted(grants()), sorted(c["id"] for c in container_carves())))
    drop("full")


def refused(name, text, why):
    """A pod asking for the class whose CPU request does not pay for it: the
    kubelet admits it and grants the cores (its device manager does not
    look at the CPU), the hook refuses its container at the start as the
    kubelet's log shows, naming the request; nothing carved, the grant freed
    when the pod goes."""
    put(name, text)
    said = lambda: [l for l in journal("e2e-kubelet").splitlines() if name + "-" in l and "corecarve:" in l]
    ok = node.wait(said, timeout=180, step=1)
    e2e.check(name + "-refused", ok, "the kubelet said nothing of corecarve's refusal: %s" %
              journal("e2e-kubelet")[-500:])
    if ok:
        line = said()[0]
        e2e.info("kubelet: " + line.strip()[:400])
        e2e.check_in(name + "-names-request", why, line)
    e2e.check_eq(name + "-nothing-carved", [], container_carves())
    drop(name)
    gone = node.wait(lambda: not grants(), timeout=120, step=1)
    e2e.check(name + "-grant-freed", gone, "grants left: %s" % sorted(grants()))


def snapshot():
    """What corecarve may change on the node and must give back: each
    top-level cgroup's cpuset and quota, each IRQ's affinity, the ledger."""
    cg = sh("for d in /sys/fs/cgroup/*/; do for f in cpuset.cpus cpuset.cpus.partition cpuset.mems cpu.max; do "
            "[ -r $d$f ] && printf '%s %s\\n' $d$f \"$(cat $d$f)\"; done; done", check=False)
    irq = sh("grep -H . /proc/irq/[0-9]*/smp_affinity_list", check=False)
    return sorted(cg.splitlines()) + sorted(irq.splitlines()) + sorted(node.carves())


POLICY_DIR = "/etc/kubernetes/corecarve-policy"


def daemonset_pod():
    """The DaemonSet's pod (manifests/kubernetes/daemonset.yaml) as a static
    pod of the standalone kubelet, changed only where a static pod must
    differ: its ConfigMap volume becomes the directory the kubelet would
    have made of it (a static pod may name no API object: the kubelet
    refuses one that does), holding the policy; it runs in the node's
    network namespace, as the test pods do (the guest has no pod network:
    containerd's CNI bridge fails every sandbox; the DaemonSet needs none);
    and the device plugin is given --grace 5 so that a deleted pod's grant
    goes within seconds rather than the default minute."""
    with open(node.MANIFESTS + "/kubernetes/daemonset.yaml") as f:
        ds = yaml.safe_load(f)
    tpl = ds["spec"]["template"]
    spec = copy.deepcopy(tpl["spec"])
    os.makedirs(POLICY_DIR, exist_ok=True)
    with open(POLICY_DIR + "/policy.yaml", "w") as f:
        f.write(node.POLICY)
    for v in spec["volumes"]:
        if "configMap" in v:
            del v["configMap"]
            v["hostPath"] = {"path": POLICY_DIR, "type": "Directory"}
    spec["hostNetwork"] = True
    for c in spec["containers"]:
        if c["name"] == "device-plugin":
            c["args"] = c.get("args", []) + ["--grace", "5"]
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": ds["metadata"]["name"], "namespace": ds["metadata"]["namespace"],
                        "labels": tpl["metadata"].get("labels", {})},
           "spec": spec}
    return yaml.safe_dump(pod, sort_keys=False)


def ds_container(name):
    """The DaemonSet pod's running container `name`."""
    sb = sandbox("corecarve")
    if sb is None:
        return None
    for c in cri.Client().call("ListContainers", {"filter": {"pod_sandbox_id": sb["id"]}}).get("containers", []):
        if c.get("metadata", {}).get("name") == name and c.get("state") == "CONTAINER_RUNNING":
            return c
    return None


def ds_log(name):
    """What the DaemonSet pod's container `name` wrote, every attempt, from
    the log files the kubelet keeps (/var/log/pods/<namespace>_<pod>_<uid>:
    the static pod's name is suffixed with the node's; 54-cri-devplugin's
    stand-in left a corecarve-x of its own)."""
    out = []
    for path in sorted(glob.glob("/var/log/pods/corecarve-system_corecarve-%s_*/%s/*.log" %
                                 (os.uname().nodename, name))):
        with open(path, errors="replace") as f:
            out += [l.split(" ", 3)[-1] for l in f.read().splitlines()]
    return "\n".join(out)


def said_of(pod, what):
    """The kubelet's log lines on `pod` that hold `what`, each cut to what
    matters: from runc's own words where the line has them."""
    out = []
    for l in journal("e2e-kubelet").splitlines():
        if pod in l and what in l:
            i = l.find("error running")
            out.append((l[:120] + " ... " + l[i:i + 400]) if i > 0 else l[:600])
    return out


def plugin_log():
    return ds_log("device-plugin")


def main():
    if not os.access(KUBELET, os.X_OK):
        e2e.fail("kubelet-present", "%s missing: mkinit.sh copies it for scenarios marked e2e-needs: kubelet" % KUBELET)
        return
    e2e.info("kubelet: %s" % sh(KUBELET + " --version").strip())
    # A node corecarve was never installed on: what an earlier scenario of
    # this boot installed (54-cri-devplugin runs before on the same guest)
    # goes.
    sh("rm -rf /opt/corecarve /etc/corecarve /etc/containers/oci/hooks.d/corecarve-*.json")
    # containerd with the snippet (docs/guide.md): its base spec names
    # /opt/corecarve/bin/corecarve-hook for every container, the pods'
    # sandboxes included, before anything installed it.
    node.containerd("systemd")
    os.makedirs(STATIC, exist_ok=True)
    with open(CONFIG, "w") as f:
        f.write(KUBELET_CONFIG)
    t0 = time.time()
    start_kubelet()
    up = node.wait(lambda: os.path.exists(DP_DIR + "/kubelet.sock"), timeout=180, step=0.5)
    if not e2e.check("kubelet-started", up, "no %s/kubelet.sock after 180 s: %s" % (DP_DIR, journal("e2e-kubelet")[-600:])):
        return
    e2e.info("kubelet: its registration socket after %.1f s" % (time.time() - t0))
    # The DaemonSet's pod cannot start while the hook it installs is not on
    # the node yet: runc fails its sandbox at the base spec's hook.
    put("corecarve", daemonset_pod())
    hookless = lambda: said_of("corecarve-" + os.uname().nodename, "corecarve-hook")
    ok = node.wait(hookless, timeout=120, step=1)
    if e2e.check("ds-needs-the-hook", ok, "kubelet: %s" % journal("e2e-kubelet")[-600:]):
        e2e.info("kubelet: " + hookless()[0])
    # What the guide's order (the DaemonSet before the snippet), or a node
    # image that bakes the snippet in together with /opt/corecarve, gives.
    node.install_corecarve()
    t0 = time.time()
    up = node.wait(lambda: ds_container("device-plugin") and ds_container("audit"), timeout=240, step=1)
    if not e2e.check("ds-running", up, "install's log: %s; the kubelet's last word on it: %s" %
                     (ds_log("install")[-800:], said_of("corecarve-" + os.uname().nodename, "failed")[-1:])):
        return
    e2e.info("the DaemonSet's pod running %.1f s after the hook was on the node (the kubelet's retry)" %
             (time.time() - t0))
    e2e.info("install: " + ds_log("install").strip()[-300:])
    with open("/etc/corecarve/policy.yaml") as f:
        e2e.check_eq("ds-installed-policy", node.POLICY, f.read())
    t0 = time.time()
    ok = node.wait(lambda: set(RESOURCES) <= set(registrations(journal("e2e-kubelet"))), timeout=60, step=0.5)
    log = journal("e2e-kubelet")
    e2e.check("registered", ok, "the kubelet logged %s; plugin: %s" %
              (registrations(log), plugin_log()[-400:]))
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
              (registrations(journal("e2e-kubelet")), plugin_log()[-400:]))
    again = registrations(journal("e2e-kubelet"))[before:]
    e2e.check_eq("restart-every-resource", sorted(RESOURCES), sorted(set(again)))

    # The plugin went on through the restart (it says, once, that it waits
    # for the kubelet's new socket and its own sockets made again).
    plog = plugin_log()
    dp = ds_container("device-plugin")
    e2e.check("plugin-running", dp and not dp.get("metadata", {}).get("attempt"), "the container: %s" % dp)
    for r in RESOURCES:
        e2e.check_eq("plugin-registered-twice-" + r.split("/")[1], 2, plog.count("registered %s on" % r))
    before = snapshot()
    k = granted_pod()
    if k:
        k = restarted(k)
        a = annotated(k)
        full()
        drop("annotated")
        ok = node.wait(lambda: engine("annotated") is None, timeout=120, step=1)
        e2e.check("annotated-gone", ok, "engine still running")
    drop("carved")
    t0 = time.time()
    ok = node.wait(lambda: engine("carved") is None, timeout=120, step=1)
    e2e.check("pod-gone", ok, "engine still running")
    e2e.info("the static pod's container gone %.1f s after its manifest" % (time.time() - t0))
    freed = node.wait(lambda: not grants(), timeout=60, step=1)
    e2e.check("pod-grant-freed", freed, "grants left: %s; plugin: %s" %
              (sorted(grants()), plugin_log()[-300:]))
    # Burstable: requests.cpu 100m, limits.cpu 2; BestEffort: no CPU asked.
    e2e.info("the grant freed %.1f s after the pod's manifest went" % (time.time() - t0))
    refused("burstable", manifest("burstable", 2, cores=2, requests_cpu="100m"), "requests.cpu")
    refused("nolimit", manifest("nolimit", None, cores=2), "withoutCpuLimit.kubernetes: refuse")
    e2e.check_eq("audit-clean", [], node.codes(node.audit()))
    after = snapshot()
    was, now = sorted(set(before) - set(after)), sorted(set(after) - set(before))
    if os.uname().release.startswith("6.1."):
        # Linux 6.1 refuses the empty (inheriting) cpuset.cpus on a cgroup
        # with tasks (ENOSPC): what a carve narrowed (the root's other
        # children) gets its parent's CPUs written out instead
        # (cgroup/carve_undo.c write_inherit).
        cpus = sh("cat /sys/fs/cgroup/cpuset.cpus.effective").strip()
        kept = [w for w in was if w.endswith("/cpuset.cpus ") and w + cpus in now]
        for w in kept:
            e2e.info("6.1: %s came back as %s, its parent's CPUs (ENOSPC on the empty set)" % (w.split()[0], cpus))
            was.remove(w)
            now.remove(w + cpus)
    e2e.check("node-as-before", not was and not now, "before: %s; after: %s" % (was, now))
    # The DaemonSet's pod goes: the kubelet stops the plugin (SIGTERM),
    # which removes its sockets.
    drop("corecarve")
    t0 = time.time()
    ok = node.wait(lambda: ds_container("device-plugin") is None, timeout=120, step=1)
    e2e.check("ds-gone", ok, "the plugin still runs")
    e2e.info("the DaemonSet's pod gone %.1f s after its manifest" % (time.time() - t0))
    e2e.check_eq("plugin-sockets-gone", [], sorted(glob.glob(DP_DIR + "/corecarve-*.sock")))
    sh("systemctl stop e2e-kubelet", check=False)


if __name__ == "__main__":
    e2e.run(main)
