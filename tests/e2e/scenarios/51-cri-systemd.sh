#!/bin/sh
# 51-cri-systemd: the same pods as 50-cri-cgroupfs with the kubelet's
# systemd driver (SystemdCgroup = true): pod slices made as transient units,
# containers in cri-containerd-<id>.scope; plus systemctl daemon-reload
# while carved and a second container in the pod's slice.
# e2e-guest: k8s
exec python3 /e2e/cri/pods.py systemd
