# End-to-end tests: boot Debian's 6.1, 6.12 and newest 7.x cloud kernels under
# QEMU (TCG) and run tests/e2e/scenarios/*.sh against the freshly built
# corecarve. Included by the top-level Makefile (`-include tests/e2e/e2e.mk`),
# which defines the binary target ($(BIN), normally `corecarve`).
#
#   make e2e                      the three kernels, each booted once
#   make e2e E2E_KERNEL=6.12      one kernel: 6.1, 6.12 or 7 (the newest 7.x)
#   make e2e E2E_SCENARIOS='01-*' some scenarios (pattern on file names)
#   make e2e E2E_FLAGS=--demo     stream the guest console
#   make e2e-fetch                only download and unpack the kernels (E2E_CACHE)
#   make e2e-matrix               the node guests on every kernel with both
#                                 node images (Debian 12's and 13's stack): the
#                                 whole matrix, four node guests more than
#                                 make e2e (about 7 minutes each on 2 cores);
#                                 make check boots Debian 12's on 6.1 and 13's
#                                 on 7.x (E2E_K8S_NODES in run.sh)

E2E_DIR := $(patsubst %/,%,$(dir $(lastword $(MAKEFILE_LIST))))
# The test build (CORECARVE_FAULT read: the crash scenarios need it).
E2E_BIN ?= $(if $(FAULT_BIN),$(FAULT_BIN),$(if $(BIN),$(BIN),corecarve))
E2E_KERNEL ?= all
E2E_SCENARIOS ?= *
E2E_FLAGS ?=

# Every kernel with both node images, and the initramfs guest once each.
E2E_MATRIX_NODES := 6.1=bookworm 6.1=trixie 6.12=bookworm 6.12=trixie 7=bookworm 7=trixie

.PHONY: e2e e2e-fetch e2e-matrix kubelet

# The first stage the guests register (corecarve-hook, beside corecarve
# there as the manifests install it).
E2E_FIRST_STAGE_BIN ?= $(if $(FIRST_STAGE_BIN),$(FIRST_STAGE_BIN),corecarve-hook)

e2e: $(E2E_BIN) $(E2E_FIRST_STAGE_BIN)
	CORECARVE_BIN=$(abspath $(E2E_BIN)) CORECARVE_FIRST_STAGE_BIN=$(abspath $(E2E_FIRST_STAGE_BIN)) $(E2E_DIR)/run.sh --kernel $(E2E_KERNEL) --scenarios '$(E2E_SCENARIOS)' $(E2E_FLAGS)

e2e-matrix: $(E2E_BIN) $(E2E_FIRST_STAGE_BIN)
	CORECARVE_BIN=$(abspath $(E2E_BIN)) CORECARVE_FIRST_STAGE_BIN=$(abspath $(E2E_FIRST_STAGE_BIN)) E2E_K8S_NODES='$(E2E_MATRIX_NODES)' $(E2E_DIR)/run.sh --kernel $(E2E_KERNEL) --scenarios '$(E2E_SCENARIOS)' $(E2E_FLAGS)

e2e-fetch:
	$(E2E_DIR)/fetch-kernels.sh $(E2E_CACHE)

# The real kubelet (issue #43), from its published Go module, cached by
# version outside the clone (tests/e2e/k8s/mkkubelet.sh says how).
KUBELET_VERSION ?= v1.37.2
kubelet:
	KUBELET_VERSION=$(KUBELET_VERSION) sh $(E2E_DIR)/k8s/mkkubelet.sh
