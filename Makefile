# corecarve — see README.md.  `make` builds ./corecarve; `make check` installs
# what is missing (make deps), builds, and runs every test.

CC ?= gcc
PREFIX ?= /usr/local
DESTDIR ?=
PKGS := hwloc yaml-0.1 libcgroup numa jansson libseccomp libnghttp2 libprotobuf-c

ifeq ($(SANITIZE),1)
BUILD ?= build-san
SAN_FLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
else
BUILD ?= build
SAN_FLAGS :=
endif

# libsmartcols (util-linux's table library): its header only.  The CLI
# loads it with dlopen() when it prints a table, so the hook, which prints
# none, does not map it at each start (cli/table.h, docs/performance.md).
DLOPEN_PKGS := smartcols
PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS) $(DLOPEN_PKGS) 2>/dev/null)

# STATIC_DEPS=1 (the default): hwloc, libyaml, libcgroup, libnuma, jansson
# and libseccomp are linked from their archives; libc, libm and libudev
# (Debian ships no libudev.a) stay shared.  A registered hook costs every
# container two process starts, and every shared object is mapped and
# relocated at each (-z now): 3 shared libraries instead of 10
# (docs/performance.md, section 4).  Where an archive is missing the build
# links everything dynamically, as STATIC_DEPS=0 does.
STATIC_DEPS ?= 1
# nghttp2 and protobuf-c carry the device plugin's gRPC wire (mk/grpc.mk):
# only `corecarve device-plugin` calls them, and linked from their archives
# they add no shared object for the hook to map.
STATIC_LIBS := hwloc yaml cgroup numa jansson seccomp nghttp2 protobuf-c
ifeq ($(STATIC_DEPS),1)
static_found = $(filter /%,$(shell $(CC) -print-file-name=$(1) 2>/dev/null))
STATIC_MISSING := $(strip $(foreach l,$(STATIC_LIBS) udev,$(if $(call static_found,lib$(l).$(if $(filter udev,$(l)),so,a)),,lib$(l))))
ifneq ($(STATIC_MISSING),)
$(info note: $(STATIC_MISSING) not found for the static link: linking the libraries dynamically (STATIC_DEPS=0))
override STATIC_DEPS := 0
endif
endif
ifeq ($(STATIC_DEPS),1)
# The archives' own dependencies (pkg-config --static: -lm -ludev
# -lpthread) stay shared.
PKG_LIBS = -Wl,-Bstatic $(addprefix -l,$(STATIC_LIBS)) -Wl,-Bdynamic \
	$(filter-out $(addprefix -l,$(STATIC_LIBS)),$(shell pkg-config --static --libs $(PKGS) 2>/dev/null))
else
PKG_LIBS = $(shell pkg-config --libs $(PKGS) 2>/dev/null)
endif
CHECK_CFLAGS = $(shell pkg-config --cflags check 2>/dev/null)
CHECK_LIBS = $(shell pkg-config --libs check 2>/dev/null)

OPT ?= -O2 -g
WARN := -Wall -Wextra -Wshadow -Wformat=2 -Wstrict-prototypes -Wmissing-prototypes \
	-Wno-missing-field-initializers
HARDEN := -D_FORTIFY_SOURCE=2 -fstack-protector-strong -fPIE
# plugin/ is in folders by role (README.md, "Layout"; docs/design.md,
# "Module walls"), one -I each, so an #include names the header alone and
# a file can change folder without touching its includers.
PLUGIN_DIRS := $(patsubst %/,%,$(sort $(wildcard plugin/*/)))
INC_FLAGS := $(addprefix -I,$(PLUGIN_DIRS)) -Icgroup -Ihooks -Icli -I$(BUILD)/gen
override CFLAGS := -DCC_SOURCE_DIR=\"$(CURDIR)\" -std=gnu11 $(OPT) $(WARN) $(HARDEN) $(SAN_FLAGS) $(INC_FLAGS) \
	$(PKG_CFLAGS) $(CFLAGS)
override LDFLAGS := -pie -Wl,-z,relro,-z,now $(SAN_FLAGS) $(LDFLAGS)

LIB_SRC := $(sort $(wildcard $(PLUGIN_DIRS:%=%/*.c) cgroup/*.c))
# hooks/first_stage.c is its own program (corecarve-hook, mk/first-stage.mk).
FIRST_STAGE_SRC := hooks/first_stage.c
CLI_SRC := $(sort $(filter-out $(FIRST_STAGE_SRC),$(wildcard cli/*.c hooks/*.c)))
TEST_SRC := $(sort $(wildcard tests/unit/test_*.c))
# hostguard.c is the preloaded shim (tests/unit/run.sh), not a helper linked in.
TESTLIB_SRC := $(sort $(filter-out $(TEST_SRC) tests/unit/hostguard.c,$(wildcard tests/unit/*.c)))

LIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/%.o)
CLI_OBJ := $(CLI_SRC:%.c=$(BUILD)/%.o)
# The test build: the same objects but cli/fault_env.c, compiled with
# -DCC_FAULT_INJECTION so CORECARVE_FAULT=<step> kills the process at a
# named step, or <point>:<ERRNO>[@n] fails a step of a ledger commit
# (plugin/core/fault.h).  `make unit` and `make e2e` run this binary;
# the installed one ignores the variable.
FAULT_BIN := $(BUILD)/faults/corecarve
FAULT_OBJ := $(filter-out $(BUILD)/cli/fault_env.o,$(CLI_OBJ)) $(BUILD)/faults/cli/fault_env.o
TESTLIB_OBJ := $(TESTLIB_SRC:%.c=$(BUILD)/%.o)
TEST_BIN := $(TEST_SRC:tests/unit/%.c=$(BUILD)/tests/%)
LIB := $(BUILD)/libcorecarve.a
# Present only for the link mode of the last link: switching STATIC_DEPS
# relinks what links $(PKG_LIBS).
LINK_STAMP := $(BUILD)/.link-static-$(STATIC_DEPS)

ifeq ($(SANITIZE),1)
BIN := $(BUILD)/corecarve
FIRST_STAGE_BIN := $(BUILD)/corecarve-hook
else
BIN := corecarve
FIRST_STAGE_BIN := corecarve-hook
endif

.PHONY: all deps check unit e2e demo clean format bench install uninstall lint-includes
all: $(BIN) $(FIRST_STAGE_BIN)

deps:
	@sh scripts/deps.sh

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -MMD -MP -c $< -o $@

$(LIB): $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(LINK_STAMP):
	@mkdir -p $(dir $@)
	@rm -f $(BUILD)/.link-static-*
	@touch $@

$(BIN): $(CLI_OBJ) $(LIB) $(LINK_STAMP)
	$(CC) $(LDFLAGS) -o $@ $(CLI_OBJ) $(LIB) $(PKG_LIBS)

$(BUILD)/faults/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -DCC_FAULT_INJECTION -MMD -MP -c $< -o $@

$(FAULT_BIN): $(FAULT_OBJ) $(LIB) $(LINK_STAMP)
	$(CC) $(LDFLAGS) -o $@ $(FAULT_OBJ) $(LIB) $(PKG_LIBS)

$(BUILD)/tests/%.o: tests/unit/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(CHECK_CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/tests/%: $(BUILD)/tests/%.o $(TESTLIB_OBJ) $(LIB) $(LINK_STAMP)
	$(CC) $(LDFLAGS) -o $@ $< $(TESTLIB_OBJ) $(TEST_CLI_OBJ) $(LIB) $(PKG_LIBS) $(CHECK_LIBS)

# test_options reads the commands' option tables: the CLI's objects but
# its main().
$(BUILD)/tests/test_options: TEST_CLI_OBJ = $(filter-out $(BUILD)/cli/main.o,$(CLI_OBJ))
$(BUILD)/tests/test_options: $(filter-out $(BUILD)/cli/main.o,$(CLI_OBJ))

# Unit tests: each suite is its own binary (Check, fork mode).  The runner
# prints one "unit: N passed, N failed, N skipped" line over all of them
# (with CI=true a skip fails it: tests/unit/run.sh).
# Every suite runs with tests/unit/hostguard.so preloaded: a test whose
# code opens the host's /sys or /proc fails (tests/unit/run.sh).  Not in the
# sanitizer build: ASan's runtime must come first in the preload list.
HOSTGUARD := $(if $(filter 1,$(SANITIZE)),,$(BUILD)/tests/hostguard.so)
$(BUILD)/tests/hostguard.so: tests/unit/hostguard.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 $(OPT) $(WARN) -fPIC -shared -o $@ $< -ldl
unit: $(BIN) $(FIRST_STAGE_BIN) $(FAULT_BIN) $(TEST_BIN) $(HOSTGUARD)
	@CC_HOSTGUARD=$(abspath $(HOSTGUARD)) CORECARVE_BIN=$(abspath $(FAULT_BIN)) CORECARVE_RELEASE_BIN=$(abspath $(BIN)) \
		CORECARVE_FIRST_STAGE_BIN=$(abspath $(FIRST_STAGE_BIN)) sh tests/unit/run.sh $(TEST_BIN)

# lint-includes (mk/lint.mk) first: it takes milliseconds and needs no
# package.  The builds use every CPU (JOBS); the tests run one at a time.
JOBS ?= $(shell nproc 2>/dev/null || echo 1)
check: lint-includes deps
	@$(MAKE) --no-print-directory -j$(JOBS) all
	@$(MAKE) --no-print-directory -j$(JOBS) unit
	@if [ "$(SANITIZE)" != 1 ]; then $(MAKE) --no-print-directory e2e; fi

-include tests/e2e/e2e.mk
# Feature makefiles (install, fuzz, bench, ...), one concern each.
-include $(sort $(wildcard mk/*.mk))

# The main job on the embedded default: boot the emulated 2-socket SMT NUMA
# host on the newest kernel of the matrix (7.x) and start annotated
# containers with crun.
demo: deps
	@$(MAKE) --no-print-directory all
	@CORECARVE_BIN=$(abspath $(BIN)) CORECARVE_FIRST_STAGE_BIN=$(abspath $(FIRST_STAGE_BIN)) tests/e2e/run.sh --kernel 7 --scenarios '90-demo*' --demo

format:
	clang-format -i $(LIB_SRC) $(CLI_SRC) $(TEST_SRC) $(TESTLIB_SRC) $(wildcard $(PLUGIN_DIRS:%=%/*.h) cgroup/*.h hooks/*.h cli/*.h tests/unit/*.h)

clean:
	rm -rf build build-san corecarve corecarve-hook

-include $(LIB_OBJ:.o=.d) $(CLI_OBJ:.o=.d) $(TESTLIB_OBJ:.o=.d) $(TEST_BIN:=.d) $(BUILD)/faults/cli/fault_env.d
