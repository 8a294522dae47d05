"""The k8s guest as an operator sets it up, from the repository's own
manifests: corecarve installed by the DaemonSet's installer
(manifests/kubernetes/image/install-on-node.sh), containerd configured
with manifests/containerd's snippet for the kubelet's cgroup driver and the
base runtime spec made as that snippet says; and the helpers the CRI
scenarios read the node with (corecarve status, cgroup files, CPU lists).
"""
import json
import os
import subprocess
import time

import cri
from kubelet import CGROOT, cg_read

MANIFESTS = "/e2e/manifests"
# The snippet for each cgroup driver and containerd's config version: 2
# for containerd 1.6 and 1.7, 3 for containerd 2.x.
CONFIG = {(2, "cgroupfs"): MANIFESTS + "/containerd/config-cgroupfs.toml",
          (2, "systemd"): MANIFESTS + "/containerd/config.toml",
          (3, "cgroupfs"): MANIFESTS + "/containerd/config-v3-cgroupfs.toml",
          (3, "systemd"): MANIFESTS + "/containerd/config-v3.toml"}
# Where the sandbox (pause) image is named, per config version.
SANDBOX = {2: '[plugins."io.containerd.grpc.v1.cri"]\n  sandbox_image = "%s"\n',
           3: '[plugins."io.containerd.cri.v1.images".pinned_images]\n  sandbox = "%s"\n'}


def containerd_major():
    """containerd's major version, from `containerd --version` ("containerd
    github.com/containerd/containerd/v2 2.1.9+ds1 ..." or Debian 12's
    "containerd containerd.io 1.6.20~ds1 ...")."""
    for word in sh("containerd --version").split()[1:]:
        if word[:1].isdigit():
            return int(word.split(".")[0])
    raise RuntimeError("containerd --version names no version")


def systemd_version():
    """systemd's version number ("systemd 257 (257.13-1~deb13u1)")."""
    return int(sh("systemctl --version").split()[1])


def config_version():
    return 3 if containerd_major() >= 2 else 2

# The policy of the hook scenarios (tests/e2e/hooklib.sh): core 0 of each
# package reserved.
POLICY = """reserved: "0-1,8-9"
minShared: 1
classes:
  latency:
    coreType: performance
    smt: isolate
    exclusive: true
    memory: local
    irq: steer-away
    partition: root
    quota: drop
  throughput:
    coreType: efficient
    fallback: performance
    smt: full
    align: l2
    memory: local
    quota: drop
"""


def sh(cmd, check=True, timeout=120):
    r = subprocess.run(cmd, shell=True, capture_output=True, text=True, timeout=timeout)
    if check and r.returncode != 0:
        raise RuntimeError("`%s` exited %d: %s" % (cmd, r.returncode, (r.stderr or r.stdout).strip()[:400]))
    return r.stdout


def install_corecarve(policy=POLICY):
    """What the DaemonSet's init container does on a node, run here."""
    os.makedirs("/etc/corecarve-policy", exist_ok=True)
    with open("/etc/corecarve-policy/policy.yaml", "w") as f:
        f.write(policy)
    sh("HOST=/ PREFIX=/opt/corecarve BIN=/usr/bin/corecarve HOOK_BIN=/usr/bin/corecarve-hook HOOKS=%s/hooks.d POLICY=/etc/corecarve-policy/policy.yaml"
       " sh %s/kubernetes/image/install-on-node.sh" % (MANIFESTS, MANIFESTS))


def containerd(driver, extra=""):
    """containerd with the snippet for `driver`, as the snippet's comments
    say to install it; a pause image built here (no registry)."""
    sh("systemctl stop containerd", check=False)
    os.makedirs("/etc/containerd", exist_ok=True)
    version = config_version()
    with open(CONFIG[(version, driver)]) as f:
        snippet = f.read()
    conf = snippet + """
# e2e: no registry is reachable; the sandbox image is imported locally.
""" + SANDBOX[version] % "localhost/e2e/pause:1" + extra
    with open("/etc/containerd/config.toml", "w") as f:
        f.write(conf)
    # "ctr oci spec | jq --slurpfile h corecarve-hooks.json '.hooks = $h[0]'"
    spec = json.loads(sh("ctr oci spec"))
    with open(MANIFESTS + "/containerd/corecarve-hooks.json") as f:
        spec["hooks"] = json.load(f)
    with open("/etc/containerd/corecarve-base-spec.json", "w") as f:
        json.dump(spec, f, indent=2)
    # Generous: under TCG on a 2-core host that is also busy (CI) containerd's
    # start and an image import have taken minutes.
    sh("systemctl start containerd", timeout=300)
    c = cri.Client()
    end = time.time() + 240
    while True:
        try:
            v = c.call("Version", {}, timeout=5)
            break
        except cri.grpc.RpcError:
            if time.time() > end:
                raise
            time.sleep(0.5)
    for img in ("pause", "busybox", "corecarve"):
        sh("ctr -n k8s.io images import /e2e/images/%s.tar" % img, timeout=300)
    return v


# ---- reading the node --------------------------------------------------------

def carves():
    """{id: carve} from `corecarve status --json`."""
    out = sh("corecarve status --json")
    doc = json.loads(out)
    return {c["id"]: c for c in doc.get("carves", [])}


def expand(lst):
    s = set()
    for part in (lst or "").strip().split(","):
        if not part:
            continue
        if "-" in part:
            a, b = part.split("-")
            s.update(range(int(a), int(b) + 1))
        else:
            s.add(int(part))
    return s


def fmt(s):
    s = sorted(s)
    out, i = [], 0
    while i < len(s):
        j = i
        while j + 1 < len(s) and s[j + 1] == s[j] + 1:
            j += 1
        out.append(str(s[i]) if i == j else "%d-%d" % (s[i], s[j]))
        i = j + 1
    return ",".join(out)


def cgroup_of(pid):
    if not pid:
        return ""
    with open("/proc/%d/cgroup" % pid) as f:
        for line in f:
            if line.startswith("0::"):
                return line[3:].strip()
    return ""


def affinity(pid):
    if not pid:
        return ""
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("Cpus_allowed_list:"):
                return line.split(":", 1)[1].strip()
    return ""


def audit(args=""):
    r = subprocess.run("corecarve audit --json --sample-ms 0 " + args, shell=True, capture_output=True, text=True,
                       timeout=120)
    try:
        doc = json.loads(r.stdout)
    except ValueError:
        doc = {"error": r.stdout + r.stderr}
    doc["rc"] = r.returncode
    doc["stderr"] = r.stderr
    return doc


def codes(doc, key="findings"):
    return sorted(f["code"] for f in doc.get(key, []))


def wait(pred, timeout=30, step=0.2):
    end = time.time() + timeout
    while time.time() < end:
        try:
            if pred():
                return True
        except Exception:  # noqa: BLE001 - a poll: not yet
            pass
        time.sleep(step)
    return False


def cpu_max(path):
    return cg_read(path, "cpu.max")


def exists(path):
    return os.path.isdir(os.path.join(CGROOT, path.lstrip("/")))
