#!/bin/sh
# 54-cri-devplugin: corecarve device-plugin with the kubelet's device
# manager played by the stand-in (tests/e2e/cri/devmgr.py) and pods made
# through containerd's CRI with the Allocate answer's annotations
# (tests/e2e/cri/devplugin.py has the cases): the capacity offered is what
# `corecarve status` says fits; a granted pod is carved on exactly its
# cores and keeps them across a restart; a full class refuses admission;
# forged grants are refused; plugin and kubelet restarts; a deleted pod's
# grant is freed.
# e2e-guest: k8s
exec python3 /e2e/cri/devplugin.py
