/* corecarve capture: copy a node's kernel interfaces, configuration and
 * ledger into a --root tree (capture.h). */
#define _GNU_SOURCE
#include "capture.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <hwloc.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifdef __has_include
#if __has_include(<linux/openat2.h>)
#include <linux/openat2.h>
#define CC_HAVE_OPENAT2 1
#endif
#endif

#include "cleanup.h"
#include "fileio.h"
#include "ledger.h"
#include "policy.h"

#define MAX_DEPTH 24
#define MAX_ENTRIES 500000 /* files, links and directories of one capture */

struct cap {
	const struct cc_root *src;
	int dest;               /* the tree's directory */
	struct cc_capture_stats *st;
	struct cc_err *err;
};

/* ---- the destination -------------------------------------------------------- */

/* Every entry of the tree is reached from the destination's descriptor one
 * component at a time and never through a link: the destination may have
 * been prepared by someone else (docs/hardening.md, capture), and root
 * must not write where a planted link points. */

#ifdef CC_HAVE_OPENAT2
/* The directory `rel` beneath `dir` in one call where the kernel has
 * openat2: no link anywhere on the way, nothing above `dir`.  -1 with
 * errno (ENOSYS, E2BIG: the walk below does it). */
static int openat2_beneath(int dir, const char *rel)
{
	struct open_how how = {
		.flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};

	return (int)syscall(SYS_openat2, dir, rel, &how, sizeof(how));
}
#endif

/* One directory component under `dir`, made when absent (mkdirat, then
 * opened without following: a link planted there is ELOOP). */
static int step(struct cap *c, int dir, const char *name, const char *path)
{
	int fd = openat(dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0 && errno == ENOENT) {
		if (mkdirat(dir, name, 0755) < 0 && errno != EEXIST)
			return cc_err_sys(c->err, errno, "capture: mkdir %s", path);
		fd = openat(dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	}
	if (fd < 0 && (errno == ELOOP || errno == ENOTDIR))
		return cc_err_set(c->err, errno,
				  "capture: %s: a link or a file where a directory goes, in the destination; not "
				  "followed (capture into a new directory: DIR=$(mktemp -d))",
				  path);
	if (fd < 0)
		return cc_err_sys(c->err, errno, "capture: %s", path);
	return fd;
}

/* The directory `path` (absolute, as in the tree) beneath the
 * destination, made as needed; its descriptor, or -1 with err. */
static int dir_fd(struct cap *c, const char *path)
{
	char buf[PATH_MAX];
	char *comp, *save = NULL;
	int fd;

	while (*path == '/')
		path++;
	if (!*path)
		return fcntl(c->dest, F_DUPFD_CLOEXEC, 3);
	if (snprintf(buf, sizeof(buf), "%s", path) >= (int)sizeof(buf))
		return cc_err_set(c->err, ENAMETOOLONG, "capture: path too long: %.64s...", path);
#ifdef CC_HAVE_OPENAT2
	fd = openat2_beneath(c->dest, buf);
	if (fd >= 0)
		return fd;
	if (errno == ELOOP || errno == EXDEV)
		return cc_err_set(c->err, errno,
				  "capture: /%s: a link on the way, in the destination; not followed (capture into a "
				  "new directory: DIR=$(mktemp -d))",
				  buf);
#endif
	fd = fcntl(c->dest, F_DUPFD_CLOEXEC, 3);
	for (comp = strtok_r(buf, "/", &save); fd >= 0 && comp; comp = strtok_r(NULL, "/", &save)) {
		int next;

		if (!strcmp(comp, ".") || !strcmp(comp, "..")) {
			close(fd);
			return cc_err_set(c->err, EINVAL, "capture: /%s: not a path inside the tree", path);
		}
		next = step(c, fd, comp, path);
		close(fd);
		fd = next;
	}
	if (fd < 0 && !c->err->code)
		return cc_err_sys(c->err, errno, "capture: /%s", path);
	return fd;
}

/* `path`'s parent directory beneath the destination, and *leaf its last
 * component (pointing into path). */
static int parent_fd(struct cap *c, const char *path, const char **leaf)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(path, '/');

	if (!slash || !slash[1] || (size_t)(slash - path) >= sizeof(dir))
		return cc_err_set(c->err, EINVAL, "capture: %s: not a path to a file", path);
	memcpy(dir, path, (size_t)(slash - path));
	dir[slash - path] = '\0';
	*leaf = slash + 1;
	return dir_fd(c, dir);
}

/* mkdir -p of `path` (self) or of its parent below the tree. */
static int mkdirs(struct cap *c, const char *path, bool self)
{
	const char *leaf;
	int fd = self ? dir_fd(c, path) : parent_fd(c, path, &leaf);

	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

/* A new file, created exclusively (a name already there, a link above
 * all, is never written through).  `dup_ok`: a name already written is
 * skipped (a thread's status seen twice while processes come and go). */
static int put_file(struct cap *c, const char *path, const char *data, size_t len, mode_t mode, bool dup_ok)
{
	_cleanup_close_ int dir = -1, fd = -1;
	const char *leaf;

	dir = parent_fd(c, path, &leaf);
	if (dir < 0)
		return -1;
	fd = openat(dir, leaf, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
	if (fd < 0 && errno == EEXIST && dup_ok)
		return 0;
	if (fd < 0)
		return cc_err_sys(c->err, errno, "capture: %s", path);
	if (cc_write_all(fd, data, len) < 0)
		return cc_err_sys(c->err, errno, "capture: write %s", path);
	c->st->files++;
	c->st->bytes += (long long)len;
	return 0;
}

static int put(struct cap *c, const char *path, const char *data, size_t len, mode_t mode)
{
	return put_file(c, path, data, len, mode, false);
}

/* ---- the source ---------------------------------------------------------------- */

/* The bytes of a source file as they are (sysfs values keep their newline),
 * or NULL (skipped: write-only attributes, EIO, vanished). */
static char *slurp(struct cap *c, const char *path, size_t *len)
{
	struct cc_err e = CC_ERR_INIT;
	_cleanup_close_ int fd = cc_root_openat(c->src, path, O_RDONLY | O_NONBLOCK, 0, &e);
	char *buf = NULL;

	*len = 0;
	if (fd < 0 || cc_read_fd(fd, path, CC_CAPTURE_FILE_MAX, 0, &buf, len, &e) < 0)
		return NULL;
	return buf;
}

/* Copy one regular file; a source that cannot be read is skipped. */
static int copy_file(struct cap *c, const char *path, const char *to, mode_t mode)
{
	size_t len;
	_cleanup_free_ char *data = slurp(c, path, &len);

	if (!data) {
		c->st->skipped++;
		return 0;
	}
	/* A thread's status goes where its id says: a name seen twice (ids
	 * reused while the capture runs) keeps the first. */
	return put_file(c, to ? to : path, data, len, mode, to != NULL);
}

static int budget(struct cap *c)
{
	if (c->st->files + c->st->links + c->st->dirs > MAX_ENTRIES)
		return cc_err_set(c->err, EFBIG, "capture: more than %d entries; stopped", MAX_ENTRIES);
	return 0;
}

/* A whole tree: directories, files and links as links (never followed:
 * sysfs links point back up and round). */
static int copy_tree(struct cap *c, const char *path, int depth)
{
	struct cc_err e = CC_ERR_INIT;
	struct stat st;

	if (budget(c) < 0)
		return -1;
	if (cc_root_lstat(c->src, path, &st, &e) < 0)
		return 0; /* absent here: nothing to copy */
	if (S_ISLNK(st.st_mode)) {
		char target[PATH_MAX];

		if (cc_root_readlink(c->src, path, target, sizeof(target), &e) < 0) {
			c->st->skipped++;
			return 0;
		}
		{
			const char *leaf;
			_cleanup_close_ int dir = parent_fd(c, path, &leaf);

			/* symlinkat never follows its last component. */
			if (dir < 0)
				return -1;
			if (symlinkat(target, dir, leaf) < 0 && errno != EEXIST)
				return cc_err_sys(c->err, errno, "capture: symlink %s", path);
		}
		c->st->links++;
		return 0;
	}
	if (S_ISREG(st.st_mode))
		return copy_file(c, path, NULL, 0644);
	if (!S_ISDIR(st.st_mode) || depth > MAX_DEPTH)
		return 0;
	if (mkdirs(c, path, true) < 0)
		return -1;
	c->st->dirs++;
	{
		_cleanup_closedir_ DIR *d = cc_root_opendir(c->src, path, &e);
		struct dirent *de;

		while (d && (de = readdir(d))) {
			char child[PATH_MAX];

			if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
				continue;
			if (cc_path(child, sizeof(child), c->err, "%s/%s", path, de->d_name) < 0 ||
			    copy_tree(c, child, depth + 1) < 0)
				return -1;
		}
	}
	return 0;
}

/* ---- cgroupfs ------------------------------------------------------------------ */

static const char *const cgroup_files[] = {
	"cgroup.controllers", "cgroup.subtree_control", "cgroup.events", "cgroup.procs", "cgroup.threads",
	"cgroup.type", "cpuset.cpus", "cpuset.cpus.effective", "cpuset.cpus.exclusive",
	"cpuset.cpus.exclusive.effective", "cpuset.cpus.partition", "cpuset.mems", "cpuset.mems.effective",
	"cpu.max", NULL,
};

static int copy_cgroups(struct cap *c, const char *path, int depth)
{
	struct cc_err e = CC_ERR_INIT;
	_cleanup_closedir_ DIR *d = NULL;
	struct dirent *de;
	struct stat st;

	if (c->st->cgroups >= CC_CAPTURE_MAX_CGROUPS || depth > MAX_DEPTH)
		return 0;
	if (cc_root_lstat(c->src, path, &st, &e) < 0 || !S_ISDIR(st.st_mode))
		return 0;
	if (mkdirs(c, path, true) < 0)
		return -1;
	c->st->cgroups++;
	c->st->dirs++;
	for (int i = 0; cgroup_files[i]; i++) {
		char f[PATH_MAX];

		if (cc_path(f, sizeof(f), c->err, "%s/%s", path, cgroup_files[i]) < 0)
			return -1;
		if (cc_root_lstat(c->src, f, &st, &e) == 0 && S_ISREG(st.st_mode) && copy_file(c, f, NULL, 0644) < 0)
			return -1;
	}
	d = cc_root_opendir(c->src, path, &e);
	while (d && (de = readdir(d))) {
		char child[PATH_MAX];

		if (de->d_name[0] == '.' || (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN))
			continue;
		if (cc_path(child, sizeof(child), c->err, "%s/%s", path, de->d_name) < 0 ||
		    copy_cgroups(c, child, depth + 1) < 0)
			return -1;
	}
	return 0;
}

/* ---- procfs ------------------------------------------------------------------- */

static bool numeric(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return false;
	return true;
}

/* Every process's comm and status, and every thread's status at
 * /proc/<tid>/status, where the audit reads a carved task's affinity. */
static int copy_processes(struct cap *c)
{
	struct cc_err e = CC_ERR_INIT;
	_cleanup_closedir_ DIR *d = cc_root_opendir(c->src, "/proc", &e);
	struct dirent *de;

	while (d && (de = readdir(d))) {
		char p[PATH_MAX], task[PATH_MAX];
		_cleanup_closedir_ DIR *t = NULL;
		struct dirent *te;

		if (!numeric(de->d_name))
			continue;
		snprintf(p, sizeof(p), "/proc/%s/comm", de->d_name);
		if (copy_file(c, p, NULL, 0444) < 0)
			return -1;
		snprintf(p, sizeof(p), "/proc/%s/status", de->d_name);
		if (copy_file(c, p, NULL, 0444) < 0)
			return -1;
		snprintf(task, sizeof(task), "/proc/%s/task", de->d_name);
		t = cc_root_opendir(c->src, task, &e);
		while (t && (te = readdir(t))) {
			char from[2 * PATH_MAX], to[PATH_MAX];

			if (!numeric(te->d_name) || !strcmp(te->d_name, de->d_name))
				continue;
			snprintf(from, sizeof(from), "%s/%s/status", task, te->d_name);
			snprintf(to, sizeof(to), "/proc/%s/status", te->d_name);
			if (copy_file(c, from, to, 0444) < 0)
				return -1;
		}
		if (budget(c) < 0)
			return -1;
	}
	return 0;
}

/* ---- configuration ---------------------------------------------------------------- */

/* The stanza of `pkg` in dpkg's status file (what doctor reads for the
 * irqbalance version); the whole file is megabytes of other packages. */
static int copy_dpkg(struct cap *c, const char *pkg)
{
	size_t len;
	_cleanup_free_ char *all = slurp(c, "/var/lib/dpkg/status", &len);
	char needle[128];
	const char *p = NULL, *end;

	snprintf(needle, sizeof(needle), "Package: %s\n", pkg);
	for (const char *q = all; all && (q = memmem(q, len - (size_t)(q - all), needle, strlen(needle))); q++)
		if (q == all || q[-1] == '\n') {
			p = q;
			break;
		}
	if (!p)
		return put(c, "/var/lib/dpkg/status", "", 0, 0644); /* /var/lib is there: the tree says "none" */
	end = memmem(p, len - (size_t)(p - all), "\n\n", 2);
	return put(c, "/var/lib/dpkg/status", p, end ? (size_t)(end - p) + 2 : len - (size_t)(p - all), 0644);
}

/* A hooks.d file, and an empty file where it names the binary: doctor
 * checks that path exists in the tree. */
static int copy_hook(struct cap *c, const char *path)
{
	size_t len;
	_cleanup_free_ char *text = slurp(c, path, &len);
	_cleanup_json_ json_t *doc = NULL;
	const char *bin;

	if (!text)
		return 0;
	if (put(c, path, text, len, 0644) < 0)
		return -1;
	doc = json_loadb(text, len, 0, NULL);
	bin = json_string_value(json_object_get(json_object_get(doc, "hook"), "path"));
	/* Both hooks.d files name it: the second finds it there. */
	if (bin && bin[0] == '/' && !strstr(bin, "..") && cc_root_exists(c->src, bin) &&
	    put_file(c, bin, "", 0, 0755, true) < 0)
		return -1;
	return 0;
}

static int copy_config(struct cap *c, const struct cc_capture_opts *o)
{
	static const char *const files[] = {
		"/etc/corecarve/vms.yaml", "/etc/default/irqbalance", "/etc/sysconfig/irqbalance",
		"/var/lib/kubelet/cpu_manager_state", NULL,
	};
	static const char *const hooks[] = { "/etc/containers/oci/hooks.d", "/usr/share/containers/oci/hooks.d", NULL };
	struct cc_err e = CC_ERR_INIT;

	/* The directories say the configuration was captured: a file missing
	 * below them is missing on the node, not unknown. */
	if (mkdirs(c, "/etc", true) < 0 || mkdirs(c, "/usr/share", true) < 0)
		return -1;
	for (int i = 0; files[i]; i++)
		if (cc_root_exists(c->src, files[i]) && copy_file(c, files[i], NULL, 0644) < 0)
			return -1;
	for (int i = 0; hooks[i]; i++) {
		const char *stages[] = { "createRuntime", "poststop" };

		for (int k = 0; k < 2; k++) {
			char p[PATH_MAX];

			snprintf(p, sizeof(p), "%s/corecarve-%s.json", hooks[i], stages[k]);
			if (copy_hook(c, p) < 0)
				return -1;
		}
	}
	if (copy_dpkg(c, "irqbalance") < 0)
		return -1;
	/* The policy: the one named (a file of this machine), else the node's. */
	if (o->policy_path) {
		size_t len = 0;
		_cleanup_free_ char *text = NULL;
		FILE *f = fopen(o->policy_path, "re");

		if (!f)
			return cc_err_sys(c->err, errno, "capture: policy %s", o->policy_path);
		text = malloc(CC_POLICY_MAX + 1);
		if (text)
			len = fread(text, 1, CC_POLICY_MAX, f);
		fclose(f);
		if (!text)
			return cc_err_sys(c->err, ENOMEM, "capture");
		if (put(c, CC_POLICY_PATH, text, len, 0644) < 0)
			return -1;
	} else if (cc_root_exists(c->src, CC_POLICY_PATH) && copy_file(c, CC_POLICY_PATH, NULL, 0644) < 0) {
		return -1;
	}
	(void)e;
	return 0;
}

/* A damaged ledger's grant tokens, found as text: the value after each
 * "token" key, its hex digits turned to zeros. */
static void zero_tokens(char *text)
{
	for (char *p = strstr(text, "\"token\""); p; p = strstr(p, "\"token\"")) {
		p += 7;
		p += strspn(p, " \t:");
		if (*p != '"')
			continue;
		for (p++; *p && *p != '"'; p++)
			if (isxdigit((unsigned char)*p))
				*p = '0';
	}
}

/* The ledger as it is (a damaged one too: that is what a report needs),
 * 0600 in a 0700 directory as the hook keeps it, but for the grants'
 * tokens: a capture goes into bug reports, and a token lets its holder
 * carve the grant's cores.  It is replaced by rename, so one read sees
 * one version. */
static int copy_ledger(struct cap *c, const char *state_dir)
{
	char path[PATH_MAX], name[PATH_MAX + 16];
	_cleanup_free_ char *text = NULL, *redacted = NULL;
	_cleanup_close_ int fd = -1;
	struct cc_err e = CC_ERR_INIT;
	size_t len = 0, rlen = 0;

	snprintf(path, sizeof(path), "%s/" CC_LEDGER_FILE, state_dir ? state_dir : CC_LEDGER_DIR);
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return 0;
	snprintf(name, sizeof(name), "capture: %s", path);
	if (cc_read_fd(fd, name, CC_LEDGER_MAX, 0, &text, &len, c->err) < 0)
		return -1;
	{
		_cleanup_close_ int dir = dir_fd(c, CC_LEDGER_DIR);

		if (dir < 0)
			return -1;
		if (fchmod(dir, 0700) < 0)
			return cc_err_sys(c->err, errno, "capture: " CC_LEDGER_DIR);
	}
	/* The ledger written again with its tokens zeroed (it still loads);
	 * one that does not load, as read with its tokens zeroed in place. */
	if (cc_ledger_export_redacted(state_dir ? state_dir : CC_LEDGER_DIR, &redacted, &rlen, &e) == 0 && redacted)
		return put(c, CC_LEDGER_DIR "/" CC_LEDGER_FILE, redacted, rlen, 0600);
	zero_tokens(text);
	return put(c, CC_LEDGER_DIR "/" CC_LEDGER_FILE, text, len, 0600);
}

/* ---- the capture --------------------------------------------------------------- */

static const char *hwloc_version_string(void)
{
#ifdef HWLOC_VERSION
	return HWLOC_VERSION;
#else
	return "?";
#endif
}

/* Why an existing destination is refused (NULL: it may be used): one
 * the caller does not own, or that another user can write, may be
 * changed under the capture by that user. */
static const char *dest_unsafe(const struct stat *st, char *why, size_t len)
{
	if (!S_ISDIR(st->st_mode))
		return "not a directory";
	if (st->st_uid != geteuid()) {
		snprintf(why, len, "owned by uid %u, not by the caller (uid %u)", (unsigned)st->st_uid,
			 (unsigned)geteuid());
		return why;
	}
	if (st->st_mode & (S_IWGRP | S_IWOTH)) {
		snprintf(why, len, "mode %04o: writable by %s", (unsigned)(st->st_mode & 07777),
			 st->st_mode & S_IWOTH ? "every user" : "its group");
		return why;
	}
	return NULL;
}

/* The destination: a directory made here (0700), or an empty one the
 * caller owns that nobody else can write; never a link. */
static int open_dest(const char *dest, struct cc_err *err)
{
	_cleanup_closedir_ DIR *d = NULL;
	_cleanup_close_ int fd = -1;
	struct dirent *de;
	struct stat st;
	const char *why;
	char buf[128];

	if (mkdir(dest, 0700) < 0 && errno != EEXIST)
		return cc_err_sys(err, errno, "capture: %s", dest);
	if (lstat(dest, &st) == 0 && S_ISLNK(st.st_mode))
		return cc_err_set(err, ELOOP, "capture: %s: a symbolic link; name a new directory (DIR=$(mktemp -d))",
				  dest);
	fd = open(dest, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return cc_err_sys(err, errno, "capture: %s", dest);
	/* What was opened is what is checked: the name may have moved. */
	if (fstat(fd, &st) < 0)
		return cc_err_sys(err, errno, "capture: %s", dest);
	why = dest_unsafe(&st, buf, sizeof(buf));
	if (why)
		return cc_err_set(err, EPERM, "capture: %s: %s; name a new directory (DIR=$(mktemp -d))", dest, why);
	/* Never mixed into something else: a capture is the node's, whole. */
	d = fdopendir(dup(fd));
	while (d && (de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			return cc_err_set(err, EEXIST, "capture: %s is not empty; name a new directory", dest);
	return cc_steal_fd(fd);
}

int cc_capture(const struct cc_root *src, const char *dest, const struct cc_capture_opts *o,
	       struct cc_capture_stats *st, struct cc_err *err)
{
	static const char *const trees[] = {
		"/sys/devices/system/cpu", "/sys/devices/system/node", "/sys/bus/cpu/devices", "/sys/bus/node/devices",
		"/proc/irq", NULL,
	};
	static const char *const files[] = {
		"/proc/cpuinfo", "/proc/meminfo", "/proc/mounts", "/proc/self/mountinfo", "/proc/self/cgroup",
		"/proc/cmdline", "/proc/interrupts", "/proc/stat", "/proc/sys/kernel/osrelease",
		"/proc/sys/kernel/numa_balancing", "/proc/sys/kernel/panic_on_warn",
		"/sys/kernel/mm/transparent_hugepage/enabled", NULL,
	};
	struct cap c = { .src = src, .st = st, .err = err };
	struct cc_err e = CC_ERR_INIT;
	_cleanup_closedir_ DIR *devs = NULL;
	struct dirent *de;
	char manifest[2048], when[64];
	size_t mlen;
	int rc = -1;
	time_t now = time(NULL);

	memset(st, 0, sizeof(*st));
	c.dest = open_dest(dest, err);
	if (c.dest < 0)
		return -1;
	for (int i = 0; trees[i]; i++)
		if (copy_tree(&c, trees[i], 0) < 0)
			goto out;
	/* Each PMU's CPU list: how hybrid cores are told apart. */
	devs = cc_root_opendir(src, "/sys/devices", &e);
	while (devs && (de = readdir(devs))) {
		char p[PATH_MAX];

		if (de->d_name[0] == '.' || !strcmp(de->d_name, "system"))
			continue;
		snprintf(p, sizeof(p), "/sys/devices/%s/cpus", de->d_name);
		if (cc_root_exists(src, p) && copy_file(&c, p, NULL, 0444) < 0)
			goto out;
	}
	for (int i = 0; files[i]; i++)
		if (cc_root_exists(src, files[i]) && copy_file(&c, files[i], NULL, 0444) < 0)
			goto out;
	if (copy_cgroups(&c, "/sys/fs/cgroup", 0) < 0 || copy_processes(&c) < 0 || copy_config(&c, o) < 0 ||
	    copy_ledger(&c, o->state_dir) < 0)
		goto out;
	{
		struct cc_err re = CC_ERR_INIT;
		_cleanup_free_ char *rel = cc_root_read(src, "/proc/sys/kernel/osrelease", 256, &re);
		char host[256] = "";

		gethostname(host, sizeof(host) - 1);
		strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
		mlen = (size_t)snprintf(manifest, sizeof(manifest),
					"corecarve capture: a --root tree for topology, plan, status, doctor, irq status and audit\n"
					"captured   %s\n"
					"host       %s\n"
					"source     %s\n"
					"kernel     %s\n"
					"corecarve  %s\n"
					"hwloc      %s (built with), API %u.%u.%u\n"
					"policy     %s\n"
					"ledger     %s/" CC_LEDGER_FILE "\n"
					"copied     %d files, %d links, %d directories (%d cgroups), %lld bytes; %d unreadable skipped\n",
					when, host, src->is_host ? "this host" : src->path, rel ? rel : "?",
					o->version ? o->version : "?", hwloc_version_string(), HWLOC_API_VERSION >> 16, (HWLOC_API_VERSION >> 8) & 0xff,
					HWLOC_API_VERSION & 0xff, o->policy_path ? o->policy_path : CC_POLICY_PATH,
					o->state_dir ? o->state_dir : CC_LEDGER_DIR, st->files, st->links, st->dirs, st->cgroups,
					st->bytes, st->skipped);
		if (put(&c, "/" CC_CAPTURE_MANIFEST, manifest, mlen < sizeof(manifest) ? mlen : sizeof(manifest) - 1,
			0644) < 0)
			goto out;
	}
	rc = 0;
out:
	close(c.dest);
	return rc;
}
