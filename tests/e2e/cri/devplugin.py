#!/usr/bin/python3
"""corecarve device-plugin on a node, with the kubelet's device manager
played by the stand-in (devmgr.DeviceManager: Registration, ListAndWatch,
GetPreferredAllocation, Allocate with its answer cached, PodResources) and
the pods created through containerd's CRI by the kubelet stand-in
(kubelet.py), the Allocate answer's annotations in the ContainerConfig as
the kubelet puts them.  The node set up as pods.py does (the ConfigMap's
policy, containerd's snippet for the cgroupfs driver); the plugin is the
DaemonSet's device-plugin container, run through the CRI from the manifest
(its command with --grace 2, so that a deleted pod's grant goes within
seconds; its env, securityContext and hostPath mounts).

  capacity   each resource's Healthy devices are the whole cores `corecarve
             status` says its class can carve (minShared kept)
  granted    a pod asking corecarve.io/latency-cores: 2 with cpu: 2 is
             carved on exactly the granted cores, siblings parked; the
             cores turn Unhealthy for the classes that share them within a
             second, stay Healthy for latency
  forged     a container whose annotations carry a grant it was not given
             (another pod's, or a made-up token) is refused at its start,
             nothing carved
  shared     another class's Allocate of a granted core is refused
  plugin     the plugin's container stopped (StopContainer: SIGTERM, exit 0,
             sockets gone) and started again: registered again, the grant
             kept
  deleted    the pod deleted: its grant freed, its cores Healthy everywhere;
             the ledger empty at the end

What the real kubelet does with the plugin (registration, Allocate at
admission, a full class refused there, a container restart, an
annotation-only carve beside a grant, a kubelet restart, a deleted pod's
grant freed) is 55-kubelet's, with the real kubelet v1.37 (realkubelet.py);
what stays here is what no kubelet does or what it does not show: a
container whose annotations carry a grant it was not given, another class's
Allocate of a granted core, the Healthy lists against `corecarve status`,
the plugin's container stopped and started again.
"""
import json
import os
import time

import yaml

import daemonset as DS
import devmgr as D
import e2e
import kubelet as K
import node as N

DIR = "/var/lib/kubelet/device-plugins"
PODRES = "/var/lib/kubelet/pod-resources/kubelet.sock"
RES = {c: "corecarve.io/%s-cores" % c for c in ("latency", "isolated", "throughput")}


def t(name):
    return "devplugin-" + name


def grants():
    return {i: c for i, c in N.carves().items() if c.get("kind") == "grant"}


def of_grants():
    """The grants and the carves made from one."""
    return sorted(i for i, c in N.carves().items() if c.get("kind") == "grant" or c.get("grant"))


class Plugin:
    """The DaemonSet's device-plugin container, run through containerd's
    CRI as the kubelet runs it from the manifest (daemonset.ds_pod: its
    command, env, securityContext and hostPath mounts), with --grace 2 so
    that a deleted pod's grant goes within seconds."""

    def __init__(self, kl):
        with open(N.MANIFESTS + "/kubernetes/daemonset.yaml") as f:
            ds = yaml.safe_load(f)
        with open(N.MANIFESTS + "/kubernetes/configmap-policy.yaml") as f:
            cm = yaml.safe_load(f)
        self.kl = kl
        self.pod = DS.ds_pod(ds, cm, "device-plugin", False, "ds-devplugin", ["--grace", "2"])
        self.ctr = self.pod.containers["device-plugin"]

    def start(self):
        if self.pod.sandbox is None:
            err = self.kl.run_pod(self.pod)["device-plugin"]
        else:
            self.kl.cri.call("RemoveContainer", {"container_id": self.ctr.id})
            self.ctr.attempt += 1
            err = self.kl.start_container(self.pod, self.ctr)
        if err:
            raise RuntimeError("the device-plugin container did not start: %s" % err)

    def stop(self):
        """StopContainer as the kubelet does it (SIGTERM, then the grace
        period): the container's exit code."""
        self.kl.stop_container(self.ctr, timeout=10)
        st = self.kl.status(self.ctr)
        if st.get("state") != "CONTAINER_EXITED":
            return "state %s" % st.get("state")
        return st.get("exit_code", 0)  # proto3 JSON leaves a 0 out

    def running(self):
        return self.kl.status(self.ctr).get("state") == "CONTAINER_RUNNING"

    def delete(self):
        self.kl.delete_pod(self.pod)


def capacity(dm):
    st = {c["class"]: c for c in json.loads(N.sh("corecarve status --json"))["capacity"]}
    for cls, res in RES.items():
        c = st[cls]
        per_core = 2 if cls == "throughput" else 1  # smt: full takes both threads
        e2e.check_eq(t("capacity-" + cls), c["largest"] // per_core, len(dm.healthy(res)))
    e2e.info("devplugin: healthy %s" % {r: len(dm.healthy(r)) for r in RES.values()})


def main():
    t0 = time.time()
    with open(N.MANIFESTS + "/kubernetes/configmap-policy.yaml") as f:
        policy = yaml.safe_load(f)["data"]["policy.yaml"]
    N.install_corecarve(policy)
    N.containerd("cgroupfs")
    kl = K.Kubelet("cgroupfs")
    kl.start()
    os.makedirs(DIR, exist_ok=True)
    os.makedirs(os.path.dirname(PODRES), exist_ok=True)
    dm = D.DeviceManager(DIR, PODRES)
    plugin = Plugin(kl)
    plugin.start()
    pods = []
    try:
        dm.sync(RES.values())
        e2e.info("devplugin: %s registered, %.1fs after the setup began" % (sorted(dm.endpoint), time.time() - t0))
        run(dm, kl, plugin, pods)
    finally:
        for p in pods:
            try:
                kl.delete_pod(p)
            except Exception:  # noqa: BLE001 - cleanup
                pass
        try:
            plugin.delete()
        except Exception:  # noqa: BLE001 - cleanup
            pass
        dm.stop()


def run(dm, kl, plugin, pods):
    capacity(dm)
    lat, iso, thr = RES["latency"], RES["isolated"], RES["throughput"]
    # -- granted
    a = K.Pod("dp-a", [K.Ctr("engine", limit="2", memory="64Mi")])
    pods.append(a)
    ann = dm.admit(a.uid, "engine", lat, 2)
    ids = dm.ids_of(a.uid, "engine")
    a.containers["engine"].annotations = ann
    e2e.check_eq(t("granted-annotation"), ["corecarve.io/grant"], sorted(ann))
    err = kl.run_pod(a)["engine"]
    e2e.check_eq(t("granted-started"), None, err)
    c = N.carves().get(a.containers["engine"].id, {})
    want_cpus = sorted(int(i[3:]) for i in ids)
    e2e.check_eq(t("granted-cpus"), N.fmt(set(want_cpus)), c.get("cpus"))
    e2e.check_eq(t("granted-parked"), N.fmt({n + 1 for n in want_cpus}), c.get("parked"))
    e2e.check_eq(t("granted-grant"), ann["corecarve.io/grant"].rsplit(":", 1)[0], c.get("grant"))
    pid = kl.pid_of(a.containers["engine"])
    e2e.check_eq(t("granted-runs-on-grant"), c.get("cpus"), N.affinity(pid) if pid else "")
    e2e.check(t("granted-grant-out-of-ledger"), not grants(), "grants while carved: %s" % grants())
    for d in ids:
        secs = dm.wait_health(iso, d, "Unhealthy")
        e2e.check(t("granted-%s-unhealthy-for-isolated" % d), secs < 1.5, "after %.2fs" % secs)
        dm.wait_health(thr, d, "Unhealthy")
        e2e.check_eq(t("granted-%s-healthy-for-latency" % d), "Healthy", dm.health(lat, d))
    # -- forged
    value = ann["corecarve.io/grant"]
    for name, forged in (("copied", value), ("token", value[:-32] + "0123456789abcdef0123456789abcdef")):
        f = K.Pod("dp-f-" + name, [K.Ctr("engine", limit="2", memory="64Mi",
                                           annotations={"corecarve.io/grant": forged})])
        pods.append(f)
        err = kl.run_pod(f)["engine"] or ""
        want = "carved already" if name == "copied" else "no such grant in the ledger"
        e2e.check(t("forged-%s-refused" % name), want in err, "StartContainer: %r" % err)
        e2e.check(t("forged-%s-not-carved" % name), f.containers["engine"].id not in N.carves(), "carved")
    # -- shared: another class's Allocate of a granted core (a real kubelet
    # would not ask: the core is Unhealthy there).
    p = dm.plugin(iso)
    try:
        p.allocate([ids[0]])
        e2e.fail(t("shared-refused"), "isolated was granted %s" % ids[0])
    except D.grpc.RpcError as e:
        e2e.check(t("shared-refused"), e.code() == D.grpc.StatusCode.FAILED_PRECONDITION and "held by" in e.details(),
                  "%s %s" % (e.code(), e.details()))
    finally:
        p.close()
    # -- plugin
    n0 = len(dm.reg.registered)
    rc = plugin.stop()
    e2e.check_eq(t("plugin-sigterm-exit"), 0, rc)
    left = sorted(x for x in os.listdir(DIR) if x.startswith("corecarve-"))
    e2e.check_eq(t("plugin-sockets-removed"), [], left)
    dm.forget_lists()
    plugin.start()
    dm.reg.wait(n0 + len(RES))
    dm.sync(RES.values())
    e2e.check_eq(t("plugin-grant-kept"), "Healthy", dm.health(lat, ids[0]))
    e2e.check_eq(t("plugin-grant-kept-off-isolated"), "Unhealthy", dm.health(iso, ids[0]))
    # -- deleted
    kl.delete_pod(a)
    pods.remove(a)
    dm.forget(a.uid)
    t1 = time.time()
    end = t1 + 20
    while time.time() < end and of_grants():
        time.sleep(0.2)
    e2e.check(t("deleted-grant-freed"), not of_grants(), "after %.0fs: %s" % (time.time() - t1, of_grants()))
    e2e.info("devplugin: deleted pod's grant freed after %.1fs" % (time.time() - t1))
    for p2 in list(pods):
        kl.delete_pod(p2)
        pods.remove(p2)
    for d in ids:
        dm.wait_health(iso, d, "Healthy", timeout=10)
    e2e.passed(t("deleted-cores-healthy"))
    e2e.check_eq(t("end-ledger-empty"), {}, N.carves())


if __name__ == "__main__":
    e2e.run(main)
