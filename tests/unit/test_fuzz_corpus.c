/* Every fuzz seed and saved crash (tests/fuzz/corpus/<target>/) replayed
 * through its libFuzzer target, built here with the project's compiler:
 * the crashes the fuzzers found stay fixed in `make unit` (and under
 * ASan/UBSan with SANITIZE=1), with no clang needed.  A target checks its
 * own invariants and aborts, which fails the test (Check's fork mode). */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cleanup.h"
#include "testlib.h"

#include <stddef.h>
#include <stdint.h>

#define LLVMFuzzerTestOneInput cc_fuzz_annotation
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
#include "../fuzz/fuzz_annotation.c"
#undef LLVMFuzzerTestOneInput

#define LLVMFuzzerTestOneInput cc_fuzz_policy
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
#include "../fuzz/fuzz_policy.c"
#undef LLVMFuzzerTestOneInput

#define LLVMFuzzerTestOneInput cc_fuzz_oci_state
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
#include "../fuzz/fuzz_oci_state.c"
#undef LLVMFuzzerTestOneInput

#define LLVMFuzzerTestOneInput cc_fuzz_oci_config
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
#include "../fuzz/fuzz_oci_config.c"
#undef LLVMFuzzerTestOneInput

#define LLVMFuzzerTestOneInput cc_fuzz_cpulist
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
#include "../fuzz/fuzz_cpulist.c"
#undef LLVMFuzzerTestOneInput

#define LLVMFuzzerTestOneInput cc_fuzz_proc_cgroup
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
#include "../fuzz/fuzz_proc_cgroup.c"
#undef LLVMFuzzerTestOneInput

#define LLVMFuzzerTestOneInput cc_fuzz_interrupts
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
#include "../fuzz/fuzz_interrupts.c"
#undef LLVMFuzzerTestOneInput

#define LLVMFuzzerTestOneInput cc_fuzz_noderec
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
#include "../fuzz/fuzz_noderec.c"
#undef LLVMFuzzerTestOneInput

#define LLVMFuzzerTestOneInput cc_fuzz_vmconfig
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
#include "../fuzz/fuzz_vmconfig.c"
#undef LLVMFuzzerTestOneInput

#define LLVMFuzzerTestOneInput cc_fuzz_text
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
#include "../fuzz/fuzz_text.c"
#undef LLVMFuzzerTestOneInput

#define LLVMFuzzerTestOneInput cc_fuzz_proc_stat
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
#include "../fuzz/fuzz_proc_stat.c"
#undef LLVMFuzzerTestOneInput

#define LLVMFuzzerTestOneInput cc_fuzz_grpc_frame
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
#include "../fuzz/fuzz_grpc_frame.c"
#undef LLVMFuzzerTestOneInput

#define LLVMFuzzerTestOneInput cc_fuzz_grant
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
#include "../fuzz/fuzz_grant.c"
#undef LLVMFuzzerTestOneInput

/* Its helpers' names are common ones: kept apart from this file's. */
#define LLVMFuzzerTestOneInput cc_fuzz_ledger
#define blank fuzz_ledger_blank
#define parse fuzz_ledger_parse
#define same fuzz_ledger_same
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
#include "../fuzz/fuzz_ledger.c"
#undef LLVMFuzzerTestOneInput
#undef blank
#undef parse
#undef same

static const struct {
	const char *name;
	int (*fn)(const uint8_t *data, size_t size);
} targets[] = {
	{ "fuzz_annotation", cc_fuzz_annotation },   { "fuzz_policy", cc_fuzz_policy },
	{ "fuzz_oci_state", cc_fuzz_oci_state },     { "fuzz_oci_config", cc_fuzz_oci_config },
	{ "fuzz_cpulist", cc_fuzz_cpulist },         { "fuzz_proc_cgroup", cc_fuzz_proc_cgroup },
	{ "fuzz_interrupts", cc_fuzz_interrupts },   { "fuzz_vmconfig", cc_fuzz_vmconfig },
	{ "fuzz_noderec", cc_fuzz_noderec },         { "fuzz_text", cc_fuzz_text },
	{ "fuzz_proc_stat", cc_fuzz_proc_stat },     { "fuzz_grpc_frame", cc_fuzz_grpc_frame },
	{ "fuzz_ledger", cc_fuzz_ledger },           { "fuzz_grant", cc_fuzz_grant },
};
#define NTARGETS ((int)(sizeof(targets) / sizeof(targets[0])))

static bool listed(const char *name)
{
	for (int i = 0; i < NTARGETS; i++)
		if (!strcmp(targets[i].name, name))
			return true;
	return false;
}

START_TEST(test_corpus)
{
	char dir[PATH_MAX];
	_cleanup_closedir_ DIR *d = NULL;
	struct dirent *de;
	int n = 0;

	snprintf(dir, sizeof(dir), "%s/tests/fuzz/corpus/%s", CC_SOURCE_DIR, targets[_i].name);
	d = opendir(dir);
	ck_assert_msg(d != NULL, "%s: no seeds", dir);
	while ((de = readdir(d))) {
		char path[PATH_MAX + 256];
		_cleanup_free_ char *data = NULL;
		size_t len;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		data = cc_test_slurp_len(path, &len);
		ck_assert_msg(data != NULL, "%s", path);
		targets[_i].fn((const uint8_t *)data, len);
		n++;
	}
	ck_assert_msg(n > 0, "%s: empty corpus", dir);
}
END_TEST

/* The table above is the list: every target in tests/fuzz/ (mk/fuzz.mk
 * builds each tests/fuzz/fuzz_*.c) and every corpus directory must be in
 * it, or its seeds would never be replayed here. */
START_TEST(test_every_target_replayed)
{
	static const char *const dirs[] = { "tests/fuzz", "tests/fuzz/corpus" };
	int found[2] = { 0, 0 };

	for (int k = 0; k < 2; k++) {
		char dir[PATH_MAX];
		_cleanup_closedir_ DIR *d = NULL;
		struct dirent *de;

		snprintf(dir, sizeof(dir), "%s/%s", CC_SOURCE_DIR, dirs[k]);
		d = opendir(dir);
		ck_assert_msg(d != NULL, "%s: %s", dir, strerror(errno));
		while ((de = readdir(d))) {
			char name[256];
			size_t len = strlen(de->d_name);

			if (strncmp(de->d_name, "fuzz_", 5))
				continue;
			snprintf(name, sizeof(name), "%s", de->d_name);
			if (k == 0) {
				if (len < 3 || strcmp(de->d_name + len - 2, ".c"))
					continue;
				name[len - 2] = '\0';
			}
			ck_assert_msg(listed(name), "%s/%s: not in the targets table of tests/unit/test_fuzz_corpus.c", dirs[k],
				      de->d_name);
			found[k]++;
		}
	}
	/* And the other way: each listed target has a source and seeds (the
	 * replay itself fails on a missing corpus). */
	ck_assert_int_eq(found[0], NTARGETS);
	ck_assert_int_eq(found[1], NTARGETS);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("fuzz_corpus");
	TCase *tc = tcase_create("replay");

	tcase_add_loop_test(tc, test_corpus, 0, NTARGETS);
	tcase_add_test(tc, test_every_target_replayed);
	suite_add_tcase(s, tc);
	return s;
}

CC_TEST_MAIN(suite)
