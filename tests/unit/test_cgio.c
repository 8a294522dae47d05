/* The host's cgroup ops (cgroup/host.c, cgroup/io.c) on a tmpfs tree given
 * as the mount: the same code that writes the kernel's files, with every
 * path resolved beneath the mount's directory fd.  The tree is a plain
 * directory (the kernel's cpuset rules are the fake's and the e2e
 * guests' business); what is checked here is how a path is reached and
 * how a failure is worded. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroup.h"
#include "cleanup.h"
#include "root.h"
#include "testlib.h"

struct env {
	char dir[64];
	char mnt[128]; /* DIR/sys/fs/cgroup */
	struct cc_root *root;
	struct cc_cg cg;
};

static void env_init(struct env *e)
{
	struct cc_err err = CC_ERR_INIT;

	/* /dev/shm is a tmpfs on every machine this runs on (cgroupfs is an
	 * in-memory filesystem too); /tmp where it is not there. */
	snprintf(e->dir, sizeof(e->dir), "%s/cc-cgio-XXXXXX", access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(e->dir));
	snprintf(e->mnt, sizeof(e->mnt), "%s/sys/fs/cgroup", e->dir);
	ck_assert_int_eq(cc_test_sh(NULL, "mkdir -p '%s/a/b' && printf 'cpuset cpu\\n' > '%s/cgroup.controllers' && "
				    ": > '%s/a/cpuset.cpus' && : > '%s/a/b/cpuset.cpus' && : > '%s/cgroup.subtree_control'",
				    e->mnt, e->mnt, e->mnt, e->mnt, e->mnt),
			 0);
	e->root = cc_root_open(e->dir, &err);
	ck_assert_msg(e->root != NULL, "%s", err.msg);
	e->cg.mountfd = -1;
	ck_assert_msg(cc_cg_open(&e->cg, e->root, &err) == 0, "%s", err.msg);
	ck_assert_ptr_null(e->cg.ops); /* a tree that is not the host is never written... */
	cc_cg_use(&e->cg, &cc_cg_host_ops, NULL); /* ...unless a test says so */
	ck_assert(!e->cg.systemd);
}

static void env_fini(struct env *e)
{
	cc_cg_close(&e->cg);
	cc_root_free(e->root);
	cc_test_sh(NULL, "rm -rf '%s'", e->dir);
}

static char *content(const struct env *e, const char *rel)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s", e->mnt, rel);
	return cc_test_slurp(path);
}

START_TEST(test_write_beneath)
{
	struct env e;
	struct cc_err err = CC_ERR_INIT;
	_cleanup_free_ char *v = NULL, *nl = NULL, *back = NULL;

	env_init(&e);
	ck_assert_msg(cc_cg_write(&e.cg, "/a/b", "cpuset.cpus", "0-3", NULL, &err) == 0, "%s", err.msg);
	v = content(&e, "a/b/cpuset.cpus");
	ck_assert_str_eq(v, "0-3");
	/* An empty value reaches the file as a newline: one write(2) the
	 * kernel strips to the empty set (cpuset "inherit"). */
	ck_assert_msg(cc_cg_write(&e.cg, "/a", "cpuset.cpus", "", NULL, &err) == 0, "%s", err.msg);
	nl = content(&e, "a/cpuset.cpus");
	ck_assert_str_eq(nl, "\n");
	/* The root cgroup's own files, and reads through the same fd. */
	ck_assert_msg(cc_cg_write(&e.cg, "/", "cgroup.subtree_control", "+cpuset", NULL, &err) == 0, "%s", err.msg);
	back = cc_cg_read(&e.cg, "/", "cgroup.subtree_control", &err);
	ck_assert_msg(back != NULL, "%s", err.msg);
	ck_assert_str_eq(back, "+cpuset");
	env_fini(&e);
}
END_TEST

START_TEST(test_symlink_refused)
{
	struct env e;
	struct cc_err err = CC_ERR_INIT;
	_cleanup_free_ char *untouched = NULL;

	env_init(&e);
	/* A link to a cgroup inside the mount, a link out of it, a link
	 * where a file should be: each refused during the lookup. */
	ck_assert_int_eq(cc_test_sh(NULL, "ln -s a '%s/in' && ln -s '%s' '%s/out' && ln -s ../a/cpuset.cpus '%s/a/b/linked'",
				    e.mnt, e.dir, e.mnt, e.mnt),
			 0);
	ck_assert_int_eq(cc_cg_write(&e.cg, "/in/b", "cpuset.cpus", "1", NULL, &err), -1);
	ck_assert_int_eq(err.code, ELOOP);
	ck_assert_str_eq(err.msg, "write \"1\" to /in/b/cpuset.cpus: a symbolic link on the way, refused "
				  "(Too many levels of symbolic links)");
	cc_err_clear(&err);
	ck_assert_int_eq(cc_cg_write(&e.cg, "/out", "victim", "1", NULL, &err), -1);
	ck_assert_int_eq(err.code, ELOOP);
	cc_err_clear(&err);
	ck_assert_int_eq(cc_cg_write(&e.cg, "/a/b", "linked", "1", NULL, &err), -1);
	ck_assert_int_eq(err.code, ELOOP);
	cc_err_clear(&err);
	ck_assert_ptr_null(cc_cg_read(&e.cg, "/in", "cpuset.cpus", &err));
	ck_assert_int_eq(err.code, ELOOP);
	cc_err_clear(&err);
	ck_assert_int_eq(cc_cg_mkdir(&e.cg, "/in/new", &err), -1);
	ck_assert_int_eq(err.code, ELOOP);
	untouched = content(&e, "a/cpuset.cpus");
	ck_assert_str_eq(untouched, "");
	ck_assert_int_ne(access(e.dir, F_OK), -1);
	env_fini(&e);
}
END_TEST

START_TEST(test_dotdot_refused)
{
	struct env e;
	struct cc_err err = CC_ERR_INIT;

	env_init(&e);
	ck_assert_int_eq(cc_cg_write(&e.cg, "/a/../..", "x", "1", NULL, &err), -1);
	ck_assert_int_eq(err.code, EINVAL);
	ck_assert_str_eq(err.msg, "cgroup path \"/a/../..\" is not a safe absolute path");
	cc_err_clear(&err);
	/* The ops themselves refuse it too (a caller past cc_cg_write), and
	 * a file name is one name. */
	ck_assert_int_eq(cc_cg_host_ops.write(&e.cg, "/..", "x", "1", &err), -1);
	ck_assert_int_eq(err.code, EINVAL);
	cc_err_clear(&err);
	ck_assert_int_eq(cc_cg_host_ops.write(&e.cg, "/a", "../cgroup.controllers", "1", &err), -1);
	ck_assert_int_eq(err.code, EINVAL);
	ck_assert_str_eq(err.msg, "cgroup /a: \"../cgroup.controllers\" is not a file name");
	cc_err_clear(&err);
	ck_assert_int_eq(cc_cg_host_ops.rmdir(&e.cg, "/a/..", &err), -1);
	ck_assert_int_eq(err.code, EINVAL);
	ck_assert_int_eq(access(e.mnt, F_OK), 0);
	env_fini(&e);
}
END_TEST

START_TEST(test_missing_is_gone)
{
	struct env e;
	struct cc_err err = CC_ERR_INIT;

	env_init(&e);
	ck_assert_int_eq(cc_cg_write(&e.cg, "/a/nope", "cpuset.cpus", "2", NULL, &err), -1);
	ck_assert(cc_cg_gone(err.code));
	ck_assert_str_eq(err.msg, "write \"2\" to /a/nope/cpuset.cpus: gone (No such file or directory)");
	cc_err_clear(&err);
	/* A file where a cgroup should be: ENOTDIR, gone too. */
	ck_assert_int_eq(cc_cg_write(&e.cg, "/a/cpuset.cpus", "x", "2", NULL, &err), -1);
	ck_assert_int_eq(err.code, ENOTDIR);
	ck_assert(cc_cg_gone(err.code));
	cc_err_clear(&err);
	ck_assert_int_eq(cc_cg_is_dir(&e.cg, "/a/nope", &err), 0);
	ck_assert_int_eq(cc_cg_is_dir(&e.cg, "/a/b", &err), 1);
	ck_assert(!cc_cg_exists(&e.cg, "/a/nope", "cpuset.cpus"));
	ck_assert(cc_cg_exists(&e.cg, "/a", "cpuset.cpus"));
	env_fini(&e);
}
END_TEST

START_TEST(test_mkdir_rmdir_beneath)
{
	struct env e;
	struct cc_err err = CC_ERR_INIT;
	char path[256];
	struct stat st;

	env_init(&e);
	ck_assert_msg(cc_cg_mkdir(&e.cg, "/a/c", &err) == 0, "%s", err.msg);
	snprintf(path, sizeof(path), "%s/a/c", e.mnt);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert(S_ISDIR(st.st_mode));
	ck_assert_msg(cc_cg_mkdir(&e.cg, "/a/c", &err) == 0, "existing is fine: %s", err.msg);
	ck_assert_msg(cc_cg_rmdir(&e.cg, "/a/c", &err) == 0, "%s", err.msg);
	ck_assert_int_eq(stat(path, &st), -1);
	ck_assert_msg(cc_cg_rmdir(&e.cg, "/a/c", &err) == 0, "already gone is fine: %s", err.msg);
	ck_assert_msg(cc_cg_rmdir(&e.cg, "/x/y", &err) == 0, "gone with its parent is fine: %s", err.msg);
	ck_assert_int_eq(cc_cg_mkdir(&e.cg, "/x/y", &err), -1);
	ck_assert(cc_cg_gone(err.code));
	ck_assert_str_eq(err.msg, "mkdir /x: gone (No such file or directory)");
	cc_err_clear(&err);
	/* A cgroup with children stays (the kernel says EBUSY, a directory
	 * ENOTEMPTY), named in the error. */
	ck_assert_int_eq(cc_cg_rmdir(&e.cg, "/a", &err), -1);
	ck_assert_msg(strstr(err.msg, "rmdir /a: "), "%s", err.msg);
	cc_err_clear(&err);
	ck_assert_int_eq(cc_cg_mkdir(&e.cg, "/", &err), -1);
	ck_assert_int_eq(err.code, EINVAL);
	env_fini(&e);
}
END_TEST

/* Another filesystem mounted below the cgroup mount is not cgroupfs:
 * RESOLVE_NO_XDEV refuses to cross into it. */
START_TEST(test_other_mount_refused)
{
	struct env e;
	struct cc_err err = CC_ERR_INIT;
	char sub[192];

	if (geteuid() != 0 || unshare(CLONE_NEWNS) < 0) {
		cc_test_skip("needs root (a private mount namespace)");
		return;
	}
	ck_assert_int_eq(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL), 0);
	env_init(&e);
	snprintf(sub, sizeof(sub), "%s/a/b", e.mnt);
	ck_assert_int_eq(mount("tmpfs", sub, "tmpfs", 0, "size=64k"), 0);
	ck_assert_int_eq(cc_cg_write(&e.cg, "/a/b", "cpuset.cpus", "1", NULL, &err), -1);
	ck_assert_int_eq(err.code, EXDEV);
	ck_assert_str_eq(err.msg, "write \"1\" to /a/b/cpuset.cpus: outside the cgroup mount, refused "
				  "(Invalid cross-device link)");
	umount(sub);
	env_fini(&e);
}
END_TEST

/* A captured tree whose mount is a link is refused when opened. */
START_TEST(test_mount_link_refused)
{
	struct cc_err err = CC_ERR_INIT;
	char dir[64] = "/tmp/cc-cgio-XXXXXX";
	struct cc_root *root;
	struct cc_cg cg = CC_CG_INIT;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	ck_assert_int_eq(cc_test_sh(NULL, "mkdir -p '%s/elsewhere' '%s/sys/fs' && printf 'cpuset\\n' > "
				    "'%s/elsewhere/cgroup.controllers' && ln -s ../../elsewhere '%s/sys/fs/cgroup'",
				    dir, dir, dir, dir),
			 0);
	root = cc_root_open(dir, &err);
	ck_assert_ptr_nonnull(root);
	ck_assert_int_eq(cc_cg_open(&cg, root, &err), -1);
	ck_assert_int_eq(err.code, ENOTSUP);
	ck_assert_int_eq(cg.mountfd, -1);
	ck_assert_msg(strstr(err.msg, "/sys/fs/cgroup is not a cgroup v2 mount"), "%s", err.msg);
	cc_root_free(root);
	cc_test_sh(NULL, "rm -rf '%s'", dir);
}
END_TEST

static Suite *cgio_suite(void)
{
	Suite *s = suite_create("cgio");
	TCase *tc = tcase_create("cgio");

	tcase_add_test(tc, test_write_beneath);
	tcase_add_test(tc, test_symlink_refused);
	tcase_add_test(tc, test_dotdot_refused);
	tcase_add_test(tc, test_missing_is_gone);
	tcase_add_test(tc, test_mkdir_rmdir_beneath);
	tcase_add_test(tc, test_other_mount_refused);
	tcase_add_test(tc, test_mount_link_refused);
	suite_add_tcase(s, tc);
	return s;
}

CC_TEST_MAIN(cgio_suite)
