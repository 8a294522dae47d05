#!/usr/bin/python3
"""The DaemonSet's audit container run through containerd's CRI as the
kubelet would run it from manifests/kubernetes/daemonset.yaml: its command,
args and env, its securityContext, its volumeMounts with the manifest's
hostPath volumes (the ConfigMap volume materialized from
configmap-policy.yaml, as the kubelet does under /var/lib/kubelet/pods),
hostPID, and the image built from corecarve.  Against a carved pod whose
container was resized by the kubelet (QUOTA_ON_CARVE) and whose task was
pinned by hand (TASK_ESCAPED):
  - with the manifest's hostPID: true, its first audit sees the task and
    the quota; its AUTOFIX lifts the quota on the node, leaves the task
    (reported), and the metrics say so;
  - the same pod without hostPID: the audit cannot see the tasks and says
    so (TASKS_HIDDEN) instead of reporting them clean.
argv[1]: the kubelet's cgroup driver.
"""
import copy
import os
import re
import sys
import time

import yaml

import e2e
import kubelet as K
import node as N

DRIVER = sys.argv[1] if len(sys.argv) > 1 else "cgroupfs"
PROM = "/var/lib/node_exporter/textfile_collector/corecarve.prom"


def t(name):
    return "%s-%s" % (DRIVER, name)


def metrics():
    out = {}
    try:
        with open(PROM) as f:
            for line in f:
                m = re.match(r'corecarve_audit_findings\{code="([A-Z_]+)"\} (\d+)', line)
                if m:
                    out[m.group(1)] = int(m.group(2))
                elif line.startswith("corecarve_audit_success "):
                    out["success"] = int(line.split()[1])
    except OSError:
        pass
    return out


def audit_pod(ds, cm, host_pid):
    """The DaemonSet's pod as the kubelet turns it into CRI calls."""
    return ds_pod(ds, cm, "audit", host_pid, "ds-%s" % ("hostpid" if host_pid else "ownpid"))


def ds_pod(ds, cm, name, host_pid, uid, extra_args=()):
    """A pod of the DaemonSet's container `name` as the kubelet turns it
    into CRI calls: its command, args (and `extra_args`), env,
    securityContext, resources, and its volumeMounts with the manifest's
    hostPath volumes (the ConfigMap's materialized as the kubelet does)."""
    spec = ds["spec"]["template"]["spec"]
    vols = {v["name"]: v for v in spec["volumes"]}
    ctr = [c for c in spec["containers"] if c["name"] == name][0]
    mounts = []
    for m in ctr.get("volumeMounts", []):
        v = vols[m["name"]]
        if "hostPath" in v:
            os.makedirs(v["hostPath"]["path"], exist_ok=True)
            host = v["hostPath"]["path"]
        else:
            # configMap: the kubelet writes its keys into the pod's volume dir.
            host = "/var/lib/kubelet/pods/%s/volumes/kubernetes.io~configmap/%s" % (uid, m["name"])
            os.makedirs(host, exist_ok=True)
            for k, val in cm["data"].items():
                with open(os.path.join(host, k), "w") as f:
                    f.write(val)
        mounts.append({"container_path": m["mountPath"], "host_path": host, "readonly": bool(m.get("readOnly"))})
    sc = ctr.get("securityContext", {})
    caps = sc.get("capabilities", {})
    sec = {"run_as_user": {"value": sc["runAsUser"]} if "runAsUser" in sc else None,
           "readonly_rootfs": bool(sc.get("readOnlyRootFilesystem")),
           "no_new_privs": sc.get("allowPrivilegeEscalation") is False,
           "capabilities": {"drop_capabilities": caps.get("drop", []), "add_capabilities": caps.get("add", [])}}
    sec = {k: v for k, v in sec.items() if v is not None}
    res = ctr.get("resources", {})
    c = K.Ctr(name, cmd=ctr["command"], args=ctr.get("args", []) + list(extra_args),
              env={e["name"]: e["value"] for e in ctr.get("env", [])},
              request=res.get("requests", {}).get("cpu"), limit=res.get("limits", {}).get("cpu"),
              memory=res.get("limits", {}).get("memory"), mounts=mounts, security=sec,
              image=ctr["image"])
    return K.Pod("corecarve-x", [c], namespace="corecarve-system", host_pid=host_pid, uid=uid)


def run_audit_pod(kl, pod, step):
    try:
        os.unlink(PROM)
    except FileNotFoundError:
        pass
    errs = kl.run_pod(pod)
    e2e.check_eq(t("%s-started" % step), {"audit": None}, errs)
    ok = N.wait(lambda: "success" in metrics(), 90, 0.5)
    e2e.check(t("%s-metrics-written" % step), ok, "no %s after 90 s" % PROM)
    time.sleep(1)
    return metrics()


def main():
    with open(N.MANIFESTS + "/kubernetes/daemonset.yaml") as f:
        ds = yaml.safe_load(f)
    with open(N.MANIFESTS + "/kubernetes/configmap-policy.yaml") as f:
        cm = yaml.safe_load(f)
    e2e.check_eq(t("manifest-hostpid"), True, ds["spec"]["template"]["spec"].get("hostPID"))
    N.install_corecarve(cm["data"]["policy.yaml"])
    N.containerd(DRIVER)
    kl = K.Kubelet(DRIVER)
    kl.start()
    # The limit pays for the carve (issue #26): 2 CPUs.
    work = K.Pod("work", [K.Ctr("engine", request="2", limit="2", memory="64Mi")],
                 annotations={"corecarve.io/placement.engine": "{class: latency, cpus: 2}"})
    pods = [work]
    try:
        e2e.check_eq(t("work-started"), {"engine": None}, kl.run_pod(work))
        eng = work.containers["engine"]
        pid = kl.pid_of(eng)
        cg = N.cgroup_of(pid)
        carve = N.carves().get(eng.id, {})
        e2e.check_eq(t("work-carved"), "latency", carve.get("class"))
        # The kubelet resizes it (the container's cpu.max comes back) and the
        # task pins itself to one of its CPUs.
        kl.resize(work, eng, 3000)
        first = sorted(N.expand(carve.get("cpus")))[0]
        N.sh("taskset -p -c %d %d" % (first, pid))
        node = N.audit()
        e2e.check(t("node-audit-sees-both"), {"QUOTA_ON_CARVE", "TASK_ESCAPED"} <= set(N.codes(node)), N.codes(node))

        pod = audit_pod(ds, cm, True)
        pods.append(pod)
        m = run_audit_pod(kl, pod, "hostpid")
        e2e.info("%s DaemonSet audit (hostPID): %s" % (DRIVER, {k: v for k, v in m.items() if v}))
        e2e.check_eq(t("hostpid-success"), 1, m.get("success"))
        e2e.check_eq(t("hostpid-task-escaped-reported"), 1, m.get("TASK_ESCAPED"))
        e2e.check_eq(t("hostpid-no-tasks-hidden"), 0, m.get("TASKS_HIDDEN"))
        e2e.check_eq(t("hostpid-quota-fixed-in-metrics"), 0, m.get("QUOTA_ON_CARVE"))
        e2e.check_eq(t("hostpid-quota-lifted-on-node"), "max %d" % K.PERIOD, K.cg_read(cg, "cpu.max"))
        e2e.check_eq(t("hostpid-task-left-alone"), str(first), N.affinity(pid))
        kl.delete_pod(pod)
        pods.remove(pod)

        # Without the host's PIDs: the same audit must not read clean.
        own = copy.deepcopy(ds)
        own["spec"]["template"]["spec"]["hostPID"] = False
        pod = audit_pod(own, cm, False)
        pods.append(pod)
        m = run_audit_pod(kl, pod, "ownpid")
        e2e.info("%s DaemonSet audit (own PID namespace): %s" % (DRIVER, {k: v for k, v in m.items() if v}))
        e2e.check_eq(t("ownpid-tasks-hidden"), 1, m.get("TASKS_HIDDEN"))
        e2e.check_eq(t("ownpid-task-escaped-unseen"), 0, m.get("TASK_ESCAPED"))
        kl.delete_pod(pod)
        pods.remove(pod)
        N.sh("taskset -p -c %s %d" % (carve.get("cpus"), pid))
        e2e.check_eq(t("end-audit-clean"), [], N.codes(N.audit()))
    except Exception as e:  # noqa: BLE001 - reported, then cleaned up
        e2e.fail(t("scenario"), "%s: %s" % (type(e).__name__, e))
        raise
    finally:
        for p in pods:
            try:
                kl.delete_pod(p)
            except Exception as e:  # noqa: BLE001
                e2e.info("cleanup of %s: %s" % (p.name, e))
    e2e.check_eq(t("end-ledger-empty"), [], sorted(N.carves()))


if __name__ == "__main__":
    e2e.run(main)
