"""The kubelet's side of the device plugin API, for the tests that play
the kubelet's device manager against `corecarve device-plugin`: the
native interop test (tests/unit/devplugin_peer.py) and the node guests'
kubelet stand-in (tests/e2e/cri/devplugin.py).

  Registration  the kubelet's Registration service on its kubelet.sock
  PodResources  the kubelet's PodResources List (v1), the pods it admitted
  Plugin        a client of one resource's socket, as the kubelet dials it

The messages are deviceplugin v1beta1's and podresources v1's (field
numbers as published, as in proto/*.proto), built from descriptors at run
time as tests/e2e/cri/cri.py does: no protoc for Python.  Needs
python3-grpcio and python3-protobuf (Debian's).
"""
import os
import threading
import time
from concurrent import futures

import grpc
from google.protobuf import descriptor_pb2, descriptor_pool

from cri import message_class

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
    for fname, package, messages in (("devmgr_v1beta1.proto", PACKAGE, MESSAGES), ("devmgr_podres_v1.proto", "v1", PODRES)):
        pool.Add(_file(fname, package, messages))
        out.update(_messages(pool, fname, messages))
    return out


def _messages(pool, fname, messages):
    fdesc = pool.FindFileByName(fname)
    return {name: message_class(pool, fdesc.message_types_by_name[name]) for name in messages}


M = _classes()

class Registration:
    """The kubelet's Registration service on `sock`, answering as the kubelet
    does since its device manager's 2022 refactor (1.26+): `Register`
    (pkg/kubelet/cm/devicemanager/plugin/v1beta1/server.go, server.Register)
    checks the version and the resource name, then connectClient
    (handler.go) dials the plugin's endpoint and client.Connect (client.go)
    calls ManagerImpl.PluginConnected (manager.go), which calls the
    plugin's GetDevicePluginOptions, all before Register answers; a failure
    there fails the Register call.  What registered is recorded with the
    options the plugin answered (the kubelet keeps those, not the
    RegisterRequest's)."""

    # client.go, dial(): grpc.DialContext WithBlock under a 10 s timeout.
    DIAL_TIMEOUT = 10

    def __init__(self, sock):
        self.sock = sock
        self.registered = []
        self.options = {}   # resource -> DevicePluginOptions from GetDevicePluginOptions
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
        # server.Register: isVersionCompatibleWithPlugin, IsExtendedResourceName.
        if req.version != "v1beta1":
            ctx.abort(grpc.StatusCode.UNKNOWN, "unsupported API version %r" % req.version)
        if "/" not in req.resource_name or req.resource_name.startswith("kubernetes.io/"):
            ctx.abort(grpc.StatusCode.UNKNOWN, "invalid resource name %r" % req.resource_name)
        # connectClient -> client.Connect -> dial -> PluginConnected:
        # GetDevicePluginOptions on the plugin, inside this call.
        endpoint = os.path.join(os.path.dirname(self.sock), req.endpoint)
        ch = grpc.insecure_channel("unix:" + endpoint)
        try:
            grpc.channel_ready_future(ch).result(timeout=self.DIAL_TIMEOUT)
            opts = ch.unary_unary("/v1beta1.DevicePlugin/GetDevicePluginOptions",
                                  request_serializer=lambda m: m.SerializeToString(),
                                  response_deserializer=M["DevicePluginOptions"].FromString)(
                                      M["Empty"](), timeout=self.DIAL_TIMEOUT)
        except (grpc.RpcError, grpc.FutureTimeoutError) as e:
            ctx.abort(grpc.StatusCode.UNKNOWN, "failed to get device plugin options: %s" % e)
        finally:
            ch.close()
        with self.lock:
            self.registered.append(req)
            self.options[req.resource_name] = opts
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
    """The kubelet's PodResources List: the pods admitted, by name, each
    {name: (resource, [device IDs])} (one container "main"), or set
    `containers` for a pod: {pod: {container: [(resource, [IDs])]}}."""

    def __init__(self, sock):
        self.pods = {}
        self.containers = {}
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
        for name, ctrs in list(self.containers.items()):
            pod = resp.pod_resources.add(name=name, namespace="default")
            for cname, devs in ctrs.items():
                c = pod.containers.add(name=cname)
                for resource, ids in devs:
                    c.devices.add(resource_name=resource).device_ids.extend(ids)
        return resp

    def stop(self):
        self.server.stop(0).wait()


class Plugin:
    """A client of one resource's socket, as the kubelet dials it."""

    def __init__(self, workdir, endpoint):
        self.ch = grpc.insecure_channel("unix:" + os.path.join(workdir, endpoint))

    def close(self):
        self.ch.close()

    def unary(self, method, req, resp):
        return self.ch.unary_unary("/v1beta1.DevicePlugin/" + method, request_serializer=lambda m: m.SerializeToString(),
                                   response_deserializer=M[resp].FromString)(req, timeout=5)

    def raw(self, method, data):
        return self.ch.unary_unary("/v1beta1.DevicePlugin/" + method)(data, timeout=5)

    def watch(self, timeout=30):
        return self.ch.unary_stream("/v1beta1.DevicePlugin/ListAndWatch", request_serializer=lambda m: m.SerializeToString(),
                                    response_deserializer=M["ListAndWatchResponse"].FromString)(M["Empty"](), timeout=timeout)

    def allocate(self, *containers):
        req = M["AllocateRequest"]()
        for ids in containers:
            req.container_requests.add().devices_ids.extend(ids)
        return self.unary("Allocate", req, "AllocateResponse")


def devices(resp):
    """A ListAndWatch answer as [(ID, health, [NUMA nodes])]."""
    return [(d.ID, d.health, [n.ID for n in d.topology.nodes]) for d in resp.devices]


class Insufficient(Exception):
    """The kubelet's admission refusal: the pod stays Pending."""


class DeviceManager:
    """The kubelet's device manager (pkg/kubelet/cm/devicemanager), for the
    node guests' kubelet stand-in: Registration on DIR/kubelet.sock, each
    registered resource's devices kept from its ListAndWatch stream, and a
    container's admission the way the kubelet does it: the Healthy devices
    no container holds; GetPreferredAllocation when there is a choice and
    the plugin offers it; Allocate; the answer cached per (pod, container)
    and reused for the container's restarts (as the kubelet's checkpoint
    does); PodResources (v1 List on `podres`) listing what each admitted
    pod holds."""

    def __init__(self, directory, podres):
        self.dir = directory
        self.reg = Registration(os.path.join(directory, "kubelet.sock"))
        self.podres = PodResources(podres)
        self.lock = threading.Lock()
        self.devices = {}   # resource -> {ID: health}
        self.options = {}   # resource -> RegisterRequest.options
        self.endpoint = {}  # resource -> endpoint
        self.changed = {}   # resource -> time of the last list
        self.cache = {}     # (pod, container) -> (resource, [IDs], annotations)
        self.watched = set()

    def sync(self, want, timeout=20):
        """Wait for the registrations of the `want` resources and their
        first device lists."""
        end = time.time() + timeout
        while time.time() < end:
            with self.reg.lock:
                regs = list(self.reg.registered)
            for r in regs:
                with self.lock, self.reg.lock:
                    self.options[r.resource_name] = self.reg.options[r.resource_name]
                    new = self.endpoint.get(r.resource_name) != r.endpoint or r.resource_name not in self.watched
                    self.endpoint[r.resource_name] = r.endpoint
                if new:
                    self._watch(r.resource_name, r.endpoint)
            with self.lock:
                if set(want) <= set(self.devices) and set(want) <= self.watched:
                    return
            time.sleep(0.1)
        raise AssertionError("resources %s after %ds, want %s" % (sorted(self.devices), timeout, sorted(want)))

    def _watch(self, resource, endpoint):
        plugin = Plugin(self.dir, endpoint)
        with self.lock:
            self.watched.add(resource)

        def loop():
            try:
                for resp in plugin.watch(timeout=3600):
                    with self.lock:
                        self.devices[resource] = {d[0]: d[1] for d in devices(resp)}
                        self.changed[resource] = time.time()
            except grpc.RpcError:
                pass
            with self.lock:
                self.watched.discard(resource)

        threading.Thread(target=loop, daemon=True).start()

    def forget_lists(self):
        """Before the plugins come back (restarted): their old lists go, so
        sync waits for new ones."""
        with self.lock:
            self.devices.clear()

    def healthy(self, resource):
        with self.lock:
            return sorted((i for i, h in self.devices.get(resource, {}).items() if h == "Healthy"),
                          key=lambda i: int(i[3:]))

    def health(self, resource, dev):
        with self.lock:
            return self.devices.get(resource, {}).get(dev)

    def wait_health(self, resource, dev, want, timeout=5):
        """Seconds until `dev` of `resource` reads `want`; raises after
        `timeout`."""
        t0 = time.time()
        while time.time() - t0 < timeout:
            if self.health(resource, dev) == want:
                return time.time() - t0
            time.sleep(0.05)
        raise AssertionError("%s %s: %s after %ds, want %s" % (resource, dev, self.health(resource, dev), timeout, want))

    def plugin(self, resource):
        with self.lock:
            return Plugin(self.dir, self.endpoint[resource])

    def admit(self, pod, container, resource, n):
        """The annotations Allocate answered for `container` of `pod` (the
        cached ones when it was admitted before); Insufficient when fewer
        than n devices are free, as the kubelet leaves the pod Pending."""
        if (pod, container) in self.cache:
            return dict(self.cache[(pod, container)][2])
        with self.lock:
            held = {i for (r, ids, _) in self.cache.values() if r == resource for i in ids}
        free = [i for i in self.healthy(resource) if i not in held]
        if len(free) < n:
            raise Insufficient("insufficient %s: %d requested, %d free" % (resource, n, len(free)))
        ids = free[:n]
        p = self.plugin(resource)
        try:
            if len(free) > n and self.options[resource].get_preferred_allocation_available:
                req = M["PreferredAllocationRequest"]()
                cr = req.container_requests.add(allocation_size=n)
                cr.available_deviceIDs.extend(free)
                pref = p.unary("GetPreferredAllocation", req, "PreferredAllocationResponse")
                ids = list(pref.container_responses[0].deviceIDs)
            resp = p.allocate(ids)
        finally:
            p.close()
        ann = dict(resp.container_responses[0].annotations)
        with self.lock:
            self.cache[(pod, container)] = (resource, ids, ann)
            self.podres.containers.setdefault(pod, {})[container] = [(resource, ids)]
        return dict(ann)

    def ids_of(self, pod, container):
        return list(self.cache[(pod, container)][1])

    def forget(self, pod):
        """The pod is deleted: its devices are free again, PodResources no
        longer lists it."""
        with self.lock:
            for k in [k for k in self.cache if k[0] == pod]:
                del self.cache[k]
            self.podres.containers.pop(pod, None)

    def restart(self):
        """A kubelet restart: it stops, empties the directory of sockets,
        listens anew; the plugins must register again."""
        self.reg.stop()
        for f in os.listdir(self.dir):
            if f.endswith(".sock"):
                os.unlink(os.path.join(self.dir, f))
        self.reg = Registration(os.path.join(self.dir, "kubelet.sock"))

    def stop(self):
        self.reg.stop()
        self.podres.stop()
