/* Every fuzz seed and saved crash (tests/fuzz/corpus/<target>/) replayed
 * through its libFuzzer target, built here with the project's compiler:
 * the crashes the fuzzers found stay fixed in `make unit` (and under
 * ASan/UBSan with SANITIZE=1), with no clang needed.  A target checks its
 * own invariants and aborts, which fails the test (Check's fork mode). */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdio.h>

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

#define LLVMFuzzerTestOneInput cc_fuzz_vmconfig
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
#include "../fuzz/fuzz_vmconfig.c"
#undef LLVMFuzzerTestOneInput

static const struct {
	const char *name;
	int (*fn)(const uint8_t *data, size_t size);
} targets[] = {
	{ "fuzz_annotation", cc_fuzz_annotation },   { "fuzz_policy", cc_fuzz_policy },
	{ "fuzz_oci_state", cc_fuzz_oci_state },     { "fuzz_oci_config", cc_fuzz_oci_config },
	{ "fuzz_cpulist", cc_fuzz_cpulist },         { "fuzz_proc_cgroup", cc_fuzz_proc_cgroup },
	{ "fuzz_interrupts", cc_fuzz_interrupts },   { "fuzz_vmconfig", cc_fuzz_vmconfig },
};


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

static Suite *suite(void)
{
	Suite *s = suite_create("fuzz_corpus");
	TCase *tc = tcase_create("replay");

	tcase_add_loop_test(tc, test_corpus, 0, (int)(sizeof(targets) / sizeof(targets[0])));
	suite_add_tcase(s, tc);
	return s;
}

CC_TEST_MAIN(suite)
