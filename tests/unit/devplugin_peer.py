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

The messages are deviceplugin v1beta1's (field numbers as published, as in
proto/deviceplugin_v1beta1.proto), built from descriptors at run time as
tests/e2e/cri/cri.py does: no protoc for Python.
"""
import re
import os
import signal
import subprocess
import sys
import threading
import time
from concurrent import futures

import grpc
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

PACKAGE = "v1beta1"
MESSAGES = {
    "DevicePluginOptions": [("pre_start_required", 1, "bool"), ("get_preferred_allocation_available", 2, "bool")],
    "RegisterRequest": [("version", 1, "string"), ("endpoint", 2, "string"), ("resource_name", 3, "string"),
                        ("options", 4, "DevicePluginOptions")],
    "Empty": [],
    "ListAndWatchResponse": [("devices", 1, "repeated Device")],
    "TopologyInfo": [("nodes", 1, "repeated NUMANode")],
    "NUMANode": [("ID", 1, "int64")],
    "Device": [("ID", 1, "string"), ("health", 2, "string"), ("topology", 3, "TopologyInfo")],
    "PreferredAllocationRequest": [("container_requests", 1, "repeated ContainerPreferredAllocationRequest")],
    "ContainerPreferredAllocationRequest": [("available_deviceIDs", 1, "repeated string"),
                                            ("must_include_deviceIDs", 2, "repeated string"),
                                            ("allocation_size", 3, "int32")],
    "PreferredAllocationResponse": [("container_responses", 1, "repeated ContainerPreferredAllocationResponse")],
    "ContainerPreferredAllocationResponse": [("deviceIDs", 1, "repeated string")],
    "AllocateRequest": [("container_requests", 1, "repeated ContainerAllocateRequest")],
    "ContainerAllocateRequest": [("devices_ids", 1, "repeated string")],
    "AllocateResponse": [("container_responses", 1, "repeated ContainerAllocateResponse")],
    "ContainerAllocateResponse": [("envs", 1, "map"), ("annotations", 4, "map")],
}
# PodResources v1 (package v1): what List answers.
PODRES = {
    "ListPodResourcesRequest": [],
    "ListPodResourcesResponse": [("pod_resources", 1, "repeated PodResources")],
    "PodResources": [("name", 1, "string"), ("namespace", 2, "string"), ("containers", 3, "repeated ContainerResources")],
    "ContainerResources": [("name", 1, "string"), ("devices", 2, "repeated ContainerDevices")],
    "ContainerDevices": [("resource_name", 1, "string"), ("device_ids", 2, "repeated string")],
}
F = descriptor_pb2.FieldDescriptorProto
SCALARS = {"string": F.TYPE_STRING, "bool": F.TYPE_BOOL, "int64": F.TYPE_INT64, "int32": F.TYPE_INT32}


def _file(fname, package, messages):
    fd = descriptor_pb2.FileDescriptorProto(name=fname, package=package, syntax="proto3")
    for name, fields in messages.items():
        m = fd.message_type.add(name=name)
        for fname, num, ftype in fields:
            f = m.field.add(name=fname, number=num, label=F.LABEL_OPTIONAL)
            if ftype.startswith("repeated "):
                f.label = F.LABEL_REPEATED
                ftype = ftype[len("repeated "):]
            if ftype == "map":
                entry = m.nested_type.add(name=fname.title() + "Entry")
                entry.options.map_entry = True
                entry.field.add(name="key", number=1, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
                entry.field.add(name="value", number=2, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
                f.label = F.LABEL_REPEATED
                f.type = F.TYPE_MESSAGE
                f.type_name = ".%s.%s.%s" % (package, name, entry.name)
            elif ftype in SCALARS:
                f.type = SCALARS[ftype]
            else:
                f.type = F.TYPE_MESSAGE
                f.type_name = ".%s.%s" % (package, ftype)
    return fd


def _classes():
    pool = descriptor_pool.DescriptorPool()
    out = {}
    for fname, package, messages in (("devplugin_peer.proto", PACKAGE, MESSAGES), ("podres_peer.proto", "v1", PODRES)):
        pool.Add(_file(fname, package, messages))
        out.update(_messages(pool, fname, messages))
    return out


def _messages(pool, fname, messages):
    fdesc = pool.FindFileByName(fname)
    out = {}
    for name in messages:
        d = fdesc.message_types_by_name[name]
        if hasattr(message_factory, "GetMessageClass"):
            out[name] = message_factory.GetMessageClass(d)
        else:
            out[name] = message_factory.MessageFactory(pool).GetPrototype(d)
    return out


M = _classes()

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


class Kubelet:
    """Registration on WORKDIR/kubelet.sock: records what registers."""

    def __init__(self, sock):
        self.sock = sock
        self.registered = []
        self.lock = threading.Lock()
        handler = grpc.method_handlers_generic_handler("v1beta1.Registration", {
            "Register": grpc.unary_unary_rpc_method_handler(
                self.register, request_deserializer=M["RegisterRequest"].FromString,
                response_serializer=lambda m: m.SerializeToString()),
        })
        self.server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
        self.server.add_generic_rpc_handlers((handler,))
        self.server.add_insecure_port("unix:" + sock)
        self.server.start()

    def register(self, req, ctx):
        with self.lock:
            self.registered.append(req)
        return M["Empty"]()

    def wait(self, n, timeout=10):
        end = time.time() + timeout
        while time.time() < end:
            with self.lock:
                if len(self.registered) >= n:
                    return list(self.registered)
            time.sleep(0.05)
        raise AssertionError("%d registrations after %ds, want %d" % (len(self.registered), timeout, n))

    def stop(self):
        self.server.stop(0).wait()


class PodResources:
    """The kubelet's PodResources List: the pods admitted, by name."""

    def __init__(self, sock):
        self.pods = {}
        handler = grpc.method_handlers_generic_handler("v1.PodResourcesLister", {
            "List": grpc.unary_unary_rpc_method_handler(
                self.list, request_deserializer=M["ListPodResourcesRequest"].FromString,
                response_serializer=lambda m: m.SerializeToString()),
        })
        self.server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
        self.server.add_generic_rpc_handlers((handler,))
        self.server.add_insecure_port("unix:" + sock)
        self.server.start()

    def list(self, req, ctx):
        resp = M["ListPodResourcesResponse"]()
        for name, (resource, ids) in list(self.pods.items()):
            pod = resp.pod_resources.add(name=name, namespace="default")
            dev = pod.containers.add(name="main").devices.add(resource_name=resource)
            dev.device_ids.extend(ids)
        return resp


class Plugin:
    """A client of one resource's socket, as the kubelet dials it."""

    def __init__(self, workdir, endpoint):
        self.ch = grpc.insecure_channel("unix:" + os.path.join(workdir, endpoint))

    def unary(self, method, req, resp):
        return self.ch.unary_unary("/v1beta1.DevicePlugin/" + method, request_serializer=lambda m: m.SerializeToString(),
                                   response_deserializer=M[resp].FromString)(req, timeout=5)

    def raw(self, method, data):
        return self.ch.unary_unary("/v1beta1.DevicePlugin/" + method)(data, timeout=5)

    def watch(self):
        return self.ch.unary_stream("/v1beta1.DevicePlugin/ListAndWatch", request_serializer=lambda m: m.SerializeToString(),
                                    response_deserializer=M["ListAndWatchResponse"].FromString)(M["Empty"](), timeout=30)

    def allocate(self, *containers):
        req = M["AllocateRequest"]()
        for ids in containers:
            req.container_requests.add().devices_ids.extend(ids)
        return self.unary("Allocate", req, "AllocateResponse")


def devices(resp):
    return [(d.ID, d.health, [n.ID for n in d.topology.nodes]) for d in resp.devices]


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
