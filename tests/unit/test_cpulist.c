#include <string.h>

#include "cleanup.h"
#include "cpulist.h"
#include "testlib.h"

static const struct {
	const char *in;
	const char *out; /* NULL: must be refused */
	const char *why; /* expected fragment of the error */
} list_cases[] = {
	{ "0-3,8", "0-3,8", NULL },
	{ "", "", NULL },
	{ "7", "7", NULL },
	{ "0-1,2-3", "0-3", NULL },
	{ "8191", "8191", NULL },
	{ "0-", NULL, "range without an end" },
	{ "5-2", NULL, "reversed" },
	{ "99999", NULL, "out of range" },
	{ "8192", NULL, "out of range" },
	{ "1,,2", NULL, "expected a number" },
	{ "1,", NULL, "trailing comma" },
	{ " 1", NULL, "expected a number" },
	{ "0x3", NULL, "unexpected 'x'" },
	{ "-1", NULL, "expected a number" },
	{ "a", NULL, "expected a number" },
	{ "1-2-3", NULL, "unexpected '-'" },
	{ "18446744073709551616", NULL, "out of range" },
};

START_TEST(test_list_table)
{
	struct cc_err err = CC_ERR_INIT;
	_cleanup_bitmap_ hwloc_bitmap_t b = hwloc_bitmap_alloc();
	int r = cc_cpulist_parse(list_cases[_i].in, b, "field", &err);

	if (list_cases[_i].out) {
		_cleanup_free_ char *s = NULL;

		ck_assert_msg(r == 0, "%s: %s", list_cases[_i].in, err.msg);
		s = cc_cpulist_format(b);
		ck_assert_str_eq(s, list_cases[_i].out);
	} else {
		ck_assert_int_eq(r, -1);
		ck_assert_msg(strstr(err.msg, list_cases[_i].why) != NULL, "%s: got \"%s\"", list_cases[_i].in, err.msg);
		ck_assert_msg(strncmp(err.msg, "field: ", 7) == 0, "error must name the field: %s", err.msg);
	}
}
END_TEST

START_TEST(test_mask_roundtrip)
{
	struct cc_err err = CC_ERR_INIT;
	_cleanup_bitmap_ hwloc_bitmap_t b = hwloc_bitmap_alloc();
	_cleanup_free_ char *l = NULL, *m = NULL;

	ck_assert_int_eq(cc_cpumask_parse("ffffffff,00000001", b, "smp_affinity", &err), 0);
	l = cc_cpulist_format(b);
	ck_assert_str_eq(l, "0,32-63");
	m = cc_cpumask_format(b, 64);
	ck_assert_str_eq(m, "ffffffff,00000001");
	free(m);
	hwloc_bitmap_zero(b);
	hwloc_bitmap_set_range(b, 0, 3);
	m = cc_cpumask_format(b, 16);
	ck_assert_str_eq(m, "0000000f");
	free(m);
	m = cc_cpumask_format(b, 40);
	ck_assert_str_eq(m, "00000000,0000000f");
}
END_TEST

START_TEST(test_mask_bad)
{
	static const char *bad[] = { "", "fg", ",ff", "ff,", "ff,,ff", "123456789" };

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct cc_err err = CC_ERR_INIT;
		_cleanup_bitmap_ hwloc_bitmap_t b = hwloc_bitmap_alloc();

		ck_assert_int_eq(cc_cpumask_parse(bad[i], b, "mask", &err), -1);
		ck_assert_msg(strncmp(err.msg, "mask: ", 6) == 0, "%s", err.msg);
	}
}
END_TEST

static Suite *cpulist_suite(void)
{
	Suite *s = suite_create("cpulist");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, test_list_table, 0, sizeof(list_cases) / sizeof(list_cases[0]));
	tcase_add_test(tc, test_mask_roundtrip);
	tcase_add_test(tc, test_mask_bad);
	suite_add_tcase(s, tc);
	return s;
}

CC_TEST_MAIN(cpulist_suite)
