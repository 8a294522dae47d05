#!/bin/sh
# 52-cri-daemonset: the DaemonSet's audit container through containerd's
# CRI with the manifest's command, env, mounts, securityContext and hostPID
# (tests/e2e/cri/daemonset.py): it sees the node's tasks, its AUTOFIX lifts
# a kubelet-restored quota and leaves a self-pinned task reported; in a PID
# namespace of its own it says it cannot see the tasks (TASKS_HIDDEN).
# e2e-guest: k8s
exec python3 /e2e/cri/daemonset.py cgroupfs
