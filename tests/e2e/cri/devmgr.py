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
    for fname, package, messages in (("devmgr_v1beta1.proto", PACKAGE, MESSAGES), ("devmgr_podres_v1.proto", "v1", PODRES)):
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

class Registration:
    """The kubelet's Registration service on `sock`: records what registers."""

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
