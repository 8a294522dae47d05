# corecarve audit: `make bench` boots the e2e guest and times
# `corecarve audit` on 100 to 2000 cgroups (tests/e2e/bench/bench-audit.sh);
# the figures are the "INFO bench-audit: BENCH ..." lines of the log.
#
#   make bench                       on Linux 6.12
#   make bench AUDIT_BENCH_KERNEL=6.1

AUDIT_BENCH_KERNEL ?= 6.12

.PHONY: bench-audit
bench: bench-audit

bench-audit: $(BIN)
	@CORECARVE_BIN=$(abspath $(BIN)) E2E_EXTRA_SCENARIOS=$(CURDIR)/tests/e2e/bench \
		E2E_SCENARIO_TIMEOUT=$${E2E_SCENARIO_TIMEOUT:-400} E2E_TIMEOUT=$${E2E_TIMEOUT:-520} \
		tests/e2e/run.sh --kernel $(AUDIT_BENCH_KERNEL) --scenarios 'bench-audit*'
	@grep -h 'BENCH' $(or $(E2E_CACHE),.cache/e2e)/log-$(AUDIT_BENCH_KERNEL).txt || true
