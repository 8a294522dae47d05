/* corecarve exec: see exec.h. */
#define _GNU_SOURCE
#include "exec.h"

#include <errno.h>
#include <fcntl.h>
#include <numaif.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "affinity.h"
#include "cgroup.h"
#include "cleanup.h"
#include "container.h"
#include "cpulist.h"
#include "fileio.h"

/* ---- the decision ---------------------------------------------------------- */

/* Keep whole cores of `pool`: under isolate the lowest thread of each core
 * whose online threads are all in the pool, under full all of them. */
static int whole_cores(const struct cc_topo *t, hwloc_bitmap_t pool, enum cc_smt smt)
{
	_cleanup_bitmap_ hwloc_bitmap_t keep = hwloc_bitmap_alloc();

	if (!keep)
		return -1;
	for (int i = 0; i < t->ncores; i++) {
		const struct cc_core *c = &t->cores[i];

		if (!c->pus || c->npus <= 0 || !hwloc_bitmap_isincluded(c->pus, pool))
			continue;
		if (smt == CC_SMT_ISOLATE)
			hwloc_bitmap_set(keep, (unsigned)hwloc_bitmap_first(c->pus));
		else
			hwloc_bitmap_or(keep, keep, c->pus);
	}
	return hwloc_bitmap_copy(pool, keep);
}

/* The NUMA nodes (OS numbers) of `cpus`. */
static void nodes_of(const struct cc_topo *t, hwloc_const_bitmap_t cpus, hwloc_bitmap_t out)
{
	int cpu;

	hwloc_bitmap_zero(out);
	hwloc_bitmap_foreach_begin(cpu, cpus)
	{
		int pu = cc_topo_pu_index(t, cpu);

		if (pu >= 0 && t->pus[pu].numa >= 0)
			hwloc_bitmap_set(out, (unsigned)t->numa[t->pus[pu].numa].os);
	}
	hwloc_bitmap_foreach_end();
}

int cc_exec_place(const struct cc_topo *t, const struct cc_policy *p, hwloc_const_bitmap_t taken,
		  const char *class_name, int cpus, struct cc_decision *out, struct cc_err *err)
{
	const struct cc_pclass *pc = cc_policy_class(p, class_name);
	/* A shallow copy: the allocator only reads the policy, and this
	 * command takes nothing from the shared pool, so minShared does not
	 * apply to it. */
	struct cc_policy q = *p;
	_cleanup_free_ struct cc_pclass *classes = NULL;
	struct cc_request req = { .cpus = cpus > 0 ? cpus : 1 };
	bool whole_pool = cpus <= 0 && pc && pc->exclusive;

	memset(out, 0, sizeof(*out));
	if (snprintf(req.class_name, sizeof(req.class_name), "%s", class_name) >= (int)sizeof(req.class_name))
		return cc_err_set(err, EINVAL, "--class: name longer than %zu characters", sizeof(req.class_name) - 1);
	q.min_shared = 0;
	q.min_shared_share = false;
	if (whole_pool) {
		/* "Every free CPU of the class" is the shared pool the allocator
		 * hands a non-exclusive class: ask it for that. */
		classes = malloc((size_t)p->nclasses * sizeof(*classes));
		if (!classes)
			return cc_err_sys(err, ENOMEM, "exec");
		memcpy(classes, p->classes, (size_t)p->nclasses * sizeof(*classes));
		classes[pc - p->classes].exclusive = false;
		q.classes = classes;
	}
	if (cc_allocate(t, &q, taken, &req, out, err) < 0)
		return -1;
	out->exclusive = false;
	if (!whole_pool)
		return 0;
	/* The pool counts threads; the class wants whole cores. */
	out->nwarnings = 0;
	if (whole_cores(t, out->cpus, out->smt) < 0) {
		cc_decision_fini(out);
		return cc_err_sys(err, ENOMEM, "exec");
	}
	if (hwloc_bitmap_iszero(out->cpus)) {
		cc_decision_fini(out);
		return cc_err_set(err, ENOSPC, "class %s: no whole %s core is free (every one has a reserved or carved thread)",
				  class_name, pc->core_type);
	}
	if (out->memory == CC_MEM_LOCAL)
		nodes_of(t, out->cpus, out->mems);
	out->numa_nodes = hwloc_bitmap_weight(out->mems);
	return 0;
}

/* ---- this process ------------------------------------------------------------ */

int cc_exec_lock_affinity(struct cc_err *err)
{
	/* Block the syscall on every ABI this kernel can run, or a 32-bit
	 * (or x32) helper could still re-pin the process. */
	static const uint32_t extra_arches[] = {
#if defined(__x86_64__)
		SCMP_ARCH_X86, SCMP_ARCH_X32,
#elif defined(__aarch64__)
		SCMP_ARCH_ARM,
#endif
		0,
	};
	scmp_filter_ctx sc = seccomp_init(SCMP_ACT_ALLOW);
	int r;

	if (!sc)
		return cc_err_set(err, ENOMEM, "seccomp_init failed");
	for (int i = 0; extra_arches[i]; i++) {
		r = seccomp_arch_add(sc, extra_arches[i]);
		if (r < 0 && r != -EEXIST) {
			seccomp_release(sc);
			return cc_err_sys(err, -r, "seccomp_arch_add");
		}
	}
	/* Root keeps set-uid programs working (no no_new_privs); anyone else
	 * needs no_new_privs, which the kernel demands for an unprivileged
	 * filter. */
	if (geteuid() == 0)
		seccomp_attr_set(sc, SCMP_FLTATR_CTL_NNP, 0);
	/* The whole point: the command, its threads and its children cannot
	 * change any affinity (its own, or another process's through taskset
	 * -p), so nothing stacks a taskset on top of the cpuset or the CPU
	 * quota.  EPERM is what an unprivileged caller gets anyway, so
	 * programs already handle it. */
	r = seccomp_rule_add(sc, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(sched_setaffinity), 0);
	if (r == 0)
		r = seccomp_load(sc);
	seccomp_release(sc);
	if (r < 0)
		return cc_err_sys(err, -r, "--lock-affinity: loading the seccomp filter");
	return 0;
}

static int set_memory(hwloc_const_bitmap_t mems, enum cc_memory memory, struct cc_err *err)
{
	const size_t bits = 8 * sizeof(unsigned long);
	int last = hwloc_bitmap_last(mems), node;
	size_t nlongs = (size_t)last / bits + 1;
	_cleanup_free_ unsigned long *mask = calloc(nlongs, sizeof(*mask));
	_cleanup_free_ char *list = cc_cpulist_format(mems);
	int mode = memory == CC_MEM_SPREAD ? MPOL_INTERLEAVE : MPOL_BIND;

	if (!mask)
		return cc_err_sys(err, ENOMEM, "memory policy");
	hwloc_bitmap_foreach_begin(node, mems)
	{
		mask[(size_t)node / bits] |= 1ul << ((size_t)node % bits);
	}
	hwloc_bitmap_foreach_end();
	/* libnuma's wrapper (numaif.h) returns the error; numa_set_membind()
	 * would print it itself and return nothing. */
	if (set_mempolicy(mode, mask, nlongs * bits + 1) == 0)
		return 0;
	/* A kernel without NUMA has one node: there is nothing to bind. */
	if (errno == ENOSYS && last == 0)
		return 0;
	return cc_err_sys(err, errno, "set_mempolicy(%s, nodes %s)", memory == CC_MEM_SPREAD ? "interleave" : "bind",
			  list ? list : "?");
}

int cc_exec_apply_self(const struct cc_exec_self *self, struct cc_err *err)
{
	if (self->cpus && !hwloc_bitmap_iszero(self->cpus) && cc_affinity_set(0, self->cpus, err) < 0)
		return -1;
	if (self->memory != CC_MEM_ANY && self->mems && !hwloc_bitmap_iszero(self->mems) &&
	    set_memory(self->mems, self->memory, err) < 0)
		return -1;
	if (self->lock_affinity && cc_exec_lock_affinity(err) < 0)
		return -1;
	return 0;
}

/* ---- a carved command ----------------------------------------------------------- */

/* What the child sends back when it could not exec: the errno, then the
 * message. */
struct report {
	int code;
	char msg[CC_ERR_MSG_MAX];
};

static ssize_t read_full(int fd, void *buf, size_t len)
{
	size_t n = 0;

	while (n < len) {
		ssize_t r = read(fd, (char *)buf + n, len - n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		if (r == 0)
			break;
		n += (size_t)r;
	}
	return (ssize_t)n;
}

/* The child: wait for the parent's "go" (memory mode, CPUs, nodes), apply
 * them, exec.  EOF without "go" means the carve was refused. */
static __attribute__((noreturn)) void child(int go, int report, char *const argv[], bool lock,
					    const sigset_t *mask)
{
	char *msg = NULL;
	size_t cap = 0;
	FILE *in = fdopen(go, "r");
	struct report rep = { 0 };
	struct cc_err e = CC_ERR_INIT;
	_cleanup_bitmap_ hwloc_bitmap_t cpus = hwloc_bitmap_alloc();
	_cleanup_bitmap_ hwloc_bitmap_t mems = hwloc_bitmap_alloc();
	char *sp1, *sp2;
	int memory;

	/* The parent's signal mask was for its setup; the command gets the
	 * caller's (a Ctrl-C held back meanwhile is delivered now). */
	sigprocmask(SIG_SETMASK, mask, NULL);
	if (!in || getline(&msg, &cap, in) <= 0 || !cpus || !mems)
		_exit(125);
	/* "<memory> <cpus> <mems>\n", empty lists as "-" */
	msg[strcspn(msg, "\n")] = '\0';
	sp1 = strchr(msg, ' ');
	sp2 = sp1 ? strchr(sp1 + 1, ' ') : NULL;
	if (!sp2)
		_exit(125);
	*sp1++ = '\0';
	*sp2++ = '\0';
	memory = atoi(msg);
	if ((strcmp(sp1, "-") && cc_cpulist_parse(sp1, cpus, "cpus", &e) < 0) ||
	    (strcmp(sp2, "-") && cc_cpulist_parse(sp2, mems, "mems", &e) < 0))
		_exit(125);
	fclose(in);
	{
		struct cc_exec_self self = { cpus, mems, (enum cc_memory)memory, lock };

		if (cc_exec_apply_self(&self, &e) < 0) {
			rep.code = e.code ? e.code : EINVAL;
			snprintf(rep.msg, sizeof(rep.msg), "%s", e.msg);
			/* Unreported, the exit status still says it failed. */
			(void)cc_write_all(report, &rep, sizeof(rep));
			_exit(125);
		}
	}
	execvp(argv[0], argv);
	rep.code = errno;
	snprintf(rep.msg, sizeof(rep.msg), "%s: %s", argv[0], strerror(errno));
	(void)cc_write_all(report, &rep, sizeof(rep));
	/* The shell's convention: 127 not found, 126 found but not runnable. */
	_exit(rep.code == ENOENT ? 127 : 126);
}

static volatile sig_atomic_t forward_pid;

static void forward(int sig)
{
	if (forward_pid > 0)
		kill((pid_t)forward_pid, sig);
}

static int wait_child(pid_t pid, int *status, const sigset_t *mask)
{
	struct sigaction fw = { .sa_handler = forward }, ign = { .sa_handler = SIG_IGN };
	struct sigaction old_term, old_hup, old_int, old_quit;
	pid_t r;

	sigemptyset(&fw.sa_mask);
	forward_pid = pid;
	sigaction(SIGTERM, &fw, &old_term);
	sigaction(SIGHUP, &fw, &old_hup);
	/* Ctrl-C and Ctrl-\ reach the whole foreground group: the command
	 * decides what they mean, and we stay to release the carve. */
	sigaction(SIGINT, &ign, &old_int);
	sigaction(SIGQUIT, &ign, &old_quit);
	/* Signals that came during the setup are handled from here on. */
	sigprocmask(SIG_SETMASK, mask, NULL);
	do
		r = waitpid(pid, status, 0);
	while (r < 0 && errno == EINTR);
	sigaction(SIGTERM, &old_term, NULL);
	sigaction(SIGHUP, &old_hup, NULL);
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGQUIT, &old_quit, NULL);
	forward_pid = 0;
	return r < 0 ? -1 : 0;
}

/* Stop a child that never got its "go" and reap it. */
static void abort_child(pid_t pid)
{
	int st;

	kill(pid, SIGKILL);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
}

/* What cc_exec_carved refuses before it forks: the carve it is asked for
 * must be one it can make on this host.  Fills req's class name. */
static int check_request(const struct cc_ctx *ctx, const struct cc_exec_carve *opt, const char *parent,
			 struct cc_request *req, struct cc_err *err)
{
	if (!ctx->root->is_host)
		return cc_err_set(err, EPERM, "exec --carve acts on this host: the root must be \"/\"");
	if (opt->cpus < 1)
		return cc_err_set(err, EINVAL, "--cpus: a carve needs a size, e.g. --cpus 2");
	if (snprintf(req->class_name, sizeof(req->class_name), "%s", opt->class_name) >= (int)sizeof(req->class_name))
		return cc_err_set(err, EINVAL, "--class: name longer than %zu characters", sizeof(req->class_name) - 1);
	if (!cc_cgroup_path_safe(parent) || !strcmp(parent, "/"))
		return cc_err_set(err, EINVAL, "--cgroup-parent: \"%s\" is not an absolute cgroup path below the root",
				  parent);
	return 0;
}

/* Put the waiting child `pid` into its own cgroup below `parent` and carve
 * it.  The child is in the cgroup before the carve is recorded, so the
 * carve is never seen without a process (that is what gc reclaims).  On
 * failure the child is killed and its cgroup removed. */
static int carve_child(const struct cc_ctx *ctx, struct cc_cg *cg, const char *parent, pid_t pid,
		       struct cc_carve_spec *spec, struct cc_create_result *res, struct cc_err *err)
{
	struct cc_err step = CC_ERR_INIT;
	char pidstr[32];

	snprintf(pidstr, sizeof(pidstr), "%d", (int)pid);
	if (cc_cg_mkdir(cg, parent, err) < 0 || cc_cg_mkdir(cg, spec->cgroup, err) < 0) {
		abort_child(pid);
		return -1;
	}
	if (cc_cg_write(cg, spec->cgroup, "cgroup.procs", pidstr, NULL, err) < 0 ||
	    cc_carve_create(ctx, spec, res, err) < 0) {
		abort_child(pid);
		cc_cg_rmdir(cg, spec->cgroup, &step);
		return -1;
	}
	return 0;
}

/* Tell the carved child its CPUs and memory nodes on `*go_w` (closed
 * after), then wait for the command to end: 0 and *status when it ran, -1
 * when it could not be started (the child's report on `rep_r`) or waited
 * for. */
static int run_child(const struct cc_ctx *ctx, int *go_w, int rep_r, pid_t pid, const char *id, const char *cgroup,
		     const struct cc_create_result *res, int *status, const sigset_t *mask, struct cc_err *err)
{
	_cleanup_free_ char *cpus = cc_cpulist_format(res->decision.cpus);
	_cleanup_free_ char *mems = cc_cpulist_format(res->decision.mems);
	struct report report = { 0 };
	char *msg = NULL;
	ssize_t n;

	if (ctx->verbose && ctx->log && cpus && mems) {
		_cleanup_free_ char *parked = cc_cpulist_format(res->decision.parked);

		fprintf(ctx->log, "corecarve: %s: class %s on %s cpus %s parked %s mems %s (%s) in %s\n", id,
			res->decision.class_name, res->decision.core_class, cpus, parked && *parked ? parked : "-",
			*mems ? mems : "-", res->carved ? res->mode : "shared, not carved", cgroup);
	}
	if (!cpus || !mems || asprintf(&msg, "%d %s %s\n", (int)res->decision.memory, *cpus ? cpus : "-",
				      *mems ? mems : "-") < 0) {
		cc_err_sys(err, ENOMEM, "exec");
		abort_child(pid);
		return -1;
	}
	/* Unwritten, the child reads EOF and does not run the command. */
	(void)cc_write_all(*go_w, msg, strlen(msg));
	free(msg);
	close(*go_w);
	*go_w = -1;
	/* EOF: the command exec'd (close-on-exec); data: it could not. */
	n = read_full(rep_r, &report, sizeof(report));
	if (wait_child(pid, status, mask) < 0)
		return cc_err_sys(err, errno, "exec: waitpid");
	if (n == (ssize_t)sizeof(report))
		return cc_err_set(err, report.code, "%s", report.msg);
	return 0;
}

/* Whatever the command left behind dies with the carve: its CPUs are
 * handed back now.  Every step runs; the first failure is reported unless
 * err already holds one. */
static int release_child(const struct cc_ctx *ctx, struct cc_cg *cg, const char *cgroup, const char *id,
			 struct cc_err *err)
{
	struct cc_err step = CC_ERR_INIT;
	int rc = 0;

	if (cc_cg_empty(cg, cgroup, &step) < 0 && !cc_err_isset(err))
		*err = step, rc = -1;
	cc_err_clear(&step);
	if (cc_container_release(ctx, id, "exec", &step) < 0 && !cc_err_isset(err))
		*err = step, rc = -1;
	cc_err_clear(&step);
	if (cc_cg_rmdir(cg, cgroup, &step) < 0 && !cc_err_isset(err))
		*err = step, rc = -1;
	return rc;
}

int cc_exec_carved(const struct cc_ctx *ctx, const struct cc_exec_carve *opt, char *const argv[],
		   int *status, struct cc_create_result *res, struct cc_err *err)
{
	const char *parent = opt->cgroup_parent ? opt->cgroup_parent : CC_EXEC_CGROUP_PARENT;
	int go[2] = { -1, -1 }, rep[2] = { -1, -1 };
	struct cc_request req = { .cpus = opt->cpus };
	struct cc_carve_spec spec = { .kind = "exec", .req = &req };
	char cgroup[PATH_MAX], id[64];
	_cleanup_cg_ struct cc_cg cg = CC_CG_INIT;
	sigset_t stop, mask;
	bool signals_blocked = false;
	pid_t pid;
	int rc = -1;

	*status = -1;
	memset(res, 0, sizeof(*res));
	if (check_request(ctx, opt, parent, &req, err) < 0)
		return -1;
	if (cc_cg_open(&cg, ctx->root, err) < 0)
		return -1;
	if (pipe2(go, O_CLOEXEC) < 0 || pipe2(rep, O_CLOEXEC) < 0) {
		cc_err_sys(err, errno, "exec: pipe");
		goto close_fds;
	}
	/* Held back until the carve is made and the command can get them:
	 * killed half-way, corecarve would leave the carve to gc. */
	sigemptyset(&stop);
	sigaddset(&stop, SIGTERM);
	sigaddset(&stop, SIGHUP);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGQUIT);
	sigprocmask(SIG_BLOCK, &stop, &mask);
	signals_blocked = true;
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		cc_err_sys(err, errno, "exec: fork");
		goto close_fds;
	}
	if (pid == 0) {
		close(go[1]);
		close(rep[0]);
		child(go[0], rep[1], argv, opt->lock_affinity, &mask);
	}
	close(go[0]);
	close(rep[1]);
	go[0] = rep[1] = -1;

	snprintf(cgroup, sizeof(cgroup), "%s/exec-%d", parent, (int)pid);
	snprintf(id, sizeof(id), "exec:%d", (int)pid);
	spec.id = id;
	spec.cgroup = cgroup;
	if (carve_child(ctx, &cg, parent, pid, &spec, res, err) < 0)
		goto close_fds;
	rc = run_child(ctx, &go[1], rep[0], pid, id, cgroup, res, status, &mask, err);
	if (release_child(ctx, &cg, cgroup, id, err) < 0)
		rc = -1;
close_fds:
	for (int i = 0; i < 2; i++) {
		if (go[i] >= 0)
			close(go[i]);
		if (rep[i] >= 0)
			close(rep[i]);
	}
	if (signals_blocked)
		sigprocmask(SIG_SETMASK, &mask, NULL);
	return rc;
}
