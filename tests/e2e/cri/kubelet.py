"""A kubelet stand-in for the e2e k8s guest: the CRI calls the kubelet makes
for a pod, with the kubelet's values, and the kubelet's own cgroup work
(the QoS and pod cgroups or slices, their cpu.max, in-place resizes).

What it follows (kubelet 1.27+, pkg/kubelet/cm and pkg/kubelet/kuberuntime):
  - cgroupfs driver: /kubepods, /kubepods/burstable, /kubepods/besteffort;
    a Guaranteed pod at /kubepods/pod<uid>, others under their QoS class;
    the sandbox's cgroup_parent is that path; containerd puts each
    container at <parent>/<id>.
  - systemd driver: kubepods.slice, kubepods-burstable.slice, ...,
    kubepods-burstable-pod<uid with _>.slice made as transient units
    (StartTransientUnit over D-Bus, as libcontainer's systemd manager does
    for the kubelet), their quota as CPUQuotaPerSecUSec; the cgroup_parent
    is the slice's name, and runc makes cri-containerd-<id>.scope in it.
  - the pod cgroup's cpu.max is the sum of its containers' limits when
    every container has one; cpu.weight from the requests; a container's
    LinuxContainerResources: cpu_period 100000, cpu_quota = limit * period,
    cpu_shares = request * 1024 (at least 2), memory limit, oom_score_adj.
  - a resize: for more CPU the pod cgroup first, then the containers
    (UpdateContainerResources); for less, the containers first.
  - a pod goes: StopContainer for each (in the order given), StopPodSandbox,
    RemoveContainer, RemovePodSandbox, then its cgroup or slice.
  - the QoS update (update_qos) before each new pod's cgroup and after each
    pod goes, as SyncPod and killPod run it: with the systemd driver it
    makes systemd apply the QoS slices again.
"""
import json
import os
import subprocess
import time
import uuid

import cri

CGROOT = "/sys/fs/cgroup"
PERIOD = 100000
IMAGE = "localhost/e2e/busybox:1"
DEFAULT_MASKED = ["/proc/acpi", "/proc/kcore", "/proc/keys", "/proc/latency_stats", "/proc/timer_list",
                  "/proc/timer_stats", "/proc/sched_debug", "/proc/scsi", "/sys/firmware"]
DEFAULT_READONLY = ["/proc/asound", "/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger"]


def cg_read(path, f):
    try:
        with open(os.path.join(CGROOT, path.lstrip("/"), f)) as fh:
            return fh.read().strip()
    except OSError:
        return ""


def cg_write(path, f, value):
    with open(os.path.join(CGROOT, path.lstrip("/"), f), "w") as fh:
        fh.write(value)


def millis(q):
    """A Kubernetes CPU quantity ("2", "500m", 0.5) in millicores."""
    if q is None:
        return None
    q = str(q)
    if q.endswith("m"):
        return int(q[:-1])
    return int(round(float(q) * 1000))


def mem_bytes(q):
    if q is None:
        return 0
    q = str(q)
    for suf, mul in (("Ki", 1 << 10), ("Mi", 1 << 20), ("Gi", 1 << 30)):
        if q.endswith(suf):
            return int(q[: -len(suf)]) * mul
    return int(q)


class Ctr:
    def __init__(self, name, cmd=None, request=None, limit=None, memory=None, env=None, mounts=None,
                 security=None, image=IMAGE, args=None, annotations=None):
        self.name = name
        self.cmd = cmd if cmd is not None else ["sh", "-c", "grep Cpus_allowed_list /proc/self/status; exec sleep 100000"]
        self.args = args or []
        self.request = millis(request)
        self.limit = millis(limit)
        self.memory = memory
        self.env = env or {}
        self.mounts = mounts or []
        self.security = security or {}
        self.image = image
        # What the device manager's Allocate answered for it (the
        # kubelet's cached response, reused when it restarts), or what a
        # runtime passes through from the pod.
        self.annotations = annotations or {}
        self.attempt = 0
        self.id = None


class Pod:
    def __init__(self, name, containers, annotations=None, namespace="default", host_pid=False, uid=None):
        self.name = name
        self.namespace = namespace
        self.uid = uid or str(uuid.uuid4())
        self.containers = {c.name: c for c in containers}
        self.order = [c.name for c in containers]
        self.annotations = annotations or {}
        self.host_pid = host_pid
        self.sandbox = None
        self.cgroup = None  # relative to CGROOT
        self.parent = None  # the CRI cgroup_parent

    def qos(self):
        """pkg/apis/core/v1/helper/qos GetPodQOS: Guaranteed when every
        container limits CPU and memory with requests equal to them,
        BestEffort when none requests or limits either, else Burstable."""
        cs = self.containers.values()
        if all(c.limit is not None and c.request in (None, c.limit) and c.memory for c in cs):
            return "guaranteed"
        if all(c.limit is None and c.request is None and not c.memory for c in cs):
            return "besteffort"
        return "burstable"

    def oom_score_adj(self, c):
        """pkg/kubelet/qos/policy.go GetContainerOOMScoreAdjust, for a pod
        without sidecars or pod-level resources: Guaranteed -997, BestEffort
        1000, Burstable 1000 - 1000 * its memory request / the node's memory
        (cadvisor's MemoryCapacity: MemTotal), kept within 3..999."""
        q = self.qos()
        if q == "guaranteed":
            return -997
        if q == "besteffort":
            return 1000
        adj = 1000 - (1000 * mem_bytes(c.memory)) // node_memory()
        return 3 if adj < 3 else 999 if adj == 1000 else adj

    def cpu_requests(self):
        """resourcehelper PodRequests' CPU in millicores: the sum over the
        containers that request (the API server defaulted a missing request
        to its limit); None when none does."""
        reqs = [c.request if c.request is not None else c.limit for c in self.containers.values()]
        reqs = [r for r in reqs if r is not None]
        return sum(reqs) if reqs else None

    def quota(self):
        """The pod cgroup's CPU limit in millicores, None for none."""
        lims = [c.limit for c in self.containers.values()]
        return None if any(l is None for l in lims) else sum(lims)


def node_memory():
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("/proc/meminfo has no MemTotal")


def linux_resources(request, limit, memory):
    """kuberuntime_container_linux.go calculateLinuxResources (cpuCFSQuota
    on, the default; cpuManagerPolicy none, so no quota is disabled): the
    shares of the request, or of the limit when no request was given; the
    quota of the limit (MilliCPUToQuota: none for no limit); the memory
    limit; and on cgroup v2 with singleProcessOOMKill unset (false there,
    kubelet.go) memory.oom.group 1."""
    res = {"cpu_period": PERIOD, "cpu_shares": shares_of(limit if request is None else request),
           "unified": {"memory.oom.group": "1"}}
    if limit:
        res["cpu_quota"] = quota_of(limit)
    if memory:
        res["memory_limit_in_bytes"] = memory
    return res


def quota_of(m):
    return max(1000, m * PERIOD // 1000)


def shares_of(m):
    return max(2, (m or 0) * 1024 // 1000)


def weight_of(shares):
    # libcontainer's ConvertCPUSharesToCgroupV2Value
    return 1 + ((shares - 2) * 9999) // 262142 if shares else 0


class Busctl:
    """systemd's manager over D-Bus, the calls libcontainer makes."""

    @staticmethod
    def call(*args):
        # "--": values such as "-.slice" are arguments, not options.
        cmd = ["busctl", "--system", "--", "call", "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
               "org.freedesktop.systemd1.Manager"] + [str(a) for a in args]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
        if r.returncode != 0:
            raise RuntimeError("busctl %s %s: %s" % (args[0], args[2] if len(args) > 2 else "",
                                                     (r.stderr or r.stdout).strip()))
        return r.stdout

    def start_slice(self, name, parent, props):
        # StartTransientUnit(name, mode, properties a(sv), aux a(sa(sv)))
        # A slice's parent is named by Wants= (libcontainer's systemd
        # manager); the root slice is every slice's parent anyway.
        base = [("Description", "s", "libcontainer container " + name),
                ("Wants", "as", [parent]) if parent and parent != "-.slice" else None,
                ("DefaultDependencies", "b", False), ("CPUAccounting", "b", True),
                ("MemoryAccounting", "b", True), ("TasksAccounting", "b", True)]
        allp = [p for p in base if p] + props
        flat = []
        for k, sig, v in allp:
            flat.append(k)
            flat.append(sig)
            if sig == "as":
                flat.append(len(v))
                flat.extend(v)
            elif sig == "b":
                flat.append("true" if v else "false")
            else:
                flat.append(v)
        self.call("StartTransientUnit", "ssa(sv)a(sa(sv))", name, "replace", len(allp), *flat, 0)
        self.wait_active(name)

    def wait_active(self, unit, timeout=30):
        end = time.time() + timeout
        while time.time() < end:
            out = subprocess.run(["systemctl", "is-active", unit], capture_output=True, text=True).stdout.strip()
            if out == "active":
                return
            time.sleep(0.1)
        raise RuntimeError("unit %s did not become active" % unit)

    def set_props(self, name, props):
        flat = []
        for k, sig, v in props:
            flat += [k, sig, v]
        self.call("SetUnitProperties", "sba(sv)", name, "true", len(props), *flat)

    def stop(self, name):
        self.call("StopUnit", "ss", name, "replace")


class Kubelet:
    def __init__(self, driver="cgroupfs", socket="/run/containerd/containerd.sock", log=print):
        assert driver in ("cgroupfs", "systemd")
        self.driver = driver
        self.cri = cri.Client(socket)
        self.systemd = Busctl() if driver == "systemd" else None
        self.log = log
        self.live = {}  # uid -> Pod: the pods whose cgroup exists (the kubelet's active pods)

    # ---- the node's cgroups (kubelet start) ---------------------------------

    def _enable(self, path):
        """libcontainer's fs2 CreateCgroupPath: every available controller
        enabled in the parents' subtree_control."""
        parts = [p for p in path.strip("/").split("/") if p]
        cur = ""
        for p in parts:
            ctrls = cg_read(cur, "cgroup.controllers").split()
            want = " ".join("+" + c for c in ctrls if c in ("cpuset", "cpu", "io", "memory", "hugetlb", "pids"))
            if want:
                try:
                    cg_write(cur, "cgroup.subtree_control", want)
                except OSError:
                    pass
            cur = cur + "/" + p
            os.makedirs(os.path.join(CGROOT, cur.lstrip("/")), exist_ok=True)

    def slice_path(self, name):
        """kubepods-burstable-podX.slice -> /kubepods.slice/kubepods-burstable.slice/..."""
        assert name.endswith(".slice")
        parts = name[: -len(".slice")].split("-")
        return "/" + "/".join("-".join(parts[: i + 1]) + ".slice" for i in range(len(parts)))

    def start(self):
        os.makedirs("/var/lib/kubelet/pods", exist_ok=True)
        if self.driver == "cgroupfs":
            for p in ("/kubepods", "/kubepods/burstable", "/kubepods/besteffort"):
                self._enable(p)
                os.makedirs(os.path.join(CGROOT, p.lstrip("/")), exist_ok=True)
            cg_write("/kubepods/besteffort", "cpu.weight", "1")
        else:
            self.systemd.start_slice("kubepods.slice", "-.slice", [])
            self.systemd.start_slice("kubepods-burstable.slice", "kubepods.slice", [])
            self.systemd.start_slice("kubepods-besteffort.slice", "kubepods.slice", [("CPUWeight", "t", 1)])
            for s in ("kubepods.slice", "kubepods-burstable.slice", "kubepods-besteffort.slice"):
                self._enable(self.slice_path(s))

    # ---- a pod's cgroup -------------------------------------------------------

    def _pod_cgroup(self, pod):
        q = pod.qos()
        if self.driver == "cgroupfs":
            pod.parent = "/kubepods/pod" + pod.uid if q == "guaranteed" else "/kubepods/%s/pod%s" % (q, pod.uid)
            pod.cgroup = pod.parent
        else:
            u = pod.uid.replace("-", "_")
            pod.parent = "kubepods-pod%s.slice" % u if q == "guaranteed" else "kubepods-%s-pod%s.slice" % (q, u)
            pod.cgroup = self.slice_path(pod.parent)

    def _pod_resources(self, pod):
        """pkg/kubelet/cm/helpers_linux.go ResourceConfigForPod: the shares
        of the pod's summed CPU requests, a quota only when every container
        has a limit (pod.quota())."""
        shares = shares_of(pod.cpu_requests())
        quota = pod.quota()
        return shares, (quota_of(quota) if quota is not None else None)

    def update_qos(self):
        """The kubelet's QoS update (pkg/kubelet/cm/qos_container_manager_linux.go
        UpdateCgroups, setCPUCgroupConfig): besteffort 2 shares (MinShares),
        burstable the shares of its active pods' CPU requests, each through
        the cgroup manager's Update.  The kubelet runs it before a new pod's
        cgroup (kubelet.go SyncPod: when !pcm.Exists(pod)), when it kills a
        pod (kubelet_pods.go killPod) and every minute.  With the systemd
        driver that is SetUnitProperties on the slice, which makes systemd
        apply the whole unit again (its cpuset.cpus from AllowedCPUs=: the
        kubelet's own comment there says so)."""
        req = sum(c.request if c.request is not None else (c.limit or 0)
                  for p in self.live.values() if p.qos() == "burstable" for c in p.containers.values())
        burstable = weight_of(shares_of(req) if req else 2)
        if self.driver == "cgroupfs":
            cg_write("/kubepods/burstable", "cpu.weight", str(burstable))
            cg_write("/kubepods/besteffort", "cpu.weight", str(weight_of(2)))
        else:
            self.systemd.set_props("kubepods-burstable.slice", [("CPUWeight", "t", burstable)])
            self.systemd.set_props("kubepods-besteffort.slice", [("CPUWeight", "t", weight_of(2))])

    def create_pod_cgroup(self, pod):
        self._pod_cgroup(pod)
        self.live[pod.uid] = pod
        self.update_qos()
        shares, quota = self._pod_resources(pod)
        if self.driver == "cgroupfs":
            self._enable(pod.cgroup)
            cg_write(pod.cgroup, "cpu.weight", str(weight_of(shares)))
            cg_write(pod.cgroup, "cpu.max", "%s %d" % (quota if quota else "max", PERIOD))
        else:
            parent = {"guaranteed": "kubepods.slice"}.get(pod.qos(), "kubepods-%s.slice" % pod.qos())
            props = [("CPUWeight", "t", weight_of(shares))]
            if quota:
                props.append(("CPUQuotaPerSecUSec", "t", quota * 1000000 // PERIOD))
            self.systemd.start_slice(pod.parent, parent, props)
            self._enable(pod.cgroup)
            # libcontainer writes the files itself too (fs2 Set after systemd).
            cg_write(pod.cgroup, "cpu.max", "%s %d" % (quota if quota else "max", PERIOD))

    def set_pod_quota(self, pod, millicores):
        quota = quota_of(millicores) if millicores is not None else None
        if self.driver == "systemd":
            self.systemd.set_props(pod.parent, [("CPUQuotaPerSecUSec", "t",
                                                 quota * 1000000 // PERIOD if quota else 2 ** 64 - 1)])
        cg_write(pod.cgroup, "cpu.max", "%s %d" % (quota if quota else "max", PERIOD))

    def remove_pod_cgroup(self, pod):
        if self.driver == "systemd":
            try:
                self.systemd.stop(pod.parent)
            except RuntimeError:
                pass
        else:
            for _ in range(50):
                try:
                    os.rmdir(os.path.join(CGROOT, pod.cgroup.lstrip("/")))
                    return
                except FileNotFoundError:
                    return
                except OSError:
                    time.sleep(0.1)

    # ---- CRI ------------------------------------------------------------------

    def sandbox_config(self, pod):
        # Every pod here is host-network: the kubelet sets no hostname then
        # (runc refuses one without a UTS namespace of the pod's own).
        ns = {"network": "NODE", "pid": "NODE" if pod.host_pid else "CONTAINER", "ipc": "POD"}
        # kuberuntime_sandbox_linux.go calculateSandboxResources: the pod's
        # requests and limits (resourcehelper PodRequests/PodLimits: the sum
        # over the containers that set one) through calculateLinuxResources.
        lim = sum(c.limit for c in pod.containers.values() if c.limit is not None)
        mem = sum(mem_bytes(c.memory) for c in pod.containers.values() if c.memory)
        res = linux_resources(pod.cpu_requests(), lim, mem)
        return {
            "metadata": {"name": pod.name, "uid": pod.uid, "namespace": pod.namespace, "attempt": 0},
            "log_directory": "/var/log/pods/%s_%s_%s" % (pod.namespace, pod.name, pod.uid),
            "labels": {"io.kubernetes.pod.name": pod.name, "io.kubernetes.pod.namespace": pod.namespace,
                       "io.kubernetes.pod.uid": pod.uid},
            "annotations": dict(pod.annotations, **{"kubernetes.io/config.source": "api",
                                                    "kubernetes.io/config.seen": "2025-01-01T00:00:00Z"}),
            "linux": {"cgroup_parent": pod.parent,
                      "security_context": {"namespace_options": ns},
                      "resources": res},
        }

    def container_config(self, pod, c):
        # kuberuntime_container_linux.go generateLinuxContainerResources.
        res = linux_resources(c.request, c.limit or 0, mem_bytes(c.memory))
        res["oom_score_adj"] = pod.oom_score_adj(c)
        sec = {"namespace_options": {"network": "NODE", "pid": "NODE" if pod.host_pid else "CONTAINER",
                                     "ipc": "POD"},
               "masked_paths": DEFAULT_MASKED, "readonly_paths": DEFAULT_READONLY}
        sec.update(c.security)
        return {
            "metadata": {"name": c.name, "attempt": c.attempt},
            "image": {"image": c.image},
            "command": c.cmd,
            "args": c.args,
            "envs": [{"key": k, "value": v} for k, v in c.env.items()],
            "mounts": c.mounts,
            "labels": {"io.kubernetes.container.name": c.name, "io.kubernetes.pod.name": pod.name,
                       "io.kubernetes.pod.namespace": pod.namespace, "io.kubernetes.pod.uid": pod.uid},
            # The device plugins' annotations first, then the kubelet's own
            # keys (kuberuntime's generateContainerConfig: opts.Annotations,
            # then newContainerAnnotations).
            "annotations": dict(c.annotations, **{
                "io.kubernetes.container.hash": "%08x" % (hash(c.name) & 0xffffffff),
                "io.kubernetes.container.restartCount": str(c.attempt),
                "io.kubernetes.container.terminationMessagePath": "/dev/termination-log",
                "io.kubernetes.container.terminationMessagePolicy": "File",
                "io.kubernetes.pod.terminationGracePeriod": "30"}),
            "log_path": "%s/%d.log" % (c.name, c.attempt),
            "linux": {"resources": res, "security_context": sec},
        }

    def run_pod(self, pod, start=True):
        """The pod cgroup, the sandbox, then each container created and
        started.  Returns {name: None or the StartContainer error}."""
        self.create_pod_cgroup(pod)
        # The kubelet makes the pod's log directory; containerd writes into it.
        os.makedirs(self.sandbox_config(pod)["log_directory"], exist_ok=True)
        pod.sandbox = self.cri.call("RunPodSandbox", {"config": self.sandbox_config(pod)})["pod_sandbox_id"]
        out = {}
        if start:
            for n in pod.order:
                out[n] = self.start_container(pod, pod.containers[n])
        return out

    def start_container(self, pod, c):
        os.makedirs(os.path.join(self.sandbox_config(pod)["log_directory"], c.name), exist_ok=True)
        c.id = self.cri.call("CreateContainer", {"pod_sandbox_id": pod.sandbox,
                                                 "config": self.container_config(pod, c),
                                                 "sandbox_config": self.sandbox_config(pod)})["container_id"]
        try:
            self.cri.call("StartContainer", {"container_id": c.id})
        except cri.grpc.RpcError as e:
            return e.details() or str(e)
        return None

    def status(self, c):
        return self.cri.call("ContainerStatus", {"container_id": c.id}).get("status", {})

    def stop_container(self, c, timeout=0):
        self.cri.call("StopContainer", {"container_id": c.id, "timeout": timeout})

    def restart_container(self, pod, c):
        """The kubelet's restart: the exited container is removed, a new one
        with the next attempt number is created in the same sandbox."""
        self.stop_container(c)
        self.cri.call("RemoveContainer", {"container_id": c.id})
        c.attempt += 1
        return self.start_container(pod, c)

    def resize(self, pod, c, millicores):
        """In-place resize of one container's CPU limit, in the kubelet's
        order: the pod cgroup first when it grows, last when it shrinks."""
        old = c.limit
        c.limit = millicores
        grow = millicores is None or (old is not None and millicores > old)
        upd = {"container_id": c.id,
               "linux": {"cpu_period": PERIOD, "cpu_quota": quota_of(millicores) if millicores else 0,
                         "cpu_shares": shares_of(c.request if c.request is not None else millicores)}}
        if grow:
            self.set_pod_quota(pod, pod.quota())
        self.cri.call("UpdateContainerResources", upd)
        if not grow:
            self.set_pod_quota(pod, pod.quota())

    def delete_pod(self, pod, order=None):
        """Stop the containers in `order` (default: the pod's), then the
        sandbox; remove everything and the pod's cgroup."""
        if pod.sandbox:
            for n in (order if order is not None else pod.order):
                c = pod.containers[n]
                if c.id:
                    self.stop_container(c)
            self.cri.call("StopPodSandbox", {"pod_sandbox_id": pod.sandbox})
            for c in pod.containers.values():
                if c.id:
                    self.cri.call("RemoveContainer", {"container_id": c.id})
            self.cri.call("RemovePodSandbox", {"pod_sandbox_id": pod.sandbox})
        self.live.pop(pod.uid, None)
        self.update_qos()
        if pod.cgroup:
            self.remove_pod_cgroup(pod)

    def pid_of(self, c):
        info = self.cri.call("ContainerStatus", {"container_id": c.id, "verbose": True}).get("info", {})
        try:
            return json.loads(info.get("info", "{}")).get("pid") or None
        except ValueError:
            return None
