/* The decision benchmark's cgroup tree (benchcg.h). */
#define _GNU_SOURCE
#include "benchcg.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench.h"

struct benchcg {
	char dir[PATH_MAX]; /* <root>/sys/fs/cgroup */
	long writes;
};

static const char *const files[] = { "cgroup.controllers", "cgroup.subtree_control", "cgroup.procs", "cgroup.events",
				     "cpuset.cpus", "cpuset.cpus.effective", "cpuset.mems", "cpuset.mems.effective",
				     "cpuset.cpus.partition", "cpuset.cpus.exclusive", "cpuset.cpus.exclusive.effective",
				     "cpu.max", NULL };

static void path_of(const struct benchcg *b, const char *cgroup, const char *file, char *out, size_t len)
{
	snprintf(out, len, "%s%s%s%s", b->dir, strcmp(cgroup, "/") ? cgroup : "", file ? "/" : "", file ? file : "");
}

/* As the kernel prints a control file: the value and a newline. */
static int put(const struct benchcg *b, const char *cgroup, const char *file, const char *value)
{
	char path[PATH_MAX + 64], line[8192];
	int fd, n = snprintf(line, sizeof(line), "%s\n", value), rc = 0;

	path_of(b, cgroup, file, path, sizeof(path));
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return errno;
	if (write(fd, line, (size_t)n) != n)
		rc = errno ? errno : EIO;
	if (close(fd) < 0 && !rc)
		rc = errno;
	return rc;
}

static void get(const struct benchcg *b, const char *cgroup, const char *file, char *out, size_t len)
{
	char path[PATH_MAX + 64];
	int fd;
	ssize_t n = 0;

	path_of(b, cgroup, file, path, sizeof(path));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, out, len - 1);
		close(fd);
	}
	if (n < 0)
		n = 0;
	while (n && (out[n - 1] == '\n' || out[n - 1] == ' '))
		n--;
	out[n] = '\0';
}

static void parent_of(const char *cgroup, char *out, size_t len)
{
	cc_cg_parent(cgroup, out, len);
}

/* The kernel strips the whitespace around a value (libcgroup sends " "
 * for an empty one). */
static void trim(const char *value, char *out, size_t len)
{
	size_t n;

	value += strspn(value, " \n");
	snprintf(out, len, "%s", value);
	n = strlen(out);
	while (n && (out[n - 1] == ' ' || out[n - 1] == '\n'))
		out[--n] = '\0';
}

int benchcg_write(struct benchcg *b, const char *cgroup, const char *file, const char *value)
{
	char v[8192], parent[PATH_MAX], eff[8192];
	int rc;

	if (!strcmp(file, "cgroup.subtree_control"))
		return 0;
	trim(value, v, sizeof(v));
	if (!strcmp(file, "cpuset.cpus.partition"))
		v[strcspn(v, " ")] = '\0';
	rc = put(b, cgroup, file, v);
	if (rc)
		return rc;
	/* An empty set inherits the parent's. */
	if (!strcmp(file, "cpuset.cpus") || !strcmp(file, "cpuset.mems")) {
		snprintf(eff, sizeof(eff), "%s.effective", file);
		if (!v[0]) {
			parent_of(cgroup, parent, sizeof(parent));
			get(b, parent, eff, v, sizeof(v));
		}
		return put(b, cgroup, eff, v);
	}
	if (!strcmp(file, "cpuset.cpus.exclusive"))
		return put(b, cgroup, "cpuset.cpus.exclusive.effective", v);
	return 0;
}

int benchcg_mkdir(struct benchcg *b, const char *cgroup)
{
	char path[PATH_MAX + 64], parent[PATH_MAX], cpus[8192], mems[1024];
	const char *values[] = { "cpuset cpu", "cpuset cpu", "", "populated 0\nfrozen 0", "", cpus, "", mems, "member",
				 "", "", "max 100000" };

	path_of(b, cgroup, NULL, path, sizeof(path));
	if (mkdir(path, 0755) < 0)
		return errno;
	parent_of(cgroup, parent, sizeof(parent));
	get(b, parent, "cpuset.cpus.effective", cpus, sizeof(cpus));
	get(b, parent, "cpuset.mems.effective", mems, sizeof(mems));
	for (int i = 0; files[i]; i++) {
		int rc = put(b, cgroup, files[i], values[i]);

		if (rc)
			return rc;
	}
	return 0;
}

int benchcg_rmdir(struct benchcg *b, const char *cgroup)
{
	char path[PATH_MAX + 64];

	for (int i = 0; files[i]; i++) {
		path_of(b, cgroup, files[i], path, sizeof(path));
		unlink(path);
	}
	path_of(b, cgroup, NULL, path, sizeof(path));
	return rmdir(path) < 0 && errno != ENOENT ? errno : 0;
}

long benchcg_writes(const struct benchcg *b)
{
	return b->writes;
}

static int op_write(struct cc_cg *cg, const char *cgroup, const char *file, const char *value, struct cc_err *err)
{
	struct benchcg *b = cg->ops_arg;
	int rc;

	b->writes++;
	rc = benchcg_write(b, cgroup, file, value);
	return rc ? cc_err_sys(err, rc, "write \"%s\" to %s/%s", value, cgroup, file) : 0;
}

static int op_mkdir(struct cc_cg *cg, const char *cgroup, struct cc_err *err)
{
	struct benchcg *b = cg->ops_arg;
	int rc;

	b->writes++;
	rc = benchcg_mkdir(b, cgroup);
	return rc && rc != EEXIST ? cc_err_sys(err, rc, "mkdir %s", cgroup) : 0;
}

static int op_rmdir(struct cc_cg *cg, const char *cgroup, struct cc_err *err)
{
	struct benchcg *b = cg->ops_arg;
	int rc;

	b->writes++;
	rc = benchcg_rmdir(b, cgroup);
	return rc ? cc_err_sys(err, rc, "rmdir %s", cgroup) : 0;
}

const struct cc_cg_ops benchcg_ops = { op_write, op_mkdir, op_rmdir };

struct benchcg *benchcg_new(const char *rootdir, const char *cpus, const char *mems)
{
	struct benchcg *b = calloc(1, sizeof(*b));
	char path[PATH_MAX + 64];

	if (!b)
		bench_die("out of memory");
	snprintf(b->dir, sizeof(b->dir), "%s/sys/fs/cgroup", rootdir);
	snprintf(path, sizeof(path), "%s/sys", rootdir);
	if ((mkdir(path, 0755) < 0 && errno != EEXIST))
		bench_die("%s: %s", path, strerror(errno));
	snprintf(path, sizeof(path), "%s/sys/fs", rootdir);
	if ((mkdir(path, 0755) < 0 && errno != EEXIST) || (mkdir(b->dir, 0755) < 0 && errno != EEXIST))
		bench_die("%s: %s", b->dir, strerror(errno));
	if (put(b, "/", "cgroup.controllers", "cpuset cpu") || put(b, "/", "cgroup.subtree_control", "cpuset cpu") ||
	    put(b, "/", "cpuset.cpus.effective", cpus) || put(b, "/", "cpuset.mems.effective", mems) ||
	    put(b, "/", "cgroup.procs", ""))
		bench_die("%s: %s", b->dir, strerror(errno));
	return b;
}

void benchcg_free(struct benchcg *b)
{
	free(b);
}
