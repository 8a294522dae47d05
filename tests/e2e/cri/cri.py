"""A CRI client (runtime.v1) for the e2e guests, without generated code.

The messages below are the subset of Kubernetes' cri-api
(staging/src/k8s.io/cri-api/pkg/apis/runtime/v1/api.proto) that the kubelet
stand-in sends and reads, with the upstream field numbers: protobuf's wire
format is the numbers and types, so a subset is the same protocol.  The
descriptors are built at run time (descriptor_pb2) rather than by protoc,
which keeps the guest free of grpc-tools and of the generated code's
version coupling to the protobuf runtime.  Messages are plain dicts in and
out (json_format, proto field names).
"""
import grpc
from google.protobuf import descriptor_pb2, descriptor_pool, json_format, message_factory

PACKAGE = "runtime.v1"

ENUMS = {
    "NamespaceMode": ["POD", "CONTAINER", "NODE", "TARGET"],
    "ContainerState": ["CONTAINER_CREATED", "CONTAINER_RUNNING", "CONTAINER_EXITED", "CONTAINER_UNKNOWN"],
    "PodSandboxState": ["SANDBOX_READY", "SANDBOX_NOTREADY"],
}

# name: [(field, number, type)], type "repeated T", "map" (string to string),
# a scalar, an enum or a message of this file.
MESSAGES = {
    "VersionRequest": [("version", 1, "string")],
    "VersionResponse": [("version", 1, "string"), ("runtime_name", 2, "string"),
                        ("runtime_version", 3, "string"), ("runtime_api_version", 4, "string")],
    "PodSandboxMetadata": [("name", 1, "string"), ("uid", 2, "string"), ("namespace", 3, "string"),
                           ("attempt", 4, "uint32")],
    "Int64Value": [("value", 1, "int64")],
    "NamespaceOption": [("network", 1, "NamespaceMode"), ("pid", 2, "NamespaceMode"),
                        ("ipc", 3, "NamespaceMode"), ("target_id", 4, "string")],
    "LinuxSandboxSecurityContext": [("namespace_options", 1, "NamespaceOption"),
                                    ("run_as_user", 3, "Int64Value"), ("readonly_rootfs", 4, "bool"),
                                    ("supplemental_groups", 5, "repeated int64"), ("privileged", 6, "bool"),
                                    ("run_as_group", 8, "Int64Value")],
    "LinuxContainerResources": [("cpu_period", 1, "int64"), ("cpu_quota", 2, "int64"), ("cpu_shares", 3, "int64"),
                                ("memory_limit_in_bytes", 4, "int64"), ("oom_score_adj", 5, "int64"),
                                ("cpuset_cpus", 6, "string"), ("cpuset_mems", 7, "string"),
                                ("unified", 9, "map"), ("memory_swap_limit_in_bytes", 10, "int64")],
    "LinuxPodSandboxConfig": [("cgroup_parent", 1, "string"),
                              ("security_context", 2, "LinuxSandboxSecurityContext"), ("sysctls", 3, "map"),
                              ("overhead", 4, "LinuxContainerResources"),
                              ("resources", 5, "LinuxContainerResources")],
    "PodSandboxConfig": [("metadata", 1, "PodSandboxMetadata"), ("hostname", 2, "string"),
                         ("log_directory", 3, "string"), ("labels", 6, "map"), ("annotations", 7, "map"),
                         ("linux", 8, "LinuxPodSandboxConfig")],
    "RunPodSandboxRequest": [("config", 1, "PodSandboxConfig"), ("runtime_handler", 2, "string")],
    "RunPodSandboxResponse": [("pod_sandbox_id", 1, "string")],
    "StopPodSandboxRequest": [("pod_sandbox_id", 1, "string")],
    "StopPodSandboxResponse": [],
    "RemovePodSandboxRequest": [("pod_sandbox_id", 1, "string")],
    "RemovePodSandboxResponse": [],
    "ContainerMetadata": [("name", 1, "string"), ("attempt", 2, "uint32")],
    "ImageSpec": [("image", 1, "string"), ("annotations", 2, "map")],
    "KeyValue": [("key", 1, "string"), ("value", 2, "string")],
    "Mount": [("container_path", 1, "string"), ("host_path", 2, "string"), ("readonly", 3, "bool"),
              ("selinux_relabel", 4, "bool")],
    "Capability": [("add_capabilities", 1, "repeated string"), ("drop_capabilities", 2, "repeated string")],
    "LinuxContainerSecurityContext": [("capabilities", 1, "Capability"), ("privileged", 2, "bool"),
                                      ("namespace_options", 3, "NamespaceOption"),
                                      ("run_as_user", 5, "Int64Value"), ("run_as_username", 6, "string"),
                                      ("readonly_rootfs", 7, "bool"),
                                      ("supplemental_groups", 8, "repeated int64"), ("no_new_privs", 11, "bool"),
                                      ("run_as_group", 12, "Int64Value"),
                                      ("masked_paths", 13, "repeated string"),
                                      ("readonly_paths", 14, "repeated string")],
    "LinuxContainerConfig": [("resources", 1, "LinuxContainerResources"),
                             ("security_context", 2, "LinuxContainerSecurityContext")],
    "ContainerConfig": [("metadata", 1, "ContainerMetadata"), ("image", 2, "ImageSpec"),
                        ("command", 3, "repeated string"), ("args", 4, "repeated string"),
                        ("working_dir", 5, "string"), ("envs", 6, "repeated KeyValue"),
                        ("mounts", 7, "repeated Mount"), ("labels", 9, "map"), ("annotations", 10, "map"),
                        ("log_path", 11, "string"), ("stdin", 12, "bool"), ("stdin_once", 13, "bool"),
                        ("tty", 14, "bool"), ("linux", 15, "LinuxContainerConfig")],
    "CreateContainerRequest": [("pod_sandbox_id", 1, "string"), ("config", 2, "ContainerConfig"),
                               ("sandbox_config", 3, "PodSandboxConfig")],
    "CreateContainerResponse": [("container_id", 1, "string")],
    "StartContainerRequest": [("container_id", 1, "string")],
    "StartContainerResponse": [],
    "StopContainerRequest": [("container_id", 1, "string"), ("timeout", 2, "int64")],
    "StopContainerResponse": [],
    "RemoveContainerRequest": [("container_id", 1, "string")],
    "RemoveContainerResponse": [],
    "UpdateContainerResourcesRequest": [("container_id", 1, "string"), ("linux", 2, "LinuxContainerResources"),
                                        ("annotations", 4, "map")],
    "UpdateContainerResourcesResponse": [],
    "ContainerStatusRequest": [("container_id", 1, "string"), ("verbose", 2, "bool")],
    "ContainerStatus": [("id", 1, "string"), ("metadata", 2, "ContainerMetadata"), ("state", 3, "ContainerState"),
                        ("created_at", 4, "int64"), ("started_at", 5, "int64"), ("finished_at", 6, "int64"),
                        ("exit_code", 7, "int32"), ("image", 8, "ImageSpec"), ("image_ref", 9, "string"),
                        ("reason", 10, "string"), ("message", 11, "string"), ("labels", 12, "map"),
                        ("annotations", 13, "map"), ("log_path", 15, "string")],
    "ContainerStatusResponse": [("status", 1, "ContainerStatus"), ("info", 2, "map")],
    "PodSandboxStatusRequest": [("pod_sandbox_id", 1, "string"), ("verbose", 2, "bool")],
    "PodSandboxStatus": [("id", 1, "string"), ("metadata", 2, "PodSandboxMetadata"),
                         ("state", 3, "PodSandboxState"), ("created_at", 4, "int64")],
    "PodSandboxStatusResponse": [("status", 1, "PodSandboxStatus"), ("info", 2, "map")],
    "ContainerStateValue": [("state", 1, "ContainerState")],
    "ContainerFilter": [("id", 1, "string"), ("state", 2, "ContainerStateValue"),
                        ("pod_sandbox_id", 3, "string"), ("label_selector", 4, "map")],
    "ListContainersRequest": [("filter", 1, "ContainerFilter")],
    "Container": [("id", 1, "string"), ("pod_sandbox_id", 2, "string"), ("metadata", 3, "ContainerMetadata"),
                  ("state", 6, "ContainerState")],
    "ListContainersResponse": [("containers", 1, "repeated Container")],
    "PodSandboxStateValue": [("state", 1, "PodSandboxState")],
    "PodSandboxFilter": [("id", 1, "string"), ("state", 2, "PodSandboxStateValue"), ("label_selector", 3, "map")],
    "ListPodSandboxRequest": [("filter", 1, "PodSandboxFilter")],
    "PodSandbox": [("id", 1, "string"), ("metadata", 2, "PodSandboxMetadata"), ("state", 3, "PodSandboxState"),
                   ("created_at", 4, "int64"), ("labels", 5, "map"), ("annotations", 6, "map"),
                   ("runtime_handler", 7, "string")],
    "ListPodSandboxResponse": [("items", 1, "repeated PodSandbox")],
}

RUNTIME = {
    "Version": "VersionRequest",
    "RunPodSandbox": "RunPodSandboxRequest",
    "StopPodSandbox": "StopPodSandboxRequest",
    "RemovePodSandbox": "RemovePodSandboxRequest",
    "PodSandboxStatus": "PodSandboxStatusRequest",
    "CreateContainer": "CreateContainerRequest",
    "StartContainer": "StartContainerRequest",
    "StopContainer": "StopContainerRequest",
    "RemoveContainer": "RemoveContainerRequest",
    "ContainerStatus": "ContainerStatusRequest",
    "UpdateContainerResources": "UpdateContainerResourcesRequest",
    "ListContainers": "ListContainersRequest",
    "ListPodSandbox": "ListPodSandboxRequest",
}

_SCALARS = {
    "string": descriptor_pb2.FieldDescriptorProto.TYPE_STRING,
    "bool": descriptor_pb2.FieldDescriptorProto.TYPE_BOOL,
    "int64": descriptor_pb2.FieldDescriptorProto.TYPE_INT64,
    "int32": descriptor_pb2.FieldDescriptorProto.TYPE_INT32,
    "uint32": descriptor_pb2.FieldDescriptorProto.TYPE_UINT32,
    "bytes": descriptor_pb2.FieldDescriptorProto.TYPE_BYTES,
}


def _file():
    fd = descriptor_pb2.FileDescriptorProto(name="e2e_cri.proto", package=PACKAGE, syntax="proto3")
    F = descriptor_pb2.FieldDescriptorProto
    for name, values in ENUMS.items():
        e = fd.enum_type.add(name=name)
        for i, v in enumerate(values):
            e.value.add(name=v, number=i)
    for name, fields in MESSAGES.items():
        m = fd.message_type.add(name=name)
        for fname, num, ftype in fields:
            f = m.field.add(name=fname, number=num, json_name=fname)
            f.label = F.LABEL_OPTIONAL
            if ftype.startswith("repeated "):
                f.label = F.LABEL_REPEATED
                ftype = ftype[len("repeated "):]
            if ftype == "map":
                entry = m.nested_type.add(name="".join(p.title() for p in fname.split("_")) + "Entry")
                entry.options.map_entry = True
                entry.field.add(name="key", number=1, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL, json_name="key")
                entry.field.add(name="value", number=2, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL,
                                json_name="value")
                f.label = F.LABEL_REPEATED
                f.type = F.TYPE_MESSAGE
                f.type_name = ".%s.%s.%s" % (PACKAGE, name, entry.name)
            elif ftype in _SCALARS:
                f.type = _SCALARS[ftype]
            elif ftype in ENUMS:
                f.type = F.TYPE_ENUM
                f.type_name = ".%s.%s" % (PACKAGE, ftype)
            else:
                assert ftype in MESSAGES, ftype
                f.type = F.TYPE_MESSAGE
                f.type_name = ".%s.%s" % (PACKAGE, ftype)
    return fd


def message_class(pool, desc):
    """The message class of descriptor `desc` from `pool`, on every
    protobuf Debian ships: GetMessageClass from 4.22, the factory before."""
    if hasattr(message_factory, "GetMessageClass"):
        return message_factory.GetMessageClass(desc)
    return message_factory.MessageFactory(pool).GetPrototype(desc)


def _classes():
    pool = descriptor_pool.DescriptorPool()
    fdesc = pool.Add(_file()) if hasattr(pool, "Add") else None
    fdesc = pool.FindFileByName("e2e_cri.proto")
    out = {}
    for name in MESSAGES:
        out[name] = message_class(pool, fdesc.message_types_by_name[name])
    return out


CLASSES = _classes()


class Client:
    """RuntimeService over containerd's socket; dicts in, dicts out."""

    def __init__(self, socket="/run/containerd/containerd.sock", timeout=120):
        self.channel = grpc.insecure_channel("unix://" + socket)
        self.timeout = timeout

    def call(self, method, req=None, timeout=None):
        rq = RUNTIME[method]
        rs = rq[: -len("Request")] + "Response"
        fn = self.channel.unary_unary(
            "/%s.RuntimeService/%s" % (PACKAGE, method),
            request_serializer=lambda d: json_format.ParseDict(d, CLASSES[rq]()).SerializeToString(),
            response_deserializer=lambda b: json_format.MessageToDict(
                CLASSES[rs].FromString(b), preserving_proto_field_name=True),
        )
        return fn(req or {}, timeout=timeout or self.timeout)
