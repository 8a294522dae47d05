"""The kubelet's device manager, played by a real gRPC peer (Debian's
python3-grpcio), against `corecarve device-plugin` on a captured node.

    /usr/bin/python3 devplugin_peer.py CORECARVE ROOT WORKDIR

It serves Registration on WORKDIR/kubelet.sock, starts the plugin with
--dir WORKDIR --root ROOT --state WORKDIR/state --policy WORKDIR/policy.yaml,
and checks what the kubelet relies on: the registrations, the device list,
preferred allocation, Allocate and its refusals, ListAndWatch turning a core
Unhealthy when another resource of its core type is granted it, a kubelet
restart (its socket and the plugin's removed, a new kubelet.sock), a
deleted pod's grant freed through PodResources (v1 List, served on
WORKDIR/pod-resources/kubelet.sock), and SIGTERM.  Prints "interop: ok" last, or raises.

The protocol's messages and the kubelet's services are tests/e2e/cri/devmgr.py's,
which the node guests' kubelet stand-in uses too.
"""
import re
import os
import signal
import subprocess
import sys
import time

import grpc

# The kubelet's side of the protocol, shared with the node guests' stand-in.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e", "cri"))
from devmgr import M, PodResources, Plugin, Registration as Kubelet, devices  # noqa: E402

# Two exclusive classes on the P-cores share their capacity; one on the
# E-cores; a shared class has no resource.
POLICY = """classes:
  latency: {coreType: performance, smt: isolate, exclusive: true}
  fast: {coreType: performance, smt: full, exclusive: true}
  throughput: {coreType: efficient, smt: full, exclusive: true, align: l2}
  background: {coreType: efficient, exclusive: false}
"""
RESOURCES = {"corecarve.io/latency-cores", "corecarve.io/fast-cores", "corecarve.io/throughput-cores"}


def check(cond, what):
    if not cond:
        raise AssertionError(what)


def refused(fn, code, text):
    try:
        fn()
    except grpc.RpcError as e:
        check(e.code() == code, "%s: got %s %s" % (text, e.code(), e.details()))
        check(text in e.details(), "%r not in %r" % (text, e.details()))
        return
    raise AssertionError("not refused: " + text)


def phase_first(work, podres):
    lat, fast, thr = (Plugin(work, "corecarve-%s.sock" % c) for c in ("latency", "fast", "throughput"))
    opts = lat.unary("GetDevicePluginOptions", M["Empty"](), "DevicePluginOptions")
    check(opts.get_preferred_allocation_available and not opts.pre_start_required, "options: %s" % opts)
    stream = fast.watch()
    first = devices(next(stream))
    check(first == [("cpu%d" % c, "Healthy", [0]) for c in (0, 2, 4, 6)], "fast devices: %s" % first)
    thr_devs = devices(next(thr.watch()))
    check([d[0] for d in thr_devs] == ["cpu%d" % c for c in range(9, 16)], "throughput devices: %s" % thr_devs)
    # Preferred: a whole L2 cluster of E-cores (12-15), not the first four.
    req = M["PreferredAllocationRequest"]()
    cr = req.container_requests.add(allocation_size=4)
    cr.available_deviceIDs.extend(d[0] for d in thr_devs)
    pref = thr.unary("GetPreferredAllocation", req, "PreferredAllocationResponse")
    check(list(pref.container_responses[0].deviceIDs) == ["cpu12", "cpu13", "cpu14", "cpu15"], "preferred: %s" % pref)
    # Allocate on latency: the grant annotation, then fast sees cpu2 go
    # Unhealthy within a second.
    t0 = time.time()
    resp = lat.allocate(["cpu2"])
    podres.pods["a"] = ("corecarve.io/latency-cores", ["cpu2"])
    ann = dict(resp.container_responses[0].annotations)
    # The grant's id, then the token the hook will ask for.
    check(list(ann) == ["corecarve.io/grant"] and re.fullmatch(r"grant:latency:2-3:[0-9a-f]{32}", ann["corecarve.io/grant"]),
          "allocate: %s" % ann)
    upd = devices(next(stream))
    check(time.time() - t0 < 1.5, "ListAndWatch update after %.2fs" % (time.time() - t0))
    check(("cpu2", "Unhealthy", [0]) in upd and ("cpu0", "Healthy", [0]) in upd, "after the grant: %s" % upd)
    stream.cancel()
    refused(lambda: fast.allocate(["cpu2"]), grpc.StatusCode.FAILED_PRECONDITION, "held by grant grant:latency:2-3")
    refused(lambda: lat.allocate(["cpu3"]), grpc.StatusCode.INVALID_ARGUMENT, "no core of this node has CPU 3")
    refused(lambda: thr.allocate(["cpu8"]), grpc.StatusCode.INVALID_ARGUMENT, "reserved by the policy")
    refused(lambda: lat.allocate(["cpu6"], ["cpu9"]), grpc.StatusCode.INVALID_ARGUMENT,
            "container request 1: device cpu9: not a core of corecarve.io/latency-cores")
    refused(lambda: lat.raw("Allocate", b"\xff\xff\xff"), grpc.StatusCode.INVALID_ARGUMENT,
            "not a valid AllocateRequest message")
    refused(lambda: lat.raw("Deallocate", b""), grpc.StatusCode.UNIMPLEMENTED, "unknown method")
    # cpu6 was refused with cpu9: nothing of that request was recorded.
    ok = lat.allocate(["cpu6"])
    podres.pods["b"] = ("corecarve.io/latency-cores", ["cpu6"])
    check(dict(ok.container_responses[0].annotations)["corecarve.io/grant"].startswith("grant:latency:6-7:"), "cpu6 after")


def phase_restart(work, kubelet):
    # A kubelet restart: it stops, empties the directory, listens anew.
    kubelet.stop()
    for f in os.listdir(work):
        if f.endswith(".sock"):
            os.unlink(os.path.join(work, f))
    k2 = Kubelet(os.path.join(work, "kubelet.sock"))
    regs = k2.wait(3)
    check({r.resource_name for r in regs} == RESOURCES, "registrations again: %s" % regs)
    for c in ("latency", "fast", "throughput"):
        check(os.path.exists(os.path.join(work, "corecarve-%s.sock" % c)), "socket of %s made again" % c)
    fast = Plugin(work, "corecarve-fast.sock")
    after = devices(next(fast.watch()))
    check(("cpu2", "Unhealthy", [0]) in after and ("cpu6", "Unhealthy", [0]) in after, "grants kept: %s" % after)
    return k2


def phase_pod_gone(work, podres):
    # Pod a is deleted: PodResources no longer lists it, and its grant is
    # freed (past the 1 s grace, at the next 2 s look); b's is kept.
    fast = Plugin(work, "corecarve-fast.sock")
    stream = fast.watch()
    next(stream)
    del podres.pods["a"]
    t0 = time.time()
    for resp in stream:
        now = devices(resp)
        if ("cpu2", "Healthy", [0]) in now:
            break
    check(time.time() - t0 < 6, "grant of a deleted pod freed after %.1fs" % (time.time() - t0))
    check(("cpu6", "Unhealthy", [0]) in now, "grant of a listed pod kept: %s" % now)
    stream.cancel()


def main():
    corecarve, root, work = sys.argv[1:4]
    os.makedirs(os.path.join(work, "state"), mode=0o700, exist_ok=True)
    with open(os.path.join(work, "policy.yaml"), "w") as f:
        f.write(POLICY)
    kubelet = Kubelet(os.path.join(work, "kubelet.sock"))
    # As on a node, PodResources is in a directory of its own.
    os.makedirs(os.path.join(work, "pod-resources"), exist_ok=True)
    podres = PodResources(os.path.join(work, "pod-resources", "kubelet.sock"))
    proc = subprocess.Popen([corecarve, "device-plugin", "--dir", work, "--root", root, "--state",
                             os.path.join(work, "state"), "--policy", os.path.join(work, "policy.yaml"),
                             "--pod-resources", os.path.join(work, "pod-resources", "kubelet.sock"), "--grace", "1"])
    try:
        regs = kubelet.wait(3)
        check({r.resource_name for r in regs} == RESOURCES, "registrations: %s" % regs)
        for r in regs:
            check(r.version == "v1beta1" and r.options.get_preferred_allocation_available, "register: %s" % r)
            # What the plugin answered inside its own Register call.
            got = kubelet.options[r.resource_name]
            check(got.get_preferred_allocation_available and not got.pre_start_required, "options: %s" % got)
            check(r.endpoint == "corecarve-%s.sock" % r.resource_name.split("/")[1][:-len("-cores")], r.endpoint)
        phase_first(work, podres)
        kubelet = phase_restart(work, kubelet)
        phase_pod_gone(work, podres)
        proc.send_signal(signal.SIGTERM)
        rc = proc.wait(timeout=5)
        check(rc == 0, "exit status %d after SIGTERM" % rc)
        left = sorted(f for f in os.listdir(work) if f.startswith("corecarve-"))
        check(not left, "sockets left after SIGTERM: %s" % left)
    finally:
        if proc.poll() is None:
            proc.kill()
        kubelet.stop()
        podres.server.stop(0).wait()
    print("interop: ok")


if __name__ == "__main__":
    main()
