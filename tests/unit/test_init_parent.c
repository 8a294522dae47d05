/* init-parent's partition parent (cgroup/partition.c, cc_cg_init_parent)
 * on the cgroup test double (fakecg.h): made, and when the kernel answers
 * "root invalid (Cpu list in cpuset.cpus not exclusive)" the error names
 * the siblings whose own cpuset.cpus holds the CPUs (the kernel does not),
 * and nothing of the attempt is left. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgroup.h"
#include "cleanup.h"
#include "cpulist.h"
#include "fakecg.h"
#include "root.h"
#include "testlib.h"

struct env {
	char dir[64];
	struct fakecg *f;
	struct cc_root *root;
	struct cc_cg cg;
};

static void env_init(struct env *e, enum fakecg_kernel k)
{
	struct cc_err err = CC_ERR_INIT;

	snprintf(e->dir, sizeof(e->dir), "/tmp/cc-initparent-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(e->dir));
	e->f = fakecg_new(e->dir, k, "0-15", "0-1");
	ck_assert_ptr_nonnull(e->f);
	e->root = cc_root_open(e->dir, &err);
	ck_assert_msg(e->root != NULL, "%s", err.msg);
	ck_assert_msg(cc_cg_open(&e->cg, e->root, &err) == 0, "%s", err.msg);
	cc_cg_use(&e->cg, &fakecg_ops, e->f);
}

static void env_fini(struct env *e)
{
	cc_cg_close(&e->cg);
	cc_root_free(e->root);
	fakecg_free(e->f);
	cc_test_sh(NULL, "rm -rf '%s'", e->dir);
}

static int init_parent(struct env *e, const char *cgroup, const char *cpus, struct cc_err *err)
{
	_cleanup_bitmap_ hwloc_bitmap_t set = hwloc_bitmap_alloc();

	ck_assert_int_eq(cc_cpulist_parse(cpus, set, "cpus", err), 0);
	return cc_cg_init_parent(&e->cg, cgroup, set, NULL, err);
}

/* A sibling that holds none of the CPUs: the parent is made, a valid root. */
START_TEST(test_made)
{
	struct cc_err err = CC_ERR_INIT;
	struct env e;

	env_init(&e, FAKECG_6_12);
	ck_assert_int_eq(fakecg_mkdir(e.f, "/system.slice", true), 0);
	ck_assert_int_eq(fakecg_write(e.f, "/system.slice", "cpuset.cpus", "0-7"), 0);
	ck_assert_msg(init_parent(&e, "/corecarve.slice", "8-15", &err) == 0, "%s", err.msg);
	ck_assert_str_eq(fakecg_get(e.f, "/corecarve.slice", "cpuset.cpus.partition"), "root");
	env_fini(&e);
}
END_TEST

/* Siblings whose explicit cpuset.cpus overlaps: the kernel's reason, then
 * which siblings and what they hold; one that inherits (an empty list)
 * and one that holds other CPUs are not named; the attempt is undone. */
START_TEST(test_names_siblings)
{
	struct cc_err err = CC_ERR_INIT;
	struct env e;

	env_init(&e, FAKECG_6_12);
	ck_assert_int_eq(fakecg_mkdir(e.f, "/system.slice", true), 0);
	ck_assert_int_eq(fakecg_write(e.f, "/system.slice", "cpuset.cpus", "0-15"), 0);
	ck_assert_int_eq(fakecg_mkdir(e.f, "/init.scope", true), 0);
	ck_assert_int_eq(fakecg_write(e.f, "/init.scope", "cpuset.cpus", "10"), 0);
	ck_assert_int_eq(fakecg_mkdir(e.f, "/user.slice", true), 0);
	ck_assert_int_eq(fakecg_mkdir(e.f, "/other.slice", true), 0);
	ck_assert_int_eq(fakecg_write(e.f, "/other.slice", "cpuset.cpus", "0-3"), 0);
	ck_assert_int_eq(init_parent(&e, "/corecarve.slice", "8-15", &err), -1);
	ck_assert_msg(strstr(err.msg, "init-parent: /corecarve.slice: cpuset.cpus.partition reads "
				      "\"root invalid (Cpu list in cpuset.cpus not exclusive)\"; siblings whose own "
				      "cpuset.cpus holds some of its CPUs: ") == err.msg,
		      "%s", err.msg);
	ck_assert_msg(strstr(err.msg, "/system.slice (cpuset.cpus 0-15)") && strstr(err.msg, "/init.scope (cpuset.cpus 10)"),
		      "%s", err.msg);
	ck_assert_msg(!strstr(err.msg, "/user.slice") && !strstr(err.msg, "/other.slice"), "%s", err.msg);
	ck_assert_msg(strstr(err.msg, "(write them a list without those CPUs, or make the partition parent before they "
				      "get one)"),
		      "%s", err.msg);
	/* The cgroup it made is gone again. */
	ck_assert(!fakecg_exists(e.f, "/corecarve.slice"));
	env_fini(&e);
}
END_TEST

/* One that was there before (made by hand or by systemd) stays, its files
 * back as they were; a rollback that fails says so after the reason,
 * which the message holds once. */
START_TEST(test_failure_leaves_nothing)
{
	struct cc_err err = CC_ERR_INIT;
	struct env e;
	int writes;

	env_init(&e, FAKECG_6_12);
	ck_assert_int_eq(fakecg_mkdir(e.f, "/system.slice", true), 0);
	ck_assert_int_eq(fakecg_write(e.f, "/system.slice", "cpuset.cpus", "0-15"), 0);
	ck_assert_int_eq(fakecg_mkdir(e.f, "/corecarve.slice", false), 0);
	ck_assert_int_eq(init_parent(&e, "/corecarve.slice", "8-15", &err), -1);
	ck_assert(fakecg_exists(e.f, "/corecarve.slice"));
	ck_assert_str_eq(fakecg_get(e.f, "/corecarve.slice", "cpuset.cpus.partition"), "member");
	ck_assert_str_eq(fakecg_get(e.f, "/corecarve.slice", "cpuset.cpus"), "");
	ck_assert_str_eq(fakecg_get(e.f, "/corecarve.slice", "cpuset.cpus.exclusive"), "");
	env_fini(&e);

	/* Made by init-parent: its writes counted, then the last write of
	 * the rollback (before the rmdir) fails. */
	env_init(&e, FAKECG_6_12);
	ck_assert_int_eq(fakecg_mkdir(e.f, "/system.slice", true), 0);
	ck_assert_int_eq(fakecg_write(e.f, "/system.slice", "cpuset.cpus", "0-15"), 0);
	writes = fakecg_writes(e.f);
	ck_assert_int_eq(init_parent(&e, "/corecarve.slice", "8-15", &err), -1);
	writes = fakecg_writes(e.f) - writes;
	env_fini(&e);
	env_init(&e, FAKECG_6_12);
	ck_assert_int_eq(fakecg_mkdir(e.f, "/system.slice", true), 0);
	ck_assert_int_eq(fakecg_write(e.f, "/system.slice", "cpuset.cpus", "0-15"), 0);
	fakecg_fail_write(e.f, writes - 1, EIO);
	cc_err_clear(&err);
	ck_assert_int_eq(init_parent(&e, "/corecarve.slice", "8-15", &err), -1);
	ck_assert_msg(strstr(err.msg, "not exclusive") && strstr(err.msg, "; putting back what was written failed too (") &&
			      strstr(err.msg, "(injected)"),
		      "%s", err.msg);
	ck_assert_msg(!strstr(strstr(err.msg, "cpuset.cpus.partition reads") + 1, "cpuset.cpus.partition reads") &&
			      !strstr(err.msg, "/corecarve.slice: /corecarve.slice"),
		      "the reason twice: %s", err.msg);
	env_fini(&e);
}
END_TEST

static Suite *init_parent_suite(void)
{
	Suite *s = suite_create("init_parent");
	TCase *tc = tcase_create("init_parent");

	tcase_add_test(tc, test_made);
	tcase_add_test(tc, test_names_siblings);
	tcase_add_test(tc, test_failure_leaves_nothing);
	suite_add_tcase(s, tc);
	return s;
}

CC_TEST_MAIN(init_parent_suite)
