# The device plugin's protocol messages (proto/*.proto, docs/device-plugin.md):
# protoc-c writes their C under $(BUILD)/gen at build time, and the objects
# go into the library beside plugin/grpc/ and plugin/devplugin/, the only
# callers.  Generated code is compiled without the project's warnings (it
# is protoc-c's, not ours) but with its hardening.
PROTO_SRC := $(sort $(wildcard proto/*.proto))
PROTO_C := $(PROTO_SRC:proto/%.proto=$(BUILD)/gen/%.pb-c.c)
PROTO_H := $(PROTO_C:.c=.h)
PROTO_OBJ := $(PROTO_C:.c=.o)
PROTOC_C ?= protoc-c

$(BUILD)/gen/%.pb-c.c $(BUILD)/gen/%.pb-c.h: proto/%.proto
	@mkdir -p $(BUILD)/gen
	$(PROTOC_C) --proto_path=proto --c_out=$(BUILD)/gen $<

$(BUILD)/gen/%.pb-c.o: $(BUILD)/gen/%.pb-c.c
	$(CC) $(filter-out $(WARN),$(CFLAGS)) -MMD -MP -c $< -o $@

# Any source may include a generated header: generate them first.
$(LIB_OBJ) $(CLI_OBJ) $(FAULT_OBJ) $(TESTLIB_OBJ) $(TEST_BIN:=.o): | $(PROTO_H)
# The fuzzers' clang build of the library (mk/fuzz.mk, included before
# this file) compiles plugin/devplugin/ too.
$(FUZZ_LIB_OBJ): | $(PROTO_H)
$(LIB): $(PROTO_OBJ)

-include $(PROTO_OBJ:.o=.d)
