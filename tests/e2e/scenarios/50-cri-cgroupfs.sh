#!/bin/sh
# 50-cri-cgroupfs: Kubernetes pods through containerd's CRI with the
# kubelet's cgroupfs driver (tests/e2e/cri/pods.py has the cases): the
# node set up from manifests/ (the DaemonSet's installer, the ConfigMap's
# policy, containerd's snippet for this driver), pods driven by the kubelet
# stand-in (cri/kubelet.py) with the kubelet's values.
# e2e-guest: k8s
exec python3 /e2e/cri/pods.py cgroupfs
