#!/usr/bin/python3
"""The CRI scenarios: pods driven through containerd's CRI the way the
kubelet drives them, with the kubelet's cgroup driver `cgroupfs` or
`systemd` (argv[1]).  The node is set up from the repository's manifests:
the ConfigMap's policy installed by the DaemonSet's installer, containerd
configured with manifests/containerd for that driver.

  example   manifests/kubernetes/pod-example.yaml: per-container
            annotations; engine and feed carved, logs and the sandbox not
            (cpuset-only on 6.1: logs, started after the carves, is
            narrowed off them by the hook at its start)
  podwide   examples/kubernetes-pod.yaml: a pod-wide annotation and a
            per-container one that wins (metrics gets the pod-wide
            background, a shared class: narrowed to its pool, not recorded)
  plain     an unannotated pod beside a carve: not carved, off the
            carve's CPUs (cpuset-only on 6.1: the hook narrows it at its
            start, as the carve's peer)
  refused   a carve that cannot fit: StartError with corecarve's reason,
            nothing changed
  resize    in-place resize up and down while carved: the kubelet's
            cpu.max on the container and the pod; the audit finds the
            double constraint, the DaemonSet's --fix lifts it, their value
            is restored at the end; systemd: daemon-reload re-applies
            CPUQuota= on the scope and the slice, and a second container
            in the slice
  restart   a container restarted in the same pod: released, carved again
  delete    pods deleted with their containers stopping in every order,
            and all at once through StopPodSandbox
  driver    containerd set up for the other driver than the kubelet's:
            every pod refused (item 5 of issue 17)
"""
import os
import subprocess
import sys
import time

import yaml

import e2e
import kubelet as K
import node as N

DRIVER = sys.argv[1] if len(sys.argv) > 1 else "cgroupfs"
# What the DaemonSet's audit loop repairs (manifests/kubernetes/daemonset.yaml).
SCHEDULED = None


def scheduled_fix_codes():
    """--fix=AUTOFIX of the DaemonSet's audit container, from the manifest."""
    with open(N.MANIFESTS + "/kubernetes/daemonset.yaml") as f:
        ds = yaml.safe_load(f)
    for c in ds["spec"]["template"]["spec"]["containers"]:
        for e in c.get("env", []):
            if e["name"] == "AUTOFIX" and e.get("value"):
                return "--fix=" + e["value"]
    raise RuntimeError("daemonset.yaml: no AUTOFIX in the audit container")


def pod_from_yaml(path, image=K.IMAGE):
    with open(path) as f:
        doc = yaml.safe_load(f)
    ctrs = []
    for c in doc["spec"]["containers"]:
        r = c.get("resources", {})
        ctrs.append(K.Ctr(c["name"], request=r.get("requests", {}).get("cpu"), limit=r.get("limits", {}).get("cpu"),
                          memory=r.get("limits", {}).get("memory"), image=image))
    return K.Pod(doc["metadata"]["name"], ctrs, annotations=doc["metadata"].get("annotations", {}))


class Run:
    def __init__(self):
        self.kl = K.Kubelet(DRIVER)
        self.remote = None  # known once the kubelet made its cgroups
        self.pods = []

    def t(self, name):
        return "%s-%s" % (DRIVER, name)

    # -- checks shared by the cases ------------------------------------------

    def holds(self, step, pod, want, shared=()):
        """`want`: {container name: class or None}.  The ledger's carves of
        this pod are exactly those containers (never the sandbox), each
        container runs on exactly its carve, with no CFS quota of its own
        nor on its pod.
        A container named in `shared` asked for a class with `exclusive:
        false` (the policy's background): nothing is recorded for it (it
        owns no CPU), its own cpuset is narrowed to the class's shared pool,
        off every exclusive carve."""
        cv = N.carves()
        mine = {cid: c for cid, c in cv.items() if c.get("cgroup", "").startswith(pod.cgroup + "/")}
        ids = {pod.containers[n].id: n for n in want if want[n] and n not in shared}
        e2e.check_eq(self.t("%s-ledger" % step), sorted(ids), sorted(mine))
        e2e.check(self.t("%s-sandbox-not-carved" % step), pod.sandbox not in cv, "the sandbox %s is carved" % pod.sandbox)
        taken = set()
        for c in cv.values():
            taken |= N.expand(c["cpus"]) | N.expand(c.get("parked", ""))
        for n, cls in want.items():
            c = pod.containers[n]
            pid = self.kl.pid_of(c)
            if not cls:
                e2e.check(self.t("%s-%s-not-carved" % (step, n)), c.id not in cv, "carved: %s" % cv.get(c.id))
                continue
            if n in shared:
                cg = N.cgroup_of(pid) if pid else ""
                pool = K.cg_read(cg, "cpuset.cpus") if cg else ""
                eff = N.expand(K.cg_read(cg, "cpuset.cpus.effective")) if cg else set()
                e2e.check(self.t("%s-%s-shared-not-recorded" % (step, n)), c.id not in cv, "recorded: %s" % cv.get(c.id))
                e2e.check(self.t("%s-%s-shared-pool" % (step, n)), pool != "", "its cpuset.cpus is empty")
                e2e.check_eq(self.t("%s-%s-shared-runs-on-pool" % (step, n)), N.fmt(N.expand(pool)),
                             N.fmt(N.expand(N.affinity(pid))) if pid else "")
                e2e.check(self.t("%s-%s-shared-off-carves" % (step, n)), eff and not (eff & taken),
                          "runs on %s, carves %s" % (N.fmt(eff), N.fmt(taken)))
                e2e.info("%s %s: %s (class %s, shared) runs on %s" % (DRIVER, step, n, cls, N.fmt(eff)))
                continue
            carve = cv.get(c.id, {})
            e2e.check_eq(self.t("%s-%s-class" % (step, n)), cls, carve.get("class"))
            cg = N.cgroup_of(pid) if pid else ""
            e2e.check_eq(self.t("%s-%s-cgroup" % (step, n)), cg, carve.get("cgroup"))
            e2e.check_eq(self.t("%s-%s-runs-on-carve" % (step, n)), carve.get("cpus"), N.affinity(pid) if pid else "")
            e2e.check_eq(self.t("%s-%s-effective" % (step, n)), carve.get("cpus"), K.cg_read(cg, "cpuset.cpus.effective"))
            e2e.check_eq(self.t("%s-%s-no-quota" % (step, n)), "max %d" % K.PERIOD, K.cg_read(cg, "cpu.max"))
        # Nor its pod, while it holds a carve (the kubelet since 1.33).
        if ids:
            e2e.check_eq(self.t("%s-pod-no-quota" % step), "max %d" % K.PERIOD, N.cpu_max(pod.cgroup))
        return mine

    def audit_clean(self, step):
        """The node audits clean as it is, on every kernel: on 6.1
        (cpuset-only) because each carve took its CPUs out of every cgroup
        beside it and its ancestors (the other pods, system.slice,
        init.scope) and the hook out of each container started beside a
        live carve.  Each finding is logged with its object."""
        a = N.audit()
        for f in a.get("findings", []):
            e2e.info("%s %s: audit: %s %s: %s" % (DRIVER, step, f["code"], f.get("object"), f.get("actual")))
        e2e.check_eq(self.t("%s-audit-clean" % step), [], N.codes(a))
        return a

    # -- cases -----------------------------------------------------------------

    def example(self):
        pod = pod_from_yaml(N.MANIFESTS + "/kubernetes/pod-example.yaml")
        errs = self.kl.run_pod(pod)
        e2e.check_eq(self.t("example-started"), {"engine": None, "feed": None, "logs": None}, errs)
        self.pods.append(pod)
        mine = self.holds("example", pod, {"engine": "latency", "feed": "isolated", "logs": None})
        e2e.check_eq(self.t("example-engine-cpus"), 2, len(N.expand(mine.get(pod.containers["engine"].id, {}).get("cpus"))))
        e2e.check_eq(self.t("example-feed-cpus"), 1, len(N.expand(mine.get(pod.containers["feed"].id, {}).get("cpus"))))
        logs = pod.containers["logs"]
        lcg = N.cgroup_of(self.kl.pid_of(logs))
        taken = set()
        for c in mine.values():
            taken |= N.expand(c["cpus"]) | N.expand(c.get("parked", ""))
        leff = N.expand(K.cg_read(lcg, "cpuset.cpus.effective"))
        if self.remote:
            e2e.check_eq(self.t("example-logs-cpuset-untouched"), "", K.cg_read(lcg, "cpuset.cpus"))
        else:
            # cpuset-only: the kubelet starts a pod's containers in order,
            # so logs' cgroup is made after engine and feed were carved
            # and would inherit their CPUs: the hook narrows it at its
            # start (plugin/flows/container.c, beside_carves).
            e2e.check(self.t("example-logs-narrowed-at-start"), K.cg_read(lcg, "cpuset.cpus") != "",
                      "cpuset.cpus empty")
        e2e.check(self.t("example-logs-off-carves"), not (leff & taken),
                  "logs runs on %s, carves %s" % (N.fmt(leff), N.fmt(taken)))
        e2e.info("%s example: pod %s; engine %s feed %s; logs effective %s; mode %s" % (
            DRIVER, pod.cgroup, mine.get(pod.containers["engine"].id, {}).get("cpus"),
            mine.get(pod.containers["feed"].id, {}).get("cpus"), N.fmt(leff),
            ",".join(sorted({c["mode"] for c in mine.values()}))))
        self.audit_clean("example")
        return pod

    def podwide(self):
        pod = pod_from_yaml("/e2e/examples/kubernetes-pod.yaml")
        errs = self.kl.run_pod(pod)
        e2e.check_eq(self.t("podwide-started"), {"engine": None, "metrics": None}, errs)
        self.pods.append(pod)
        self.holds("podwide", pod, {"engine": "latency", "metrics": "background"}, shared=("metrics",))
        self.audit_clean("podwide")
        return pod

    def plain(self, carved):
        """An unannotated pod started after the carves: a neighbour."""
        pod = K.Pod("plain", [K.Ctr("web", request="250m", limit="500m", memory="64Mi")])
        errs = self.kl.run_pod(pod)
        e2e.check_eq(self.t("plain-started"), {"web": None}, errs)
        self.pods.append(pod)
        c = pod.containers["web"]
        cg = N.cgroup_of(self.kl.pid_of(c))
        e2e.check(self.t("plain-not-carved"), c.id not in N.carves())
        e2e.check_eq(self.t("plain-quota-kept"), "50000 %d" % K.PERIOD, K.cg_read(cg, "cpu.max"))
        taken = set()
        for cv in N.carves().values():
            taken |= N.expand(cv["cpus"]) | N.expand(cv.get("parked", ""))
        eff = N.expand(K.cg_read(cg, "cpuset.cpus.effective"))
        if self.remote:
            e2e.check_eq(self.t("plain-cpuset-untouched"), "", K.cg_read(cg, "cpuset.cpus"))
        else:
            # cpuset-only: nothing but its cpuset keeps a pod made after a
            # carve off it: at its container's start the hook narrows the
            # pod's cgroup (the branch that holds no carve), so its sandbox
            # follows too.
            e2e.check(self.t("plain-pod-narrowed-at-start"), K.cg_read(pod.cgroup, "cpuset.cpus") != "",
                      "%s cpuset.cpus empty" % pod.cgroup)
        e2e.check(self.t("plain-neighbour-off-carves"), not (eff & taken),
                  "runs on %s, carves %s" % (N.fmt(eff), N.fmt(taken)))
        self.audit_clean("plain")
        return pod

    def refused(self):
        before = sorted(N.carves())
        pod = K.Pod("greedy", [K.Ctr("big", limit="1", memory="32Mi")],
                    annotations={"corecarve.io/placement": "{class: latency, cpus: 64}"})
        errs = self.kl.run_pod(pod)
        self.pods.append(pod)
        err = errs.get("big") or ""
        # runc quotes a failed hook's stderr: corecarve's own line.
        e2e.check_in(self.t("refused-start-error"), "stderr: corecarve: createRuntime ", err)
        st = self.kl.status(pod.containers["big"])
        e2e.check_eq(self.t("refused-reason"), "StartError", st.get("reason"))
        msg = st.get("message", "")
        # corecarve's one line, as the hook printed it, reaches the kubelet.
        line = [l for l in msg.replace("\\n", "\n").split("\n") if "stderr: corecarve: " in l]
        e2e.check(self.t("refused-one-line-reason"), bool(line) and "cpu" in line[0].lower(), "message: %s" % msg)
        e2e.info("%s refused: StartError message: %s" % (DRIVER, msg[:300]))
        e2e.check_eq(self.t("refused-ledger-unchanged"), before, sorted(N.carves()))
        self.kl.delete_pod(pod)
        self.pods.remove(pod)
        # A Kubernetes container without a CPU limit pays for no exclusive
        # CPU (issue #26; containerd's own container-type key says it is
        # the kubelet's).
        pod = K.Pod("unpaid", [K.Ctr("free", memory="32Mi")],
                    annotations={"corecarve.io/placement": "{class: latency, cpus: 1}"})
        errs = self.kl.run_pod(pod)
        self.pods.append(pod)
        e2e.check_in(self.t("unpaid-refused"), "withoutCpuLimit.kubernetes: refuse", errs.get("free") or "")
        e2e.check_eq(self.t("unpaid-ledger-unchanged"), before, sorted(N.carves()))
        self.kl.delete_pod(pod)
        self.pods.remove(pod)
        # Issue #38 item 1: a Burstable pod (requests.cpu 100m, limits.cpu
        # 2) was carved 2 CPUs the scheduler had booked 0.1 for.  The
        # kubelet's shares say the request; refused, nothing carved, the
        # pod's quota as the kubelet wrote it.
        pod = K.Pod("burstable", [K.Ctr("eng", request="100m", limit="2", memory="32Mi")],
                    annotations={"corecarve.io/placement": "{class: latency, cpus: 2}"})
        errs = self.kl.run_pod(pod)
        self.pods.append(pod)
        e2e.check_in(self.t("burstable-refused"), "are for Guaranteed containers with whole CPUs", errs.get("eng") or "")
        e2e.check_in(self.t("burstable-refusal-names-request"), "requests 0.1 CPU (cpu.shares 102) and is limited to 2",
                     errs.get("eng") or "")
        e2e.check_eq(self.t("burstable-ledger-unchanged"), before, sorted(N.carves()))
        e2e.check_eq(self.t("burstable-pod-quota-kept"), "%d %d" % (K.quota_of(pod.quota()), K.PERIOD),
                     N.cpu_max(pod.cgroup))
        self.kl.delete_pod(pod)
        self.pods.remove(pod)

    def resize(self):
        # The limit pays for the carve (issue #26): 2 CPUs.
        ctrs = [K.Ctr("engine", request="2", limit="2", memory="64Mi")]
        ann = {"corecarve.io/placement.engine": "{class: latency, cpus: 2}"}
        want = {"engine": "latency"}
        if DRIVER == "systemd":
            # A second container in the pod's slice, carved beside.
            ctrs.append(K.Ctr("second", request="1", limit="1", memory="32Mi"))
            ann["corecarve.io/placement.second"] = "{class: latency, cpus: 1}"
            want["second"] = "latency"
        pod = K.Pod("resize", ctrs, annotations=ann)
        errs = self.kl.run_pod(pod)
        e2e.check_eq(self.t("resize-started"), {n: None for n in want}, errs)
        self.pods.append(pod)
        eng = pod.containers["engine"]
        self.holds("resize", pod, want)
        # Issue #38 item 2: the pod's quota covered its carves and stayed
        # on them.  A pod holding a carve has none (the kubelet since 1.33,
        # DisableCPUQuotaWithExclusiveCPUs); the kubelet's comes back at
        # release (below).
        e2e.check_eq(self.t("resize-pod-no-quota"), "max %d" % K.PERIOD, N.cpu_max(pod.cgroup))
        cg = N.cgroup_of(self.kl.pid_of(eng))
        if DRIVER == "systemd":
            for n in want:
                scg = N.cgroup_of(self.kl.pid_of(pod.containers[n]))
                e2e.check(self.t("resize-%s-scope-in-pod-slice" % n), scg.startswith(pod.cgroup + "/cri-containerd-")
                          and scg.endswith(".scope"), scg)
            # systemd 252 (Debian 12) re-applies the units' CPUQuota= on a
            # daemon-reload: runc's on the container's scope, and the audit
            # finds the double constraint.  The slice keeps none: the hook
            # gave systemd the value it wrote there (CPUQuota=, host.c).
            # systemd 257 (Debian 13) leaves cpu.max as corecarve wrote it
            # (the units' CPUQuota= is in the INFO line): nothing to find.
            # Versions in between were not tried.
            N.sh("systemctl daemon-reload")
            sysd = N.systemd_version()
            units = N.sh("systemctl show -p Id -p CPUQuotaPerSecUSec %s %s" % (
                os.path.basename(cg), os.path.basename(pod.cgroup)), check=False)
            e2e.info("systemd %d daemon-reload: scope cpu.max %s, slice cpu.max %s, effective %s; units: %s" % (
                sysd, K.cg_read(cg, "cpu.max"), N.cpu_max(pod.cgroup), K.cg_read(cg, "cpuset.cpus.effective"),
                " ".join(units.split())))
            a = N.audit()
            # The slice has no quota while it holds a carve, and the reload
            # leaves it so.
            e2e.check_eq(self.t("resize-daemon-reload-slice-kept"), "max %d" % K.PERIOD, N.cpu_max(pod.cgroup))
            if sysd < 257:
                e2e.check_in(self.t("resize-daemon-reload-quota-on-carve"), "QUOTA_ON_CARVE", " ".join(N.codes(a)))
            else:
                e2e.check_eq(self.t("resize-daemon-reload-scope-kept"), "max %d" % K.PERIOD, K.cg_read(cg, "cpu.max"))
                e2e.check_eq(self.t("resize-daemon-reload-audit-clean"), [], N.codes(a))
            self.scheduled_fix("resize-daemon-reload")
            self.holds("resize-daemon-reload-fixed", pod, want)
        # Up: the pod's limit first (1 -> 3 CPUs), then the container's.
        self.kl.resize(pod, eng, 3000)
        e2e.check_eq(self.t("resize-up-container-cpu-max"), "300000 %d" % K.PERIOD, K.cg_read(cg, "cpu.max"))
        a = N.audit()
        e2e.check_in(self.t("resize-up-quota-on-carve"), "QUOTA_ON_CARVE", " ".join(N.codes(a)))
        self.scheduled_fix("resize-up")
        e2e.check_eq(self.t("resize-up-lifted"), "max %d" % K.PERIOD, K.cg_read(cg, "cpu.max"))
        # Down: the container first, then the pod (3 -> 1 CPU, below the carve).
        self.kl.resize(pod, eng, 1000)
        want_pod = N.cpu_max(pod.cgroup)
        e2e.info("%s resize down: pod cpu.max %s, container %s" % (DRIVER, want_pod, K.cg_read(cg, "cpu.max")))
        a = N.audit()
        e2e.check_in(self.t("resize-down-quota-on-carve"), "QUOTA_ON_CARVE", " ".join(N.codes(a)))
        self.scheduled_fix("resize-down")
        e2e.check_eq(self.t("resize-down-container-lifted"), "max %d" % K.PERIOD, K.cg_read(cg, "cpu.max"))
        e2e.check_eq(self.t("resize-down-pod-lifted"), "max %d" % K.PERIOD, N.cpu_max(pod.cgroup))
        # The carves go: the kubelet's last value is the pod's again.
        for n in list(pod.order):
            self.kl.stop_container(pod.containers[n])
        e2e.check(self.t("resize-released"), N.wait(lambda: not any(
            c.id in N.carves() for c in pod.containers.values())), "still carved: %s" % sorted(N.carves()))
        e2e.check_eq(self.t("resize-pod-quota-theirs-restored"), want_pod, N.cpu_max(pod.cgroup))
        self.kl.delete_pod(pod)
        self.pods.remove(pod)

    def scheduled_fix(self, step):
        a = N.audit(SCHEDULED)
        e2e.info("%s %s: %s found %s, left %s" % (DRIVER, step, SCHEDULED, N.codes(a, "found"), N.codes(a)))
        e2e.check_eq(self.t("%s-scheduled-fix-clean" % step), [], N.codes(a))

    def restart(self, pod):
        eng = pod.containers["engine"]
        old = eng.id
        err = self.kl.restart_container(pod, eng)
        e2e.check_eq(self.t("restart-started"), None, err)
        cv = N.carves()
        e2e.check(self.t("restart-old-released"), old not in cv, "%s still carved" % old)
        e2e.check(self.t("restart-new-id"), eng.id != old and eng.id in cv, "%s -> %s" % (old, eng.id))
        self.holds("restart", pod, {"engine": "latency", "feed": "isolated", "logs": None})
        self.audit_clean("restart")

    def delete(self, pod, order, step):
        self.kl.delete_pod(pod, order)
        self.pods.remove(pod)
        left = [cid for cid, c in N.carves().items() if c.get("cgroup", "").startswith(pod.cgroup + "/")]
        e2e.check_eq(self.t("%s-released" % step), [], left)
        e2e.check(self.t("%s-pod-cgroup-gone" % step), N.wait(lambda: not N.exists(pod.cgroup), 20), pod.cgroup)

    def driver_mismatch(self):
        """containerd set up for the other driver.  A kubelet on cgroupfs
        against SystemdCgroup = true: runc refuses every pod.  A kubelet on
        systemd against the cgroupfs file: the pods run, but outside the
        kubelet's pod slice (its limits do not apply to them)."""
        other = "systemd" if DRIVER == "cgroupfs" else "cgroupfs"
        N.containerd(other)
        pod = K.Pod("mismatch", [K.Ctr("web", limit="500m", memory="32Mi")])
        try:
            errs = self.kl.run_pod(pod)
            self.pods.append(pod)
            c = pod.containers["web"]
            cg = N.cgroup_of(self.kl.pid_of(c)) if errs.get("web") is None else ""
            e2e.info("%s pod on containerd for %s: started (%s), container cgroup %s" % (
                DRIVER, other, errs.get("web") or "ok", cg))
            if DRIVER == "cgroupfs":
                e2e.fail(self.t("driver-mismatch-refused"), "containerd for systemd ran a cgroupfs pod")
            else:
                e2e.check(self.t("driver-mismatch-outside-pod-slice"), not cg.startswith(pod.cgroup + "/"),
                          "the container is in the pod's slice: %s" % cg)
            self.kl.delete_pod(pod)
            self.pods.remove(pod)
        except K.cri.grpc.RpcError as e:
            e2e.info("%s pod on containerd for %s: %s" % (DRIVER, other, (e.details() or "")[:300]))
            e2e.check(self.t("driver-mismatch-refused"), DRIVER == "cgroupfs", "refused: %s" % e.details())
            self.kl.remove_pod_cgroup(pod)
        # containerd stays set up for the other driver: the last step; main
        # sets it back only for pods a failed step left, and every CRI
        # scenario sets containerd up for itself (N.containerd) first.


def main():
    global SCHEDULED
    t0 = time.time()
    SCHEDULED = scheduled_fix_codes()
    with open(N.MANIFESTS + "/kubernetes/configmap-policy.yaml") as f:
        policy = yaml.safe_load(f)["data"]["policy.yaml"]
    N.install_corecarve(policy)
    v = N.containerd(DRIVER)
    e2e.info("%s: %s %s (CRI %s), %s; kernel %s; setup %.1fs" % (
        DRIVER, v.get("runtime_name"), v.get("runtime_version"), v.get("runtime_api_version"),
        N.sh("runc --version").split("\n")[0], e2e.KERNEL, time.time() - t0))
    r = Run()
    try:
        r.kl.start()
    except Exception as e:  # noqa: BLE001 - nothing can run without the kubelet's cgroups
        e2e.fail(r.t("kubelet-start"), "%s: %s" % (type(e).__name__, " ".join(str(e).split())[:300]))
        return
    # The kernel has remote partitions when the kubelet's cgroups have the file.
    r.remote = os.path.exists(K.CGROOT + ("/kubepods.slice" if DRIVER == "systemd" else "/kubepods") +
                              "/cpuset.cpus.exclusive")
    e2e.info("%s: carves are %s" % (DRIVER, "remote partitions" if r.remote else "cpuset-only"))
    root0 = K.cg_read("/", "cpuset.cpus.effective")
    state = {}

    def step(name, fn, *need):
        """One case; a failure is reported and the next case still runs
        (those that need what it made are reported as not run)."""
        if any(n not in state for n in need):
            e2e.fail(r.t(name), "not run: %s failed" % ", ".join(n for n in need if n not in state))
            return
        t = time.time()
        try:
            state[name] = fn()
        except Exception as e:  # noqa: BLE001 - reported; the pods are cleaned up below
            e2e.fail(r.t(name), "%s: %s" % (type(e).__name__, " ".join(str(e).split())[:300]))
        e2e.info("%s: %s took %.1fs" % (DRIVER, name, time.time() - t))

    step("example", r.example)
    step("plain", lambda: r.plain(state["example"]), "example")
    step("refused", r.refused)
    step("restart", lambda: r.restart(state["example"]), "example")
    step("delete-lifo", lambda: r.delete(state["example"], ["logs", "feed", "engine"], "delete-lifo"), "example")
    step("podwide", r.podwide)
    step("delete-fifo", lambda: r.delete(state["podwide"], ["engine", "metrics"], "delete-fifo"), "podwide")
    step("resize", r.resize)
    # All at once: StopPodSandbox kills every container together.
    step("podwide-again", r.podwide)
    step("delete-all-at-once", lambda: r.delete(state["podwide-again"], [], "delete-all-at-once"), "podwide-again")
    step("driver-mismatch", r.driver_mismatch)
    if r.pods:
        N.containerd(DRIVER)
    for p in list(r.pods):
        try:
            r.kl.delete_pod(p)
        except Exception as e:  # noqa: BLE001
            e2e.info("cleanup of %s: %s" % (p.name, e))
    e2e.check_eq(r.t("end-ledger-empty"), [], sorted(N.carves()))
    e2e.check_eq(r.t("end-root-effective"), root0, K.cg_read("/", "cpuset.cpus.effective"))
    e2e.check_eq(r.t("end-kubepods-exclusive-empty"), "", K.cg_read(
        "/kubepods.slice" if DRIVER == "systemd" else "/kubepods", "cpuset.cpus.exclusive"))
    den = subprocess.run("dmesg | grep 'type=1326' | grep 'comm=\"corecarve\"' | head -n 3", shell=True,
                         capture_output=True, text=True).stdout.strip()
    e2e.check_eq(r.t("no-sandbox-denials"), "", den)
    e2e.info("%s done in %.0fs: %d passed, %d failed" % (DRIVER, time.time() - t0, e2e.counts["pass"],
                                                       e2e.counts["fail"]))


if __name__ == "__main__":
    e2e.run(main)
