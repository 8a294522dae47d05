# corecarve-hook, the registered hook's first stage (hooks/first_stage.c):
# it answers "nothing to do" for the containers corecarve leaves alone and
# executes the `corecarve` beside it for the rest.  Its start is the point
# (docs/performance.md, "The hook's first stage"), so it is linked static
# (no loader, no shared library to map or relocate; the DaemonSet copies
# it to nodes as it is): libc, jansson, libseccomp (its decision runs
# under a filter: cc_sandbox_first_stage), and the library's modules it calls
# (the OCI state and config.json parser, the bounded read, their error,
# root and fault helpers, the state directory's and ledger's opening,
# plugin/ledger/ledger_dir.c, shared with the full hook, and the option
# table's walk with the hook's table, plugin/core/opts.c, hooks/hook_opts.c): the library's own objects, except in a
# SANITIZE=1 tree, where they are compiled again without the sanitizers
# (which cannot link static), so that tree tests the program it ships.
# Without libc.a or libjansson.a (STATIC_DEPS=0) it is linked dynamically,
# and install-on-node.sh refuses it.

FIRST_STAGE_MODULES := oci.c fileio.c error.c text.c root.c fault.c ledger_dir.c sandbox.c opts.c
# The hook's option table (hooks/hook_opts.c), which the full hook parses too.
FIRST_STAGE_LIB_SRC := $(filter $(addprefix %/,$(FIRST_STAGE_MODULES)),$(LIB_SRC)) hooks/hook_opts.c
ifeq ($(SANITIZE),1)
FIRST_STAGE_OBJ := $(patsubst %.c,$(BUILD)/first/%.o,$(FIRST_STAGE_SRC) $(FIRST_STAGE_LIB_SRC))
else
FIRST_STAGE_OBJ := $(patsubst %.c,$(BUILD)/%.o,$(FIRST_STAGE_SRC) $(FIRST_STAGE_LIB_SRC))
endif
FIRST_STAGE_CFLAGS := $(filter-out $(SAN_FLAGS),$(CFLAGS))
FIRST_STAGE_LDFLAGS := $(filter-out $(SAN_FLAGS),$(LDFLAGS))
FIRST_STAGE_STATIC := $(if $(filter 1,$(STATIC_DEPS)),$(if $(call static_found,libc.a),1))
ifeq ($(FIRST_STAGE_STATIC),1)
FIRST_STAGE_LINK := -static-pie $(filter-out -pie,$(FIRST_STAGE_LDFLAGS)) -o $(FIRST_STAGE_BIN) $(FIRST_STAGE_OBJ) \
	-Wl,-Bstatic -ljansson -lseccomp
else
FIRST_STAGE_LINK := $(FIRST_STAGE_LDFLAGS) -o $(FIRST_STAGE_BIN) $(FIRST_STAGE_OBJ) $(shell pkg-config --libs jansson libseccomp)
endif

$(BUILD)/first/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(FIRST_STAGE_CFLAGS) -MMD -MP -c $< -o $@

$(FIRST_STAGE_BIN): $(FIRST_STAGE_OBJ) $(LINK_STAMP)
	$(CC) $(FIRST_STAGE_LINK)

-include $(FIRST_STAGE_OBJ:.o=.d)
