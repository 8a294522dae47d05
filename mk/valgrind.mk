# valgrind memcheck over the CLI commands on the real-machine fixtures and
# synthetic hosts (tests/valgrind.sh).  Not with SANITIZE=1: ASan and
# valgrind cannot share a process.
.PHONY: valgrind
valgrind: $(BIN)
	@if [ "$(SANITIZE)" = 1 ]; then echo "valgrind: build without SANITIZE=1" >&2; exit 2; fi
	@sh tests/valgrind.sh $(abspath $(BIN))
