/* irqbalance's environment file on disk, and the running daemon. */
#define _GNU_SOURCE
#include "irqbalance.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "cleanup.h"
#include "cpulist.h"
#include "fileio.h"
#include "systemctl.h"

/* CPUs irqbalance bans by itself when neither variable is set. */
static int read_autoban(const struct cc_root *root, hwloc_bitmap_t out, struct cc_err *err)
{
	static const char *const files[] = { "/sys/devices/system/cpu/isolated", "/sys/devices/system/cpu/nohz_full" };
	_cleanup_bitmap_ hwloc_bitmap_t b = hwloc_bitmap_alloc();

	if (!b)
		return cc_err_sys(err, ENOMEM, "irqbalance");
	hwloc_bitmap_zero(out);
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		struct cc_err e = CC_ERR_INIT;
		_cleanup_free_ char *s = cc_root_read(root, files[i], 4096, &e);
		const char *p;

		if (!s) {
			if (e.code == ENOENT)
				continue; /* a kernel without NO_HZ_FULL */
			*err = e;
			return -1;
		}
		/* Without nohz_full= on the command line, 6.x kernels print
		 * "%*pbl" of a NULL mask: "          (null)", padded. */
		p = s + strspn(s, " \t");
		if (!strcmp(p, "(null)"))
			continue;
		if (cc_cpulist_parse(p, b, files[i], err) < 0)
			return -1;
		hwloc_bitmap_or(out, out, b);
	}
	return 0;
}

/* The file corecarve manages, else the first that exists; "" when none:
 * irqbalance is not installed (or was removed meanwhile, taking the lines
 * to restore with it). */
static void find_file(const struct cc_root *root, const struct cc_irqbalance_rec *rec,
		      struct cc_irqbalance_pending *p)
{
	if (rec->active) {
		snprintf(p->file, sizeof(p->file), "%s", rec->file);
	} else {
		for (int i = 0; cc_irqbalance_files[i]; i++)
			if (cc_root_exists(root, cc_irqbalance_files[i])) {
				snprintf(p->file, sizeof(p->file), "%s", cc_irqbalance_files[i]);
				break;
			}
	}
	if (p->file[0] && !cc_root_exists(root, p->file))
		p->file[0] = '\0';
}

/* The file's directory, opened through the root; *base is its name. */
static int open_dir(const struct cc_root *root, const char *file, const char **base, struct cc_err *err)
{
	_cleanup_free_ char *dir = NULL;

	*base = strrchr(file, '/') + 1;
	dir = strndup(file, (size_t)(*base - file));
	if (!dir)
		return cc_err_sys(err, ENOMEM, "%s", file);
	return cc_root_openat(root, dir, O_RDONLY | O_DIRECTORY, 0, err);
}

/* The rename needs a writable directory; a file bind-mounted read-only on
 * its own shows the flag on the file only. */
static bool on_read_only_mount(int dfd, const char *base)
{
	_cleanup_close_ int fd = -1;
	struct statvfs sv;

	if (fstatvfs(dfd, &sv) == 0 && (sv.f_flag & ST_RDONLY))
		return true;
	fd = openat(dfd, base, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	return fd >= 0 && fstatvfs(fd, &sv) == 0 && (sv.f_flag & ST_RDONLY);
}

void cc_irqbalance_read_only(const struct cc_irqbalance_pending *p, struct cc_irqbalance_result *res)
{
	_cleanup_free_ char *list = p->list ? cc_cpulist_format(p->list) : NULL;

	res->read_only = true;
	res->file_written = false;
	if (p->next.active)
		snprintf(res->warning, sizeof(res->warning),
			 "%s is on a read-only file system: not rewritten, so irqbalance is not told to ban CPUs %.100s; "
			 "the IRQs are steered, but a running irqbalance may move them back (make %s writable, ban those "
			 "CPUs in the OS's own irqbalance configuration, or stop irqbalance)",
			 p->file, list && *list ? list : "?", p->file);
	else
		snprintf(res->warning, sizeof(res->warning),
			 "%s is on a read-only file system: corecarve's banned CPUs stay in it until it is writable "
			 "again (then `corecarve irq reconcile` puts the operator's lines back)",
			 p->file);
}

int cc_irqbalance_prepare(const struct cc_root *root, const struct cc_irqbalance_rec *rec,
			  hwloc_const_bitmap_t avoid, struct cc_irqbalance_pending *p, struct cc_err *err)
{
	_cleanup_free_ char *text = NULL;
	_cleanup_bitmap_ hwloc_bitmap_t autoban = hwloc_bitmap_alloc();

	memset(p, 0, sizeof(*p));
	cc_irqbalance_rec_init(&p->next);
	if (!autoban || !p->next.banned)
		return cc_err_sys(err, ENOMEM, "irqbalance");
	find_file(root, rec, p);
	if (!p->file[0])
		return 0;
	text = cc_root_read(root, p->file, CC_IRQBALANCE_FILE_MAX, err);
	if (!text || read_autoban(root, autoban, err) < 0)
		return -1;
	if (cc_irqbalance_render(text, rec, avoid, autoban, p, err) < 0)
		return -1;
	if (p->new_text) {
		struct cc_err ignored = CC_ERR_INIT;
		const char *base;
		_cleanup_close_ int dfd = open_dir(root, p->file, &base, &ignored);

		/* An unopenable directory is the write's to report. */
		p->read_only = dfd >= 0 && on_read_only_mount(dfd, base);
	}
	return 0;
}

/* ---- the file ------------------------------------------------------------- */

int cc_irqbalance_write(const struct cc_root *root, const struct cc_irqbalance_pending *p,
			struct cc_irqbalance_result *res, struct cc_err *err)
{
	_cleanup_free_ char *dir = NULL;
	_cleanup_close_ int dfd = -1;
	struct cc_replace o = { .sync = CC_SYNC_DIR_TRY, .hidden = true };
	struct cc_err e = CC_ERR_INIT;
	const char *base;
	struct stat st;

	snprintf(res->file, sizeof(res->file), "%s", p->file);
	if (!p->file[0] || !p->new_text)
		return 0;
	/* Nothing corecarve may change: the IRQs are steered all the same,
	 * and the caller says what irqbalance was not told. */
	if (p->read_only) {
		cc_irqbalance_read_only(p, res);
		return 0;
	}
	dfd = open_dir(root, p->file, &base, err);
	if (dfd < 0)
		return -1;
	dir = strndup(p->file, (size_t)(base - p->file));
	if (!dir)
		return cc_err_sys(err, ENOMEM, "%s", p->file);
	if (on_read_only_mount(dfd, base)) {
		cc_irqbalance_read_only(p, res);
		return 0;
	}
	if (fstatat(dfd, base, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return cc_err_sys(err, errno, "%s", p->file);
	/* Renaming over a link would replace the operator's link by a file. */
	if (!S_ISREG(st.st_mode))
		return cc_err_set(err, EINVAL, "%s: not a regular file (a symbolic link?); corecarve does not replace it",
				  p->file);
	/* The operator's file keeps its mode and owner. */
	o.like = &st;
	o.shown_dir = dir;
	if (cc_replace_at(dfd, base, p->new_text, strlen(p->new_text), &o, &e) < 0) {
		if (e.code == EROFS) {
			/* Remounted read-only since the check. */
			cc_irqbalance_read_only(p, res);
			return 0;
		}
		return cc_err_set(err, e.code, "%s", e.msg);
	}
	res->file_written = true;
	return 0;
}

/* ---- the daemon ------------------------------------------------------------- */

static bool is_irqbalance(const struct cc_root *root, long pid)
{
	struct cc_err e = CC_ERR_INIT;
	char path[64];
	_cleanup_free_ char *comm = NULL;

	snprintf(path, sizeof(path), "/proc/%ld/comm", pid);
	comm = cc_root_read(root, path, 256, &e);
	return comm && !strcmp(comm, "irqbalance");
}

/* "irqbalance<pid>.sock" in the socket directory, for a live irqbalance. */
static long find_socket(const struct cc_root *root, char *path, size_t len)
{
	struct cc_err e = CC_ERR_INIT;
	_cleanup_closedir_ DIR *d = cc_root_opendir(root, CC_IRQBALANCE_SOCKET_DIR, &e);
	struct dirent *de;

	if (!d)
		return 0;
	while ((de = readdir(d))) {
		char *end;
		long pid;

		if (strncmp(de->d_name, "irqbalance", 10) || !isdigit((unsigned char)de->d_name[10]))
			continue;
		pid = strtol(de->d_name + 10, &end, 10);
		if (strcmp(end, ".sock") || !is_irqbalance(root, pid))
			continue;
		snprintf(path, len, CC_IRQBALANCE_SOCKET_DIR "/%.100s", de->d_name);
		return pid;
	}
	return 0;
}

static long find_process(const struct cc_root *root)
{
	struct cc_err e = CC_ERR_INIT;
	_cleanup_closedir_ DIR *d = cc_root_opendir(root, "/proc", &e);
	struct dirent *de;

	if (!d)
		return 0;
	while ((de = readdir(d))) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);

		if (isdigit((unsigned char)de->d_name[0]) && !*end && is_irqbalance(root, pid))
			return pid;
	}
	return 0;
}

/* One message with our credentials: irqbalance only obeys uid 0 and reads
 * them from SCM_CREDENTIALS, as irqbalance-ui sends them. */
static int send_message(const char *path, const char *msg, struct cc_err *err)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	struct timeval tv = { .tv_sec = 2 };
	struct ucred cred = { .pid = getpid(), .uid = geteuid(), .gid = getegid() };
	union {
		char buf[CMSG_SPACE(sizeof(struct ucred))];
		struct cmsghdr align;
	} u;
	struct iovec iov = { .iov_base = (void *)msg, .iov_len = strlen(msg) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof(u.buf) };
	struct cmsghdr *c;
	_cleanup_close_ int fd = -1;

	if (strlen(path) >= sizeof(a.sun_path))
		return cc_err_set(err, ENAMETOOLONG, "%s: path too long", path);
	memcpy(a.sun_path, path, strlen(path) + 1);
	memset(&u, 0, sizeof(u));
	c = CMSG_FIRSTHDR(&mh);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_CREDENTIALS;
	c->cmsg_len = CMSG_LEN(sizeof(cred));
	memcpy(CMSG_DATA(c), &cred, sizeof(cred));
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return cc_err_sys(err, errno, "%s: socket", path);
	/* A daemon stuck elsewhere must not hold the hook. */
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0)
		return cc_err_sys(err, errno, "%s: connect", path);
	if (sendmsg(fd, &mh, MSG_NOSIGNAL) != (ssize_t)iov.iov_len)
		return cc_err_sys(err, errno ? errno : EIO, "%s: send", path);
	return 0;
}

/* systemd re-reads EnvironmentFile on a restart; --no-block so the hook
 * does not wait for the daemon's stop and start. */
static const char *const restart_opts[] = { "--no-block", "try-restart", NULL };
static const char *const restart_units[] = { "irqbalance.service", NULL };

static int restart_unit(struct cc_err *err)
{
	return cc_systemctl(restart_opts, restart_units, err);
}

int cc_irqbalance_restart_helper(struct cc_err *err)
{
	return cc_systemctl_helper_start(NULL, restart_opts, restart_units, err);
}

/* The path unit that runs `corecarve irq notify` when the file changes. */
static bool path_unit_enabled(const struct cc_root *root)
{
	static const char *const links[] = {
		"/etc/systemd/system/multi-user.target.wants/corecarve-irqbalance.path",
		"/etc/systemd/system/paths.target.wants/corecarve-irqbalance.path",
	};

	for (size_t i = 0; i < sizeof(links) / sizeof(links[0]); i++)
		if (cc_root_exists(root, links[i]))
			return true;
	return false;
}

void cc_irqbalance_notify(const struct cc_root *root, const struct cc_irqbalance_pending *p, bool talk,
			  struct cc_irqbalance_result *res)
{
	struct cc_err e = CC_ERR_INIT;
	_cleanup_free_ char *msg = NULL;
	char sock[128];

	if (!p->tell || !root->is_host)
		return;
	res->pid = (pid_t)find_socket(root, sock, sizeof(sock));
	if (!talk) {
		if (!res->pid)
			res->pid = (pid_t)find_process(root);
		if (!res->pid)
			return;
		if (path_unit_enabled(root))
			snprintf(res->action, sizeof(res->action),
				 "irqbalance (pid %d) is told by corecarve-irqbalance.path", (int)res->pid);
		else
			snprintf(res->warning, sizeof(res->warning),
				 "irqbalance (pid %d) still bans its old CPUs: enable corecarve-irqbalance.path, "
				 "or run `corecarve irq notify`", (int)res->pid);
		return;
	}
	msg = cc_irqbalance_message(p->list);
	if (res->pid && msg) {
		if (geteuid() != 0) {
			snprintf(res->warning, sizeof(res->warning), "irqbalance (pid %d) obeys only root", (int)res->pid);
			return;
		}
		if (send_message(sock, msg, &e) == 0) {
			snprintf(res->action, sizeof(res->action), "told irqbalance (pid %d): %s", (int)res->pid, msg);
			return;
		}
		snprintf(res->warning, sizeof(res->warning), "irqbalance (pid %d): %.200s", (int)res->pid, e.msg);
		cc_err_clear(&e);
	}
	if (!res->pid)
		res->pid = (pid_t)find_process(root);
	if (!res->pid)
		return; /* not running: the file is what its next start reads */
	if (!cc_systemd_booted(root)) {
		snprintf(res->warning, sizeof(res->warning),
			 "irqbalance (pid %d) has no control socket and systemd is not running: restart it to apply %s",
			 (int)res->pid, p->file);
		return;
	}
	if (restart_unit(&e) < 0) {
		snprintf(res->warning, sizeof(res->warning), "irqbalance (pid %d): %.200s", (int)res->pid, e.msg);
		return;
	}
	snprintf(res->action, sizeof(res->action), "restarted irqbalance.service (pid %d) to re-read %s",
		 (int)res->pid, p->file);
}

int cc_irqbalance_current(const struct cc_root *root, const struct cc_irqbalance_rec *rec,
			  struct cc_irqbalance_pending *p, struct cc_err *err)
{
	_cleanup_free_ char *text = NULL;
	_cleanup_bitmap_ hwloc_bitmap_t autoban = hwloc_bitmap_alloc();
	struct cc_irqbalance_rec ops;
	int r;

	memset(p, 0, sizeof(*p));
	cc_irqbalance_rec_init(&p->next);
	p->list = hwloc_bitmap_alloc();
	if (!p->list || !p->next.banned || !autoban)
		return cc_err_sys(err, ENOMEM, "irqbalance");
	if (rec->active) {
		snprintf(p->file, sizeof(p->file), "%s", rec->file);
		hwloc_bitmap_copy(p->list, rec->banned);
		p->tell = true;
		return 0;
	}
	/* Nothing of corecarve's: the operator's set, as irqbalance would
	 * read it at a restart. */
	find_file(root, rec, p);
	if (!p->file[0])
		return 0;
	text = cc_root_read(root, p->file, CC_IRQBALANCE_FILE_MAX, err);
	if (!text || read_autoban(root, autoban, err) < 0)
		return -1;
	cc_irqbalance_rec_init(&ops);
	snprintf(ops.file, sizeof(ops.file), "%s", p->file);
	r = cc_env_get(text, CC_IRQBALANCE_LIST, &ops.cpulist, NULL, err);
	if (r == 0)
		r = cc_env_get(text, CC_IRQBALANCE_MASK, &ops.cpus, NULL, err);
	if (r == 0)
		r = cc_irqbalance_base(&ops, autoban, p->list, err);
	cc_irqbalance_rec_fini(&ops);
	p->tell = r == 0;
	return r;
}
