/* corecarve: finding a VM's QEMU process and its threads (vm.h).  Every
 * path goes through the root, so a captured /proc tree reads the same. */
#define _GNU_SOURCE
#include "vm.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgroup.h"
#include "cleanup.h"
#include "cpulist.h"
#include "fileio.h"
#include "oci.h"

#define CMDLINE_MAX (256u << 10)

static void thread_fini(struct cc_vm_thread *t)
{
	hwloc_bitmap_free(t->affinity);
	hwloc_bitmap_free(t->cg_cpus);
	hwloc_bitmap_free(t->cg_mems);
	memset(t, 0, sizeof(*t));
}

void cc_vm_proc_fini(struct cc_vm_proc *p)
{
	for (int i = 0; i < p->nvcpus; i++)
		thread_fini(&p->vcpus[i]);
	for (int i = 0; i < p->nemu; i++)
		thread_fini(&p->emu[i]);
	free(p->vcpus);
	free(p->emu);
	memset(p, 0, sizeof(*p));
}

/* ---- pure parsing ---------------------------------------------------------- */

int cc_vm_qemu_name(const char *value, char *out, size_t outlen)
{
	/* QEMU's option syntax: comma-separated, ",," a literal comma; the
	 * first element without "=" is the implied key, here guest. */
	bool first = true, found = false;
	const char *p = value;

	for (;;) {
		char elem[1024];
		size_t n = 0;
		const char *eq;

		while (*p && !(*p == ',' && p[1] != ',')) {
			if (*p == ',')
				p++; /* ",," */
			if (n + 1 >= sizeof(elem))
				return -1;
			elem[n++] = *p++;
		}
		elem[n] = '\0';
		eq = strchr(elem, '=');
		if ((first && !eq) || (eq && eq - elem == 5 && !strncmp(elem, "guest", 5))) {
			const char *v = eq ? eq + 1 : elem;
			size_t len = strlen(v);

			if (!len || len >= outlen)
				return -1;
			memcpy(out, v, len + 1);
			found = true;
		}
		first = false;
		if (!*p)
			break;
		p++;
	}
	return found ? 0 : -1;
}

int cc_vm_vcpu_of_comm(const char *comm, char *accel)
{
	char *end;
	long v;

	/* QEMU (debug-threads=on) names vCPU threads "CPU %d/%s" with the
	 * accelerator's name; comm is cut to 15 bytes, enough for "CPU 9999/KVM". */
	if (strncmp(comm, "CPU ", 4) || !isdigit((unsigned char)comm[4]) ||
	    (comm[4] == '0' && isdigit((unsigned char)comm[5])))
		return -1;
	errno = 0;
	v = strtol(comm + 4, &end, 10);
	if (errno || v >= CC_CPU_LIMIT || *end != '/' || (strcmp(end + 1, "KVM") && strcmp(end + 1, "TCG")))
		return -1;
	if (accel)
		snprintf(accel, 8, "%s", end + 1);
	return (int)v;
}

/* ---- reading /proc ------------------------------------------------------------- */

static bool vanished(int code)
{
	/* A process or thread that exits while it is read: its directory is
	 * gone (ENOENT) or its files answer ESRCH. */
	return code == ENOENT || code == ESRCH;
}

/* /proc/<pid>/cmdline with its NUL separators; *len bytes, the first
 * CMDLINE_MAX bytes of a longer one. */
static char *read_cmdline(const struct cc_root *root, pid_t pid, size_t *len, struct cc_err *err)
{
	char path[64];
	_cleanup_close_ int fd = -1;
	char *buf = NULL;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	fd = cc_root_openat(root, path, O_RDONLY, 0, err);
	if (fd < 0 || cc_read_fd(fd, path, CMDLINE_MAX, CC_READ_TRUNCATE, &buf, len, err) < 0)
		return NULL;
	return buf;
}

/* The argument after "-name"/"--name" names `want`; the program is QEMU. */
static bool cmdline_is_qemu(const char *cmd, size_t len)
{
	const char *slash = len ? strrchr(cmd, '/') : NULL;
	const char *base = slash ? slash + 1 : cmd;

	return len && !strncmp(base, "qemu", 4);
}

static bool cmdline_names(const char *cmd, size_t len, const char *want)
{
	for (size_t i = 0; i < len;) {
		const char *a = cmd + i;
		size_t alen = strnlen(a, len - i);

		i += alen + 1;
		if ((!strcmp(a, "-name") || !strcmp(a, "--name")) && i < len) {
			char name[PATH_MAX];

			return cc_vm_qemu_name(cmd + i, name, sizeof(name)) == 0 && !strcmp(name, want);
		}
	}
	return false;
}

/* ---- which QEMU is a VM --------------------------------------------------- */

/* The QEMU executables distributions install (Debian/Ubuntu and Fedora
 * qemu-system-<arch>, RHEL's qemu-kvm, Debian's kvm wrapper): a QEMU a user
 * built or copied elsewhere is not a VM corecarve pins. */
static const char *const qemu_exes[] = { "/usr/bin/qemu-system-*", "/usr/libexec/qemu-kvm", "/usr/bin/kvm", NULL };

/* The accounts a VM's QEMU may run as: root, and libvirt's QEMU user
 * (libvirt-qemu on Debian and Ubuntu, qemu on Fedora and RHEL), looked up
 * in the root's /etc/passwd so that a captured tree answers for itself. */
struct vm_owners {
	uid_t uid[3];
	int n;
};

static void owners_load(const struct cc_root *root, struct vm_owners *o)
{
	struct cc_err e = CC_ERR_INIT;
	int fd = cc_root_openat(root, "/etc/passwd", O_RDONLY | O_CLOEXEC, 0, &e);
	FILE *f = fd >= 0 ? fdopen(fd, "re") : NULL;
	struct passwd *pw;

	o->uid[0] = 0;
	o->n = 1;
	if (!f) {
		if (fd >= 0)
			close(fd);
		return; /* no passwd: root alone */
	}
	while ((pw = fgetpwent(f)) && o->n < 3)
		if ((!strcmp(pw->pw_name, "libvirt-qemu") || !strcmp(pw->pw_name, "qemu")) && pw->pw_uid != 0)
			o->uid[o->n++] = pw->pw_uid;
	fclose(f);
}

static bool owner_ok(const struct vm_owners *o, unsigned long uid)
{
	for (int i = 0; i < o->n; i++)
		if (uid == (unsigned long)o->uid[i])
			return true;
	return false;
}

/* Real, effective, saved and filesystem uid of /proc/<pid>/status: every
 * one must be an allowed owner (the owner of /proc/<pid> itself is root
 * for any process that made itself non-dumpable). 1 ok, 0 not (why). */
static int check_owner(const struct cc_root *root, const struct vm_owners *o, pid_t pid, char *why, size_t whylen,
		       struct cc_err *err)
{
	char path[64];
	_cleanup_free_ char *s = NULL;
	const char *line;
	unsigned long uid[4];

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	s = cc_root_read(root, path, 65536, err);
	if (!s)
		return -1;
	line = strstr(s, "\nUid:");
	if (!line || sscanf(line + 5, "%lu %lu %lu %lu", &uid[0], &uid[1], &uid[2], &uid[3]) != 4)
		return cc_err_set(err, EINVAL, "%s: no Uid line", path);
	for (int i = 0; i < 4; i++)
		if (!owner_ok(o, uid[i])) {
			snprintf(why, whylen, "runs as uid %lu (a VM's QEMU runs as root or libvirt's QEMU user)", uid[i]);
			return 0;
		}
	return 1;
}

/* /proc/<pid>/exe in the allow-list (a binary upgraded under a running
 * QEMU reads "PATH (deleted)": PATH is what counts, only root writes it). */
static int check_exe(const struct cc_root *root, pid_t pid, char *why, size_t whylen, struct cc_err *err)
{
	char path[64], exe[PATH_MAX];
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	if (cc_root_readlink(root, path, exe, sizeof(exe), err) < 0) {
		if (err->code != EACCES && err->code != EPERM)
			return -1;
		cc_err_clear(err);
		snprintf(why, whylen, "its executable cannot be read");
		return 0;
	}
	n = strlen(exe);
	if (n > 10 && !strcmp(exe + n - 10, " (deleted)"))
		exe[n - 10] = '\0';
	for (int i = 0; qemu_exes[i]; i++)
		if (!fnmatch(qemu_exes[i], exe, FNM_PATHNAME))
			return 1;
	snprintf(why, whylen, "runs %.200s, not an installed QEMU (/usr/bin/qemu-system-*, /usr/libexec/qemu-kvm, /usr/bin/kvm)",
		 exe);
	return 0;
}

/* A cgroup a container runtime made: Kubernetes' kubepods*, podman's
 * libpod-* (under machine.slice, or libpod_parent), docker's, CRI-O's and
 * containerd's scopes.  A QEMU in there runs in a container, and a
 * container's author chooses its name: its threads are not pinned as a VM. */
static bool container_cgroup(const char *cg)
{
	static const char *const prefixes[] = { "kubepods", "libpod-", "libpod_parent", "docker-", "crio-",
						"cri-containerd-", NULL };

	for (const char *c = cg; c && *c; c = strchr(c, '/')) {
		c += *c == '/';
		for (int i = 0; prefixes[i]; i++)
			if (!strncmp(c, prefixes[i], strlen(prefixes[i])))
				return true;
		if (!strncmp(c, "docker/", 7) || !strcmp(c, "docker"))
			return true;
	}
	return false;
}

static int check_cgroup(const struct cc_root *root, pid_t pid, char *why, size_t whylen, struct cc_err *err)
{
	char path[64], cg[PATH_MAX];
	_cleanup_free_ char *text = NULL;
	struct cc_err e = CC_ERR_INIT;

	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	text = cc_root_read(root, path, 65536, err);
	if (!text)
		return -1;
	if (cc_proc_cgroup_parse(text, cg, sizeof(cg), &e) < 0)
		return 1; /* no cgroup v2 entry: in no runtime's v2 cgroup */
	if (container_cgroup(cg)) {
		snprintf(why, whylen, "runs in container cgroup %.200s", cg);
		return 0;
	}
	return 1;
}

/* Whether process `pid` may be a VM: QEMU by its command line, owned by
 * root or libvirt's QEMU user, an installed QEMU executable, in no
 * container's cgroup.  1 yes; 0 no (why says which); -1 error (err;
 * ENOENT/ESRCH: it exited). */
static int qemu_trusted(const struct cc_root *root, const struct vm_owners *o, pid_t pid, char *why,
			size_t whylen, struct cc_err *err)
{
	int r = check_owner(root, o, pid, why, whylen, err);

	if (r > 0)
		r = check_exe(root, pid, why, whylen, err);
	if (r > 0)
		r = check_cgroup(root, pid, why, whylen, err);
	return r;
}

/* Field 22 of /proc/<pid>/stat, after the command name in parentheses
 * (which may itself hold spaces and parentheses). */
static int read_start(const struct cc_root *root, pid_t pid, unsigned long long *start, struct cc_err *err)
{
	char path[64];
	_cleanup_free_ char *s = NULL;
	const char *p;
	int field = 2;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	s = cc_root_read(root, path, 4096, err);
	if (!s)
		return -1;
	p = strrchr(s, ')');
	if (!p)
		return cc_err_set(err, EINVAL, "%s: malformed (no command name)", path);
	p++;
	while (*p && field < 22) {
		while (*p == ' ')
			p++;
		field++;
		if (field == 22)
			break;
		p += strcspn(p, " ");
	}
	if (field != 22 || !isdigit((unsigned char)*p))
		return cc_err_set(err, EINVAL, "%s: malformed (no start time)", path);
	errno = 0;
	*start = strtoull(p, NULL, 10);
	if (errno)
		return cc_err_set(err, EINVAL, "%s: malformed start time", path);
	return 0;
}

static int read_affinity(const struct cc_root *root, pid_t pid, pid_t tid, hwloc_bitmap_t out, struct cc_err *err)
{
	char path[96];
	_cleanup_free_ char *s = NULL;
	const char *line;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/status", (int)pid, (int)tid);
	s = cc_root_read(root, path, 65536, err);
	if (!s)
		return -1;
	for (line = s; line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
		if (!strncmp(line, "Cpus_allowed_list:", 18)) {
			char list[CC_ERR_MSG_MAX / 4];
			const char *v = line + 18;
			size_t n;

			v += strspn(v, " \t");
			n = strcspn(v, "\n");
			if (n >= sizeof(list))
				return cc_err_set(err, EINVAL, "%s: Cpus_allowed_list too long", path);
			memcpy(list, v, n);
			list[n] = '\0';
			return cc_cpulist_parse(list, out, path, err);
		}
	}
	return cc_err_set(err, EINVAL, "%s: no Cpus_allowed_list", path);
}

/* The thread's libvirt cgroup: ".../vcpu<n>" for vCPU n, ".../emulator"
 * for the main thread (vcpu -1), with its cpuset files; none otherwise or
 * where cpuset is not enabled there. */
static int read_cgroup(const struct cc_root *root, pid_t pid, struct cc_vm_thread *t, struct cc_err *err)
{
	char path[96], want[32], file[PATH_MAX + 64];
	_cleanup_free_ char *text = NULL, *cpus = NULL, *mems = NULL;
	struct cc_err e = CC_ERR_INIT;
	const char *leaf;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/cgroup", (int)pid, (int)t->tid);
	text = cc_root_read(root, path, 65536, err);
	if (!text)
		return -1;
	/* No cgroup v2 entry (a v1-only host): no libvirt cgroup to keep in line. */
	if (cc_proc_cgroup_parse(text, t->cgroup, sizeof(t->cgroup), &e) < 0) {
		t->cgroup[0] = '\0';
		return 0;
	}
	if (t->vcpu >= 0)
		snprintf(want, sizeof(want), "/vcpu%d", t->vcpu);
	else
		snprintf(want, sizeof(want), "/emulator");
	leaf = strrchr(t->cgroup, '/');
	if (!leaf || strcmp(leaf, want) != 0) {
		t->cgroup[0] = '\0';
		return 0;
	}
	snprintf(file, sizeof(file), CC_CGROUP_MOUNT "%s/cpuset.cpus", t->cgroup);
	cpus = cc_root_read(root, file, 65536, &e);
	snprintf(file, sizeof(file), CC_CGROUP_MOUNT "%s/cpuset.mems", t->cgroup);
	mems = cpus ? cc_root_read(root, file, 65536, &e) : NULL;
	if (!cpus || !mems) {
		if (e.code == ENOENT) { /* cpuset is not enabled for it */
			t->cgroup[0] = '\0';
			return 0;
		}
		*err = e;
		return -1;
	}
	t->cg_cpus = hwloc_bitmap_alloc();
	t->cg_mems = hwloc_bitmap_alloc();
	if (!t->cg_cpus || !t->cg_mems)
		return cc_err_sys(err, ENOMEM, "cgroup");
	snprintf(file, sizeof(file), CC_CGROUP_MOUNT "%s/cpuset.cpus", t->cgroup);
	if (cc_cpulist_parse(cpus, t->cg_cpus, file, err) < 0)
		return -1;
	snprintf(file, sizeof(file), CC_CGROUP_MOUNT "%s/cpuset.mems", t->cgroup);
	return cc_cpulist_parse(mems, t->cg_mems, file, err);
}

/* Read one thread; 1 read, 0 vanished, -1 error. */
static int read_thread(const struct cc_root *root, pid_t pid, pid_t tid, struct cc_vm_thread *t, char *accel,
		       struct cc_err *err)
{
	char path[96];
	_cleanup_free_ char *comm = NULL;
	struct cc_err e = CC_ERR_INIT;

	memset(t, 0, sizeof(*t));
	t->tid = tid;
	snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", (int)pid, (int)tid);
	comm = cc_root_read(root, path, 256, &e);
	if (!comm)
		goto failed;
	t->vcpu = cc_vm_vcpu_of_comm(comm, accel);
	t->affinity = hwloc_bitmap_alloc();
	if (!t->affinity)
		return cc_err_sys(err, ENOMEM, "thread");
	if (read_affinity(root, pid, tid, t->affinity, &e) < 0)
		goto failed;
	/* Only the main thread of the emulator threads has its cgroup kept:
	 * the others are in the same one. */
	if ((t->vcpu >= 0 || tid == pid) && read_cgroup(root, pid, t, &e) < 0)
		goto failed;
	return 1;
failed:
	if (vanished(e.code)) {
		thread_fini(t);
		return 0;
	}
	*err = e;
	return -1;
}

/* The cgroup-v2 path of a thread, "" when it has none; 0, or -1 on error
 * (ENOENT/ESRCH: it exited). */
static int thread_cgroup(const struct cc_root *root, pid_t pid, pid_t tid, char *out, size_t len, struct cc_err *err)
{
	char path[96];
	_cleanup_free_ char *text = NULL;
	struct cc_err e = CC_ERR_INIT;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/cgroup", (int)pid, (int)tid);
	text = cc_root_read(root, path, 65536, err);
	if (!text)
		return -1;
	if (cc_proc_cgroup_parse(text, out, len, &e) < 0)
		out[0] = '\0';
	return 0;
}

/* Emulator threads outside the main thread's cgroup are libvirt's to pin. */
static int mark_foreign(const struct cc_root *root, struct cc_vm_proc *p, struct cc_err *err)
{
	char main_cg[PATH_MAX], cg[PATH_MAX];
	struct cc_err e = CC_ERR_INIT;

	if (thread_cgroup(root, p->pid, p->pid, main_cg, sizeof(main_cg), &e) < 0)
		return vanished(e.code) ? 0 : (*err = e, -1);
	for (int i = 0; i < p->nemu; i++) {
		if (p->emu[i].tid == p->pid)
			continue;
		cc_err_clear(&e);
		if (thread_cgroup(root, p->pid, p->emu[i].tid, cg, sizeof(cg), &e) < 0) {
			if (!vanished(e.code))
				return *err = e, -1;
			continue;
		}
		p->emu[i].foreign = strcmp(cg, main_cg) != 0;
	}
	return 0;
}

static int cmp_vcpu(const void *a, const void *b)
{
	const struct cc_vm_thread *x = a, *y = b;

	/* By tid within a vCPU: readdir's order is not the error's. */
	if (x->vcpu != y->vcpu)
		return (x->vcpu > y->vcpu) - (x->vcpu < y->vcpu);
	return (x->tid > y->tid) - (x->tid < y->tid);
}

static int cmp_emu(const void *a, const void *b)
{
	const struct cc_vm_thread *x = a, *y = b;

	return (x->tid > y->tid) - (x->tid < y->tid);
}

static bool all_digits(const char *s)
{
	return *s && strspn(s, "0123456789") == strlen(s) && strlen(s) < 10;
}

int cc_vm_read_proc(const struct cc_root *root, const char *name, pid_t pid, unsigned long long start,
		    struct cc_vm_proc *out, struct cc_err *err)
{
	struct cc_vm_proc p = { 0 };
	_cleanup_closedir_ DIR *d = NULL;
	struct cc_err e = CC_ERR_INIT;
	char path[64];
	struct dirent *de;
	int ntids = 0;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	snprintf(p.name, sizeof(p.name), "%s", name);
	p.pid = pid;
	if (read_start(root, pid, &p.start, &e) < 0) {
		if (vanished(e.code))
			return 0;
		*err = e;
		return -1;
	}
	if (start && p.start != start)
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = cc_root_opendir(root, path, &e);
	if (!d) {
		if (vanished(e.code))
			return 0;
		*err = e;
		return -1;
	}
	while ((de = readdir(d))) {
		struct cc_vm_thread t, *slot;
		struct cc_vm_thread **arr;
		int *cnt;
		int r;

		if (!all_digits(de->d_name))
			continue;
		if (++ntids > CC_VM_MAX_THREADS) {
			cc_err_set(err, E2BIG, "VM %s (pid %d): more than %d threads", name, (int)pid, CC_VM_MAX_THREADS);
			goto out;
		}
		r = read_thread(root, pid, (pid_t)atoi(de->d_name), &t, p.accel, err);
		if (r < 0)
			goto out;
		if (r == 0)
			continue;
		arr = t.vcpu >= 0 ? &p.vcpus : &p.emu;
		cnt = t.vcpu >= 0 ? &p.nvcpus : &p.nemu;
		slot = realloc(*arr, (size_t)(*cnt + 1) * sizeof(**arr));
		if (!slot) {
			thread_fini(&t);
			cc_err_sys(err, ENOMEM, "threads");
			goto out;
		}
		*arr = slot;
		slot[(*cnt)++] = t;
	}
	if (!p.nvcpus) {
		/* The main thread gone meanwhile: the process is. */
		if (!p.nemu) {
			rc = 0;
			goto out;
		}
		cc_err_set(err, ENOENT,
			   "VM %s (pid %d): no thread is named \"CPU <n>/KVM\" or \"CPU <n>/TCG\"; start QEMU with "
			   "-name %s,debug-threads=on (libvirt does)",
			   name, (int)pid, name);
		goto out;
	}
	qsort(p.vcpus, (size_t)p.nvcpus, sizeof(*p.vcpus), cmp_vcpu);
	qsort(p.emu, (size_t)p.nemu, sizeof(*p.emu), cmp_emu);
	if (mark_foreign(root, &p, err) < 0)
		goto out;
	for (int i = 1; i < p.nvcpus; i++)
		if (p.vcpus[i].vcpu == p.vcpus[i - 1].vcpu) {
			cc_err_set(err, EINVAL, "VM %s (pid %d): threads %d and %d are both vCPU %d", name, (int)pid,
				   (int)p.vcpus[i - 1].tid, (int)p.vcpus[i].tid, p.vcpus[i].vcpu);
			goto out;
		}
	*out = p;
	memset(&p, 0, sizeof(p));
	rc = 1;
out:
	cc_vm_proc_fini(&p);
	return rc;
}

/* A pid file: one decimal pid.  1 with *pid, 0 absent, -1 malformed. */
static int read_pidfile(const struct cc_root *root, const char *path, pid_t *pid, char *why, size_t whylen,
			struct cc_err *err)
{
	struct cc_err e = CC_ERR_INIT;
	_cleanup_free_ char *s = cc_root_read(root, path, 64, &e);
	long v;

	if (!s) {
		if (e.code == ENOENT) {
			snprintf(why, whylen, "no pid file %s", path);
			return 0;
		}
		*err = e;
		return -1;
	}
	if (!all_digits(s) || (s[0] == '0') || (v = atol(s)) <= 0 || v > 0x3fffffff)
		return cc_err_set(err, EINVAL, "%s: expected a process id, got \"%.32s\"", path, s);
	*pid = (pid_t)v;
	return 1;
}

/* The process a pid file names, when it is QEMU (and, for libvirt, the
 * domain's QEMU): a stale pid file names a dead or unrelated process. */
static int from_pidfile(const struct cc_root *root, const struct vm_owners *o, const struct cc_vm_spec *spec,
			const char *path, struct cc_vm_proc *out, char *why, size_t whylen, struct cc_err *err)
{
	struct cc_err e = CC_ERR_INIT;
	_cleanup_free_ char *cmd = NULL;
	char whynot[320] = "";
	size_t len = 0;
	pid_t pid = 0;
	int r = read_pidfile(root, path, &pid, why, whylen, err);

	if (r <= 0)
		return r;
	cmd = read_cmdline(root, pid, &len, &e);
	if (!cmd) {
		if (!vanished(e.code)) {
			*err = e;
			return -1;
		}
		snprintf(why, whylen, "%s names process %d, which is not running", path, (int)pid);
		return 0;
	}
	if (!cmdline_is_qemu(cmd, len) ||
	    (spec->find == CC_VM_FIND_LIBVIRT && !cmdline_names(cmd, len, spec->target))) {
		snprintf(why, whylen, "%s names process %d, which is not %s%s (a stale pid file)", path, (int)pid,
			 spec->find == CC_VM_FIND_LIBVIRT ? "the QEMU of domain " : "QEMU",
			 spec->find == CC_VM_FIND_LIBVIRT ? spec->target : "");
		return 0;
	}
	r = qemu_trusted(root, o, pid, whynot, sizeof(whynot), &e);
	if (r <= 0) {
		if (r < 0 && !vanished(e.code))
			return *err = e, -1;
		snprintf(why, whylen, "%s names process %d, which %s", path, (int)pid,
			 r < 0 ? "exited" : whynot);
		return 0;
	}
	r = cc_vm_read_proc(root, spec->name, pid, 0, out, err);
	if (r == 0)
		snprintf(why, whylen, "process %d of %s exited", (int)pid, path);
	return r;
}

static int by_name(const struct cc_root *root, const struct vm_owners *o, const struct cc_vm_spec *spec,
		   struct cc_vm_proc *out, char *why, size_t whylen, struct cc_err *err)
{
	_cleanup_closedir_ DIR *d = NULL;
	struct dirent *de;
	pid_t found[2] = { 0, 0 };
	char whynot[320] = "", untrusted[400] = "";
	int nfound = 0;
	int r;

	d = cc_root_opendir(root, "/proc", err);
	if (!d)
		return -1;
	while ((de = readdir(d))) {
		struct cc_err e = CC_ERR_INIT;
		_cleanup_free_ char *cmd = NULL;
		size_t len = 0;
		pid_t pid;

		if (!all_digits(de->d_name))
			continue;
		pid = (pid_t)atoi(de->d_name);
		cmd = read_cmdline(root, pid, &len, &e);
		if (!cmd) {
			/* Exited meanwhile, or not ours to read: not this VM. */
			if (vanished(e.code) || e.code == EACCES || e.code == EPERM)
				continue;
			*err = e;
			return -1;
		}
		if (!cmdline_is_qemu(cmd, len) || !cmdline_names(cmd, len, spec->target))
			continue;
		/* Anyone can start a process named qemu with this -name: only
		 * a trusted QEMU counts (nor can a user's one make the name
		 * ambiguous).  One that exits meanwhile is not this VM. */
		r = qemu_trusted(root, o, pid, whynot, sizeof(whynot), &e);
		if (r < 0 && !vanished(e.code))
			return *err = e, -1;
		if (r <= 0) {
			if (r == 0 && !untrusted[0])
				snprintf(untrusted, sizeof(untrusted), "process %d %s", (int)pid, whynot);
			continue;
		}
		if (nfound < 2)
			found[nfound] = pid;
		nfound++;
	}
	if (nfound > 1)
		return cc_err_set(err, EEXIST, "VM %s: %d QEMU processes are named %s (pids %d, %d%s); name one with pidfile",
				  spec->name, nfound, spec->target, (int)found[0], (int)found[1], nfound > 2 ? ", ..." : "");
	if (!nfound) {
		snprintf(why, whylen, "no QEMU named %s%s%s", spec->target, untrusted[0] ? "; left out: " : "",
			 untrusted);
		return 0;
	}
	r = cc_vm_read_proc(root, spec->name, found[0], 0, out, err);
	if (r == 0)
		snprintf(why, whylen, "QEMU %d named %s exited", (int)found[0], spec->target);
	return r;
}

int cc_vm_find(const struct cc_root *root, const struct cc_vm_spec *spec, struct cc_vm_proc *out, char *why,
	       size_t whylen, struct cc_err *err)
{
	char path[PATH_MAX + 64];
	struct vm_owners o;
	int r;

	memset(out, 0, sizeof(*out));
	why[0] = '\0';
	owners_load(root, &o);
	switch (spec->find) {
	case CC_VM_FIND_LIBVIRT:
		if (cc_path(path, sizeof(path), err, CC_VM_LIBVIRT_RUN "/%s.pid", spec->target) < 0)
			return -1;
		r = from_pidfile(root, &o, spec, path, out, why, whylen, err);
		break;
	case CC_VM_FIND_PIDFILE:
		r = from_pidfile(root, &o, spec, spec->target, out, why, whylen, err);
		break;
	default:
		r = by_name(root, &o, spec, out, why, whylen, err);
		break;
	}
	return r;
}
