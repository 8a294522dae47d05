#!/bin/sh
# 55-kubelet: the real kubelet v1.37 (make kubelet builds it from its Go
# module) in standalone mode on the node guest, with corecarve
# device-plugin: every class registers with it (its Register handler calls
# the plugin back first), its device manager's checkpoint lists the
# devices, and a kubelet restart registers them again.  What is checked is
# the kubelet's own log and checkpoint (tests/e2e/cri/realkubelet.py).
# e2e-guest: k8s
# e2e-needs: kubelet
exec python3 /e2e/cri/realkubelet.py
