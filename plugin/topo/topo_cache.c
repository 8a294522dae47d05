/* corecarve: the topology cache — the stamp and the file (see topo_cache.h;
 * the text format is in topo_serial.c). */
#define _GNU_SOURCE
#include "topo_cache.h"

#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "cpulist.h"
#include "fileio.h"
#include "paths.h"

#define CACHE_LOCK CC_TOPO_CACHE_FILE ".lock"

/* ---- the stamp --------------------------------------------------------- */

/* The GNU build id of the running executable, in hex: it changes with
 * every build of corecarve (and of anything linking libcorecarve), so a
 * model written by another build, whose discovery or class rules may
 * differ, is never read.  Found in memory: no file, no syscall. */
struct build_id {
	char hex[2 * 64 + 1];
};

static int note_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct build_id *id = arg;

	(void)size;
	/* The first object is the executable itself. */
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		const char *p, *end;

		if (ph->p_type != PT_NOTE)
			continue;
		p = (const char *)(info->dlpi_addr + ph->p_vaddr);
		end = p + ph->p_memsz;
		while (p + sizeof(ElfW(Nhdr)) <= end) {
			const ElfW(Nhdr) *n = (const void *)p;
			const char *name = p + sizeof(*n);
			const unsigned char *desc = (const unsigned char *)name + ((n->n_namesz + 3) & ~3u);

			if ((const char *)desc + n->n_descsz > end)
				break;
			if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 && memcmp(name, "GNU", 4) == 0 &&
			    n->n_descsz > 0 && n->n_descsz <= 64) {
				for (unsigned k = 0; k < n->n_descsz; k++)
					snprintf(id->hex + 2 * k, 3, "%02x", desc[k]);
				return 1;
			}
			p = (const char *)desc + ((n->n_descsz + 3) & ~3u);
		}
	}
	return 1;
}

/* Append " key=value" with the value %XX-escaped like the cache's strings
 * would be, so the stamp stays one line of space-separated fields. */
static void put(FILE *f, const char *key, const char *value)
{
	fprintf(f, " %s=", key);
	if (!value || !*value) {
		fputc('-', f);
		return;
	}
	for (; *value; value++) {
		unsigned char c = (unsigned char)*value;

		if (c <= ' ' || c == '%' || c >= 0x7f)
			fprintf(f, "%%%02X", c);
		else
			fputc(c, f);
	}
}

/* A file of the root, or "-" when it does not exist; any other failure
 * makes the source uncacheable (a stamp must not guess). */
static int put_file(FILE *f, const struct cc_root *root, const char *key, const char *path, struct cc_err *err)
{
	struct cc_err e = CC_ERR_INIT;
	_cleanup_free_ char *s = cc_root_read(root, path, 64 * 1024, &e);

	if (!s && e.code != ENOENT) {
		*err = e;
		return -1;
	}
	put(f, key, s);
	return 0;
}

/* The identity of a file or directory: replaced or re-created, it differs. */
static int put_identity(FILE *f, const char *key, const struct stat *st)
{
	fprintf(f, " %s=%llx:%llx:%lld.%09ld:%lld", key, (unsigned long long)st->st_dev,
		(unsigned long long)st->st_ino, (long long)st->st_ctim.tv_sec, st->st_ctim.tv_nsec,
		(long long)st->st_size);
	return 0;
}

/* The cpufreq policy directories, sorted: a cpufreq driver that loads (or
 * goes) after boot adds them and rescales cpu_capacity. */
static int put_cpufreq(FILE *f, const struct cc_root *root, struct cc_err *err)
{
	struct cc_err e = CC_ERR_INIT;
	_cleanup_closedir_ DIR *d = cc_root_opendir(root, "/sys/devices/system/cpu/cpufreq", &e);
	struct dirent *de;
	_cleanup_bitmap_ hwloc_bitmap_t set = hwloc_bitmap_alloc();
	_cleanup_free_ char *s = NULL;

	if (!set)
		return cc_err_sys(err, ENOMEM, "topology stamp");
	if (!d) {
		if (e.code != ENOENT) {
			*err = e;
			return -1;
		}
		put(f, "cpufreq", NULL);
		return 0;
	}
	while ((de = readdir(d))) {
		char *end;
		unsigned long n;

		if (strncmp(de->d_name, "policy", 6) != 0)
			continue;
		n = strtoul(de->d_name + 6, &end, 10);
		if (*end || n >= CC_CPU_LIMIT)
			continue;
		hwloc_bitmap_set(set, (unsigned)n);
	}
	s = cc_cpulist_format(set);
	if (!s)
		return cc_err_sys(err, ENOMEM, "topology stamp");
	put(f, "cpufreq", s);
	return 0;
}

static int stamp_host(FILE *f, const struct cc_topo_source *src, struct cc_err *err)
{
	static const struct {
		const char *key, *path;
	} files[] = {
		{ "online", "/sys/devices/system/cpu/online" },
		{ "present", "/sys/devices/system/cpu/present" },
		{ "possible", "/sys/devices/system/cpu/possible" },
		{ "nodes", "/sys/devices/system/node/online" },
		{ "pmu_core", "/sys/devices/cpu_core/cpus" },
		{ "pmu_atom", "/sys/devices/cpu_atom/cpus" },
	};
	const struct cc_root *root = src->root;
	struct cc_err e = CC_ERR_INIT;
	_cleanup_free_ char *boot = cc_root_read(root, "/proc/sys/kernel/random/boot_id", 256, &e);

	put(f, "root", root->path);
	if (boot) {
		put(f, "boot", boot);
	} else if (e.code == ENOENT && !root->is_host) {
		/* A captured tree does not boot or hotplug: it is what its
		 * files are.  Keyed by the identity of its CPU directory, so a
		 * tree extracted again (or another one at the same path) is a
		 * new tree. */
		_cleanup_close_ int fd = cc_root_openat(root, "/sys/devices/system/cpu", O_PATH | O_DIRECTORY, 0, err);
		struct stat st;

		if (fd < 0)
			return -1;
		if (fstat(fd, &st) < 0)
			return cc_err_sys(err, errno, "%s: /sys/devices/system/cpu", root->path);
		put_identity(f, "tree", &st);
	} else {
		/* A live kernel always has a boot id: without it a reboot
		 * could not be told apart. */
		*err = e;
		return cc_err_prefix(err, "not cacheable: no boot id");
	}
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		if (put_file(f, root, files[i].key, files[i].path, err) < 0)
			return -1;
	return put_cpufreq(f, root, err);
}

char *cc_topo_stamp(const struct cc_topo_source *src, struct cc_err *err)
{
	struct build_id id = { { 0 } };
	char *buf = NULL;
	size_t len = 0;
	FILE *f;
	int r = 0;

	if (!src || (src->kind == CC_TOPO_HOST && !src->root) || (src->kind != CC_TOPO_HOST && !src->arg))
		return cc_err_set(err, EINVAL, "topology stamp: incomplete source"), NULL;
	if (src->caller_view)
		return cc_err_set(err, EINVAL, "not cacheable: the caller's view depends on its cgroup and affinity"),
		       NULL;
	dl_iterate_phdr(note_cb, &id);
	if (!id.hex[0])
		return cc_err_set(err, ENOENT, "not cacheable: the program has no GNU build id"), NULL;
	f = open_memstream(&buf, &len);
	if (!f)
		return cc_err_sys(err, errno, "topology stamp"), NULL;
	fprintf(f, "v1 build=%s hwloc=%x", id.hex, hwloc_get_api_version());
	switch (src->kind) {
	case CC_TOPO_HOST:
		fputs(" kind=host", f);
		r = stamp_host(f, src, err);
		break;
	case CC_TOPO_XML: {
		struct stat st;

		fputs(" kind=xml", f);
		put(f, "xml", src->arg);
		/* hwloc reads the file by name: its identity and size stand
		 * for its content. */
		if (stat(src->arg, &st) < 0)
			r = cc_err_sys(err, errno, "hwloc XML %s", src->arg);
		else
			put_identity(f, "file", &st);
		break;
	}
	case CC_TOPO_SYNTHETIC:
		/* A synthetic machine is its description. */
		fputs(" kind=synthetic", f);
		put(f, "synthetic", src->arg);
		break;
	}
	for (int i = 0; r == 0 && i < src->noverrides; i++) {
		_cleanup_free_ char *s = cc_cpulist_format(src->overrides[i].cpus);
		char key[CC_NAME_MAX + 8];

		snprintf(key, sizeof(key), "class.%s", src->overrides[i].name);
		put(f, key, s ? s : "?");
	}
	if (fclose(f) != 0 && r == 0)
		r = cc_err_sys(err, ENOMEM, "topology stamp");
	if (r < 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* ---- the file ---------------------------------------------------------- */

/* The state directory, as the ledger wants it (ledger.h): a real
 * directory, ours, writable by nobody else.  Created 0700 when missing,
 * as the ledger would right after. */
static int open_dir(const char *dir, struct cc_err *err)
{
	_cleanup_close_ int fd = -1;
	struct stat st;

	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		return cc_err_sys(err, errno, "%s", dir);
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return cc_err_sys(err, errno, "%s", dir);
	if (fstat(fd, &st) < 0)
		return cc_err_sys(err, errno, "%s", dir);
	if (st.st_uid != geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH)))
		return cc_err_set(err, EPERM, "%s: not a private directory of uid %u", dir, (unsigned)geteuid());
	return cc_steal_fd(fd);
}

/* The cache text, or NULL (err set; ENOENT when there is none). */
static char *read_cache(int dirfd, size_t *len, struct cc_err *err)
{
	_cleanup_close_ int fd = openat(dirfd, CC_TOPO_CACHE_FILE, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	char *buf = NULL;
	struct stat st;

	if (fd < 0)
		return cc_err_sys(err, errno, CC_TOPO_CACHE_FILE), NULL;
	if (fstat(fd, &st) < 0)
		return cc_err_sys(err, errno, CC_TOPO_CACHE_FILE), NULL;
	/* Written by us, alone: anything else is not trusted. */
	if (!S_ISREG(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH)))
		return cc_err_set(err, EPERM, CC_TOPO_CACHE_FILE ": not a private regular file"), NULL;
	if (cc_read_fd(fd, CC_TOPO_CACHE_FILE, CC_TOPO_CACHE_MAX, CC_READ_REGULAR, &buf, len, err) < 0)
		return NULL;
	return buf;
}

/* Replace the cache.  One writer at a time (a non-blocking lock: a hook
 * that finds another writing leaves it to that one), through a fixed temp
 * name and rename(2), so readers see the old file or the new one.  No
 * fsync: the file lives on tmpfs, and a damaged file after a crash on a
 * real disk fails its checksum and is discovered again. */
static int store(int dirfd, const char *text, struct cc_err *err)
{
	_cleanup_close_ int lock = openat(dirfd, CACHE_LOCK, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	const struct cc_replace o = { .mode = 0600, .sync = CC_SYNC_NONE, .fixed_tmp = true };

	if (lock < 0)
		return cc_err_sys(err, errno, CACHE_LOCK);
	if (flock(lock, LOCK_EX | LOCK_NB) < 0)
		return cc_err_sys(err, errno, "another process is writing " CC_TOPO_CACHE_FILE);
	return cc_replace_at(dirfd, CC_TOPO_CACHE_FILE, text, strlen(text), &o, err) < 0 ? -1 : 0;
}

/* Append a reason to info->why ("absent; not stored: ..."). */
static void why(struct cc_topo_cache_info *info, const char *what, const struct cc_err *e)
{
	size_t n = strlen(info->why);
	const char *msg = e && e->msg[0] ? e->msg : "";

	snprintf(info->why + n, sizeof(info->why) - n, "%s%s%s%s", n ? "; " : "", what,
		 *what && *msg ? ": " : "", msg);
}

struct cc_topo *cc_topo_cache_load(const struct cc_topo_source *src, const char *dir,
				   struct cc_topo_cache_info *info, struct cc_err *err)
{
	struct cc_topo_cache_info scratch;
	struct cc_err e = CC_ERR_INIT;
	_cleanup_free_ char *stamp = NULL, *text = NULL, *out = NULL;
	_cleanup_close_ int dirfd = -1;
	struct cc_topo *t;
	size_t len = 0;

	if (!info)
		info = &scratch;
	memset(info, 0, sizeof(*info));
	stamp = cc_topo_stamp(src, &e);
	if (!stamp) {
		why(info, "", &e);
		return cc_topo_load(src, err);
	}
	dirfd = open_dir(dir ? dir : CC_LEDGER_DIR, &e);
	if (dirfd < 0) {
		why(info, "state directory", &e);
		return cc_topo_load(src, err);
	}
	text = read_cache(dirfd, &len, &e);
	if (text) {
		t = cc_topo_deserialize(text, len, stamp, &e);
		if (t) {
			info->hit = true;
			return t;
		}
		why(info, e.code == ESTALE ? "stale" : "unusable", &e);
	} else {
		why(info, e.code == ENOENT ? "absent" : "unreadable", e.code == ENOENT ? NULL : &e);
	}

	t = cc_topo_load(src, err);
	if (!t)
		return NULL;
	cc_err_clear(&e);
	out = cc_topo_serialize(t, stamp, &e);
	if (out && store(dirfd, out, &e) == 0)
		info->stored = true;
	else
		why(info, "not stored", &e);
	return t;
}
