# libFuzzer targets for every parser of untrusted input (tests/fuzz/).
#
#   make fuzz          each target for FUZZ_SECONDS (default 60)
#   make fuzz-smoke    replay every seed and saved crash, then each target for
#                      FUZZ_SMOKE_SECONDS (default 10): what CI runs
#   make fuzz-build    only build them (build-fuzz/)
#
# The project's own sources are compiled again with clang, instrumented
# (-fsanitize=fuzzer-no-link,address,undefined), into build-fuzz/; the
# targets link them with -fsanitize=fuzzer.  Seeds are in
# tests/fuzz/corpus/<target>/ (small, hand-made, checked in); what a run
# discovers goes to build-fuzz/corpus/<target>/, a crash to
# build-fuzz/crash/<target>-*.  A crash becomes a regression test by
# copying its input into tests/fuzz/corpus/<target>/: every seed is
# replayed first by fuzz-smoke and fuzz.

FUZZ_CC ?= clang
FUZZ_BUILD := build-fuzz
FUZZ_SECONDS ?= 60
FUZZ_SMOKE_SECONDS ?= 10
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
# clang, unlike gcc, reads a vsnprintf wrapper (error.c) as a non-literal format.
FUZZ_CFLAGS := -DCC_SOURCE_DIR=\"$(CURDIR)\" -std=gnu11 -O1 -g $(WARN) -Wno-format-nonliteral $(FUZZ_SAN) \
	$(addprefix -I,$(PLUGIN_DIRS)) -Icgroup -I$(BUILD)/gen -Itests/fuzz $(PKG_CFLAGS)

FUZZ_SRC := $(sort $(wildcard tests/fuzz/fuzz_*.c))
FUZZ_NAMES := $(FUZZ_SRC:tests/fuzz/%.c=%)
FUZZ_BIN := $(FUZZ_NAMES:%=$(FUZZ_BUILD)/%)
FUZZ_LIB_OBJ := $(LIB_SRC:%.c=$(FUZZ_BUILD)/%.o)
FUZZ_LIB := $(FUZZ_BUILD)/libcorecarve.a

.PHONY: fuzz fuzz-smoke fuzz-build

$(FUZZ_BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -MMD -MP -c $< -o $@

$(FUZZ_LIB): $(FUZZ_LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(FUZZ_BUILD)/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz.h $(FUZZ_LIB)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer -MMD -MP -MF $@.d $< $(FUZZ_LIB) $(PKG_LIBS) -o $@

fuzz-build: $(FUZZ_BIN)

# tests/fuzz/run.sh SECONDS TARGET...: replay seeds, then fuzz each in turn.
fuzz: $(FUZZ_BIN)
	@sh tests/fuzz/run.sh $(FUZZ_SECONDS) $(FUZZ_BIN)

fuzz-smoke: $(FUZZ_BIN)
	@sh tests/fuzz/run.sh $(FUZZ_SMOKE_SECONDS) $(FUZZ_BIN)

-include $(FUZZ_LIB_OBJ:.o=.d) $(FUZZ_BIN:=.d)

.PHONY: fuzz-clean
clean: fuzz-clean
fuzz-clean:
	rm -rf $(FUZZ_BUILD)
