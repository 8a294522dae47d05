# make bench: the benchmarks of docs/performance.md.
#
#   make bench              everything this host can run, then the QEMU part
#   make bench-host         decision latency, growth, placement quality,
#                           callgrind instruction counts, the device
#                           plugin's Allocate and refresh (no root, no QEMU)
#   make bench-qemu         crun with vs without the hook, IRQ reconcile and
#                           audit timings inside the e2e guest (BENCH_KERNEL)
#   make bench-effect       the isolation a carve buys: a probe container
#                           idle, among noisy neighbours, and carved
#                           (bench/effect.sh: natively on a cgroup-v2 host
#                           with cpuset and >= 4 CPUs as root, else in the
#                           e2e guest); not part of make bench or check
#   make bench-build        only build build/bench/*
#
# Knobs: BENCH_N (invocations per host and mode, default 1000; hosts above
# 256 PUs take BENCH_N_LARGE, default 200),
# BENCH_EVENTS (placement stream length, default 10000), BENCH_SEED (1),
# BENCH_ONLY (one host, e.g. F06), BENCH_QEMU=0 (skip the guest),
# BENCH_KERNEL (6.12), BENCH_PAIRS (A/B pairs in the guest, default 20),
# BENCH_NATIVE_ROUNDS (crun rounds on this host, default 100; root only),
# BENCH_CG_N (invocations under callgrind, default 10),
# BENCH_EFFECT_ROUNDS (bench-effect rounds, default 5),
# BENCH_EFFECT_MODE (native or guest; default: native where it can).
#
# Every figure is a median (or a count) from one run in which the things
# compared were interleaved; nothing here asserts a time.  The QEMU part
# prints "BENCH ..." lines from the guest; they are collected from the
# console log here.

BENCH_N ?= 1000
BENCH_EVENTS ?= 10000
BENCH_SEED ?= 1
BENCH_ONLY ?=
BENCH_QEMU ?= 1
BENCH_KERNEL ?= 6.12
BENCH_PAIRS ?= 20
BENCH_NATIVE_ROUNDS ?= 100
BENCH_CG_N ?= 10
BENCH_EFFECT_ROUNDS ?= 5
BENCH_N_LARGE ?= 200
# Rounds of the device plugin's figures (each an Allocate and a refresh).
BENCH_DP_N ?= 200
# Seconds the guest scenario may take (TCG: a crun run is a second or so).
BENCH_QEMU_TIMEOUT ?= 1500
BENCH_CG_HOSTS ?= F03 F06 syn-224 syn-1024 syn-4096

BENCH_DIR := $(BUILD)/bench
BENCH_LIB_OBJ := $(BUILD)/bench/benchlib.o
BENCH_PROGS := $(BENCH_DIR)/decide $(BENCH_DIR)/place $(BENCH_DIR)/devplugin $(BENCH_DIR)/effect-probe

.PHONY: bench bench-build bench-host bench-qemu bench-callgrind bench-effect

$(BENCH_DIR)/decide: $(BUILD)/bench/decide.o $(BUILD)/bench/benchcg.o $(BENCH_LIB_OBJ) $(LIB) $(LINK_STAMP)
	$(CC) $(LDFLAGS) -o $@ $< $(BUILD)/bench/benchcg.o $(BENCH_LIB_OBJ) $(LIB) $(PKG_LIBS)

$(BENCH_DIR)/devplugin: $(BUILD)/bench/devplugin.o $(BENCH_LIB_OBJ) $(LIB) $(LINK_STAMP)
	$(CC) $(LDFLAGS) -o $@ $< $(BENCH_LIB_OBJ) $(LIB) $(PKG_LIBS)

$(BENCH_DIR)/place: $(BUILD)/bench/place.o $(BUILD)/bench/baselines.o $(BENCH_LIB_OBJ) $(LIB) $(LINK_STAMP)
	$(CC) $(LDFLAGS) -o $@ $< $(BUILD)/bench/baselines.o $(BENCH_LIB_OBJ) $(LIB) $(PKG_LIBS)

# The probe runs in a busybox container rootfs (no libc there): static, and
# without the sanitizers or the library's flags.
$(BENCH_DIR)/effect-probe: bench/effect-probe.c
	@mkdir -p $(@D)
	$(CC) -std=gnu11 -O2 -Wall -Wextra -Wshadow -Wformat=2 -Wstrict-prototypes -Wmissing-prototypes -static -o $@ $<

bench-build: $(BENCH_PROGS) $(BIN)

bench: bench-host
	@if [ "$(BENCH_QEMU)" = 1 ]; then $(MAKE) --no-print-directory bench-qemu; \
	else echo "bench: QEMU part skipped (BENCH_QEMU=0)"; fi

bench-host: bench-build $(FIRST_STAGE_BIN)
	@echo "== decision latency (bench/decide.c)"
	@$(BENCH_DIR)/decide --n $(BENCH_N) --n-large $(BENCH_N_LARGE) --bin $(abspath $(BIN)) $(if $(BENCH_ONLY),--only $(BENCH_ONLY))
	@echo
	@$(MAKE) --no-print-directory bench-callgrind
	@echo
	@echo "== placement quality (bench/place.c)"
	@$(BENCH_DIR)/place --events $(BENCH_EVENTS) --seed $(BENCH_SEED) $(if $(BENCH_ONLY),--only $(BENCH_ONLY))
	@echo
	@echo "== the device plugin: Allocate and a ListAndWatch refresh (bench/devplugin.c)"
	@$(BENCH_DIR)/devplugin --n $(BENCH_DP_N) $(if $(BENCH_ONLY),--only $(BENCH_ONLY))
	@echo
	@echo "== crun with and without the hook, natively (bench/crun-native.sh)"
	@bash bench/crun-native.sh $(abspath $(BIN)) $(BENCH_NATIVE_ROUNDS)

# Instructions per decision, from callgrind (exact where wall time on a
# shared machine is not): valgrind counts only inside decide_once().
bench-callgrind: bench-build
	@echo "== instructions per decision (callgrind, $(BENCH_CG_N) invocations each)"
	@sh bench/callgrind.sh $(BENCH_DIR)/decide $(BENCH_CG_N) $(BENCH_CG_HOSTS)

# The guest run uses its own cache directory (initramfs and console log),
# so other e2e runs on this tree neither wait for it nor overwrite its log;
# the kernels are the ones tests/e2e/fetch-kernels.sh keeps in .cache/e2e.
BENCH_E2E := $(BENCH_DIR)/e2e
bench-qemu: $(BIN) $(FIRST_STAGE_BIN)
	@echo "== in the QEMU guest (tests/e2e/scenarios/95-bench.sh, Linux $(BENCH_KERNEL), $(BENCH_PAIRS) rounds)"
	@mkdir -p $(BENCH_E2E) $(CURDIR)/.cache/e2e/kernels $(CURDIR)/.cache/e2e/debs
	@ln -sfn $(CURDIR)/.cache/e2e/kernels $(BENCH_E2E)/kernels
	@ln -sfn $(CURDIR)/.cache/e2e/debs $(BENCH_E2E)/debs
	@CC_BENCH=1 CC_BENCH_PAIRS=$(BENCH_PAIRS) CORECARVE_BIN=$(abspath $(BIN)) CORECARVE_FIRST_STAGE_BIN=$(abspath $(FIRST_STAGE_BIN)) E2E_CACHE=$(abspath $(BENCH_E2E)) \
		E2E_SCENARIO_TIMEOUT=$(BENCH_QEMU_TIMEOUT) E2E_TIMEOUT=$$(($(BENCH_QEMU_TIMEOUT) + 120)) \
		tests/e2e/run.sh --kernel $(BENCH_KERNEL) --scenarios '95-*' >$(BENCH_DIR)/qemu.out 2>&1; \
		rc=$$?; grep -E '^e2e' $(BENCH_DIR)/qemu.out; \
		grep -E '^(BENCH|FAIL|SKIP|INFO) ' $(BENCH_E2E)/log-$(BENCH_KERNEL).txt || true; \
		exit $$rc

# The guest run keeps its own cache directory, as bench-qemu does.
bench-effect: $(BIN) $(FIRST_STAGE_BIN) $(BENCH_DIR)/effect-probe
	@CORECARVE_FIRST_STAGE_BIN=$(abspath $(FIRST_STAGE_BIN)) BENCH_EFFECT_MODE=$(BENCH_EFFECT_MODE) bash bench/effect.sh $(abspath $(BIN)) $(abspath $(BENCH_DIR)/effect-probe) \
		$(BENCH_EFFECT_ROUNDS) $(BENCH_KERNEL) $(abspath $(BENCH_DIR))/effect

-include $(BUILD)/bench/decide.d $(BUILD)/bench/devplugin.d $(BUILD)/bench/benchcg.d $(BUILD)/bench/place.d $(BUILD)/bench/baselines.d $(BUILD)/bench/benchlib.d
