/* corecarve audit: reading the node through the root.
 *
 * One pass over the cgroup tree, parents before children: each cgroup's
 * cpuset, partition, cpu.max and populated state (five or six small reads;
 * a file the kernel does not offer there is inherited from the parent),
 * plus cpuset.mems.effective of carved cgroups.  Then the threads of the
 * cgroups whose tasks the checks look at (inside a carve, or under a CFS
 * quota), /proc/irq, the /proc/interrupts sample, and kubelet's CPU
 * manager state.  Cost: O(cgroups + those tasks + IRQs). */
#define _GNU_SOURCE
#include "audit.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cgroup.h"
#include "cleanup.h"
#include "cpulist.h"
#include "oci.h"

struct walker {
	struct cc_cg cg;
	struct cc_audit_snap *s;
	json_t *carved; /* cgroup paths of the ledger's carves */
};

static void walker_fini(struct walker *w)
{
	cc_cg_close(&w->cg);
}

/* A control file, or NULL with err clear when the kernel does not offer
 * it there (no such controller, older kernel, the cgroup just went). */
static char *read_opt(const struct walker *w, const char *cgroup, const char *file, struct cc_err *err)
{
	char *v = cc_cg_read(&w->cg, cgroup, file, err);

	if (!v && (err->code == ENOENT || err->code == ENODEV)) {
		cc_err_clear(err);
		return NULL;
	}
	return v;
}

static int read_set(const struct walker *w, const char *cgroup, const char *file, hwloc_bitmap_t out,
		    bool *present, struct cc_err *err)
{
	_cleanup_free_ char *v = read_opt(w, cgroup, file, err);
	char what[PATH_MAX + 64];

	*present = v != NULL;
	if (!v)
		return cc_err_isset(err) ? -1 : 0;
	snprintf(what, sizeof(what), "%s/%s", cgroup, file);
	return cc_cpulist_parse(v, out, what, err);
}

static int read_cgroup(struct walker *w, int i, struct cc_err *err)
{
	struct cc_audit_cgroup *g = &w->s->cgroups[i];
	const struct cc_audit_cgroup *p = g->parent >= 0 ? &w->s->cgroups[g->parent] : NULL;
	_cleanup_free_ char *part = NULL;
	_cleanup_free_ char *max = NULL;
	_cleanup_free_ char *events = NULL;
	bool present;

	if (read_set(w, g->path, "cpuset.cpus.effective", g->effective, &present, err) < 0)
		return -1;
	if (!present && p)
		hwloc_bitmap_copy(g->effective, p->effective);
	if (read_set(w, g->path, "cpuset.cpus", g->cpus, &g->has_cpuset, err) < 0)
		return -1;
	g->exclusive = hwloc_bitmap_alloc();
	if (!g->exclusive)
		return cc_err_sys(err, ENOMEM, "audit");
	if (read_set(w, g->path, "cpuset.cpus.exclusive", g->exclusive, &present, err) < 0)
		return -1;
	if (!present) {
		hwloc_bitmap_free(g->exclusive);
		g->exclusive = NULL;
	}
	part = read_opt(w, g->path, "cpuset.cpus.partition", err);
	if (!part && cc_err_isset(err))
		return -1;
	snprintf(g->partition, sizeof(g->partition), "%s", part ? part : "");
	if (part && (!strncmp(part, "root", 4) || !strncmp(part, "isolated", 8))) {
		_cleanup_free_ char *sub = read_opt(w, g->path, "cgroup.subtree_control", err);

		if (!sub && cc_err_isset(err))
			return -1;
		g->delegates_cpuset = sub && strstr(sub, "cpuset");
	}
	max = read_opt(w, g->path, "cpu.max", err);
	if (!max && cc_err_isset(err))
		return -1;
	if (max && cc_cg_parse_cpu_max(max, &g->quota, &g->period) < 0)
		return cc_err_set(err, EINVAL, "%s/cpu.max: unexpected value \"%.32s\"", g->path, max);
	if (!p) {
		g->populated = true; /* the root holds every task nobody moved */
	} else {
		events = read_opt(w, g->path, "cgroup.events", err);
		if (!events && cc_err_isset(err))
			return -1;
		g->populated = events && strstr(events, "populated 1");
	}
	if (json_object_get(w->carved, g->path)) {
		g->mems = hwloc_bitmap_alloc();
		if (!g->mems)
			return cc_err_sys(err, ENOMEM, "audit");
		if (read_set(w, g->path, "cpuset.mems.effective", g->mems, &present, err) < 0)
			return -1;
	}
	return 0;
}

/* What this reader may not open: another owner's 0700 cgroup (the
 * DaemonSet's audit runs without capabilities). */
static bool denied(const struct cc_err *err)
{
	return err->code == EACCES || err->code == EPERM;
}

/* A cgroup (or one of its files) skipped with what is below it: anyone
 * who holds a delegated subtree can make one unreadable or nest it past
 * CC_AUDIT_DEPTH_MAX, and that must not fail the node's audit.  Counted,
 * the first one named (CGROUP_UNREADABLE). */
static int skip(struct walker *w, const char *path, int code, struct cc_err *err)
{
	cc_err_clear(err);
	if (w->s->unreadable++)
		return 0;
	w->s->unreadable_errno = code;
	w->s->unreadable_path = strdup(path);
	return w->s->unreadable_path ? 0 : cc_err_sys(err, ENOMEM, "audit");
}

static int walk(struct walker *w, int i, int depth, struct cc_err *err)
{
	_cleanup_closedir_ DIR *d = NULL;
	struct dirent *de;

	if (read_cgroup(w, i, err) < 0) {
		if (!denied(err) || depth == 0)
			return -1;
		if (skip(w, w->s->cgroups[i].path, err->code, err) < 0)
			return -1;
		/* Parents before children: a cgroup being read is the last
		 * one added, and nothing below it is in yet. */
		cc_audit_snap_drop_last(w->s);
		return 0;
	}
	d = cc_cg_opendir(&w->cg, w->s->cgroups[i].path, err);
	if (!d) {
		if (err->code == ENOENT && depth > 0) {
			cc_err_clear(err); /* removed while we read it */
			return 0;
		}
		/* Its files could be read, its children cannot be listed. */
		if (denied(err) && depth > 0)
			return skip(w, w->s->cgroups[i].path, err->code, err);
		return -1;
	}
	while ((errno = 0, de = readdir(d))) {
		char child[PATH_MAX];
		bool is_dir = de->d_type == DT_DIR;
		int c;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (de->d_type == DT_UNKNOWN) {
			struct stat st;

			is_dir = fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode);
		}
		if (!is_dir)
			continue;
		if (cc_path(child, sizeof(child), err, "%s/%s",
			    strcmp(w->s->cgroups[i].path, "/") ? w->s->cgroups[i].path : "", de->d_name) < 0)
			return -1;
		/* A name with control characters cannot be a carve (the hook
		 * refuses such paths) and cannot be quoted safely: skip it. */
		if (!cc_cgroup_path_safe(child))
			continue;
		if (depth + 1 > CC_AUDIT_DEPTH_MAX) {
			if (skip(w, child, ELOOP, err) < 0)
				return -1;
			continue;
		}
		c = cc_audit_snap_add_cgroup(w->s, child, i, err);
		if (c < 0 || walk(w, c, depth + 1, err) < 0)
			return -1;
	}
	if (errno)
		return cc_err_sys(err, errno, "%s: readdir", w->s->cgroups[i].path);
	return 0;
}

/* A thread's start time (0 when there is no stat: a capture keeps only
 * the status), which --fix compares before it re-pins the thread. */
static int read_start(const struct cc_root *root, int tid, unsigned long long *start, struct cc_err *err)
{
	_cleanup_free_ char *stat = NULL;
	char path[64];

	*start = 0;
	snprintf(path, sizeof(path), "/proc/%d/stat", tid);
	stat = cc_root_read(root, path, 0, err);
	if (!stat) {
		if (err->code != ENOENT && err->code != ESRCH)
			return -1;
		cc_err_clear(err);
		return 0;
	}
	if (cc_audit_parse_stat_start(stat, start, err) < 0)
		return cc_err_prefix(err, "%s", path);
	return 0;
}

int cc_audit_task_same(const struct cc_root *root, int tid, const char *cgroup, unsigned long long start,
		       struct cc_err *err)
{
	_cleanup_free_ char *text = NULL;
	unsigned long long now = 0;
	char path[64], cg[PATH_MAX];

	if (start == 0)
		return 0;
	if (read_start(root, tid, &now, err) < 0)
		return -1;
	if (now != start)
		return 0; /* gone (0), or the id was reused */
	snprintf(path, sizeof(path), "/proc/%d/cgroup", tid);
	text = cc_root_read(root, path, 0, err);
	if (!text) {
		if (err->code != ENOENT && err->code != ESRCH)
			return -1;
		cc_err_clear(err);
		return 0;
	}
	if (cc_proc_cgroup_parse(text, cg, sizeof(cg), err) < 0) {
		cc_err_clear(err); /* moved to a cgroup being removed: not ours to pin */
		return 0;
	}
	return !strcmp(cg, cgroup);
}

/* Threads of one cgroup and their affinity; threads that exit meanwhile
 * are skipped. */
static int read_tasks(struct walker *w, int i, const struct cc_root *root, struct cc_err *err)
{
	_cleanup_free_ char *list = read_opt(w, w->s->cgroups[i].path, "cgroup.threads", err);
	_cleanup_bitmap_ hwloc_bitmap_t aff = hwloc_bitmap_alloc();
	char *save = NULL;
	int hidden = w->s->hidden_tasks, unread = w->s->unread_tasks, nread = 0;

	if (!aff)
		return cc_err_sys(err, ENOMEM, "audit");
	if (!list && denied(err)) {
		char what[PATH_MAX + 32];

		snprintf(what, sizeof(what), "%s/cgroup.threads", w->s->cgroups[i].path);
		return skip(w, what, err->code, err);
	}
	if (!list)
		return cc_err_isset(err) ? -1 : 0;
	for (char *tok = strtok_r(list, "\n", &save); tok; tok = strtok_r(NULL, "\n", &save)) {
		_cleanup_free_ char *status = NULL;
		char path[64], *end;
		long tid = strtol(tok, &end, 10);

		if (*end || tid < 0 || tid > 0x7fffffffL)
			return cc_err_set(err, EINVAL, "%s/cgroup.threads: bad thread id \"%.16s\"",
					  w->s->cgroups[i].path, tok);
		/* The kernel lists threads outside the reader's PID namespace
		 * as 0 (an audit in a pod without the host's PIDs): there is
		 * no /proc entry to read their affinity from.  Counted, so
		 * the checks say they could not look instead of passing. */
		w->s->listed_tasks++;
		if (tid == 0) {
			if (!w->s->hidden_tasks++)
				w->s->hidden_at = i;
			continue;
		}
		/* Bounded: the time and memory of one cgroup's threads. */
		if (nread >= w->s->max_tasks) {
			if (!w->s->unread_tasks++)
				w->s->unread_at = i;
			continue;
		}
		nread++;
		snprintf(path, sizeof(path), "/proc/%ld/status", tid);
		status = cc_root_read(root, path, 0, err);
		if (!status) {
			if (err->code == ENOENT || err->code == ESRCH) {
				cc_err_clear(err);
				continue;
			}
			return -1;
		}
		if (cc_audit_parse_status_affinity(status, aff, err) < 0)
			return cc_err_prefix(err, "%s", path);
		if (cc_audit_snap_add_task(w->s, (int)tid, i, aff, err) < 0)
			return -1;
		if (read_start(root, (int)tid, &w->s->tasks[w->s->ntasks - 1].start, err) < 0)
			return -1;
	}
	w->s->hidden_cgroups += w->s->hidden_tasks > hidden;
	w->s->unread_cgroups += w->s->unread_tasks > unread;
	return 0;
}

static int read_kubelet(const struct cc_root *root, struct cc_audit_snap *s, struct cc_err *err)
{
	_cleanup_free_ char *text = cc_root_read(root, CC_KUBELET_CPU_STATE, 0, err);

	if (!text) {
		if (err->code == ENOENT) {
			cc_err_clear(err);
			return 0;
		}
		return -1;
	}
	if (cc_audit_parse_kubelet_state(text, s->kubelet_policy, sizeof(s->kubelet_policy), err) < 0)
		return cc_err_prefix(err, CC_KUBELET_CPU_STATE);
	return 0;
}

/* kernel.panic_on_warn: whether a kernel warning takes the node down
 * (the re-arm of an invalid remote partition warns on some kernels). */
static int read_panic_on_warn(const struct cc_root *root, struct cc_audit_snap *s, struct cc_err *err)
{
	_cleanup_free_ char *text = cc_root_read(root, "/proc/sys/kernel/panic_on_warn", 0, err);

	if (!text) {
		if (err->code == ENOENT) {
			cc_err_clear(err);
			return 0;
		}
		return -1;
	}
	s->panic_on_warn = atoi(text) != 0;
	return 0;
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

int cc_audit_irq_growth(const struct cc_irq_counts *a, const struct cc_irq_counts *b,
			struct cc_audit_snap *s, struct cc_err *err)
{
	_cleanup_free_ int *col_of = malloc(CC_CPU_LIMIT * sizeof(int));
	int j = 0;

	if (!col_of)
		return cc_err_sys(err, ENOMEM, "audit");
	/* A CPU's column in `a` (CPUs can go offline between the reads). */
	for (int k = 0; k < CC_CPU_LIMIT; k++)
		col_of[k] = -1;
	for (int k = 0; k < a->ncols; k++)
		if (a->cpus[k] >= 0 && a->cpus[k] < CC_CPU_LIMIT)
			col_of[a->cpus[k]] = k;
	/* Both list the IRQs in ascending order: walk them together. */
	for (int r = 0; r < b->nrows; r++) {
		_cleanup_bitmap_ hwloc_bitmap_t grew = hwloc_bitmap_alloc();
		const unsigned long long *rb = &b->count[(size_t)r * (size_t)b->ncols], *ra;
		struct cc_audit_irq_growth *g;
		int irq = b->irqs[r];

		if (!grew)
			return cc_err_sys(err, ENOMEM, "audit");
		while (j < a->nrows && a->irqs[j] < irq)
			j++;
		if (j >= a->nrows || a->irqs[j] != irq)
			continue; /* new during the sample: no baseline */
		ra = &a->count[(size_t)j * (size_t)a->ncols];
		for (int k = 0; k < b->ncols; k++) {
			int cpu = b->cpus[k], ka = cpu >= 0 && cpu < CC_CPU_LIMIT ? col_of[cpu] : -1;

			if (ka >= 0 && rb[k] > ra[ka])
				hwloc_bitmap_set(grew, (unsigned)cpu);
		}
		if (hwloc_bitmap_iszero(grew))
			continue;
		g = realloc(s->growth, (size_t)(s->ngrowth + 1) * sizeof(*g));
		if (!g)
			return cc_err_sys(err, ENOMEM, "audit");
		s->growth = g;
		g[s->ngrowth].irq = irq;
		g[s->ngrowth++].cpus = cc_steal_ptr(grew);
	}
	return 0;
}

int cc_audit_snap_read(const struct cc_root *root, const struct cc_ledger *l,
		       const struct cc_audit_read_opts *o, struct cc_audit_snap *s,
		       struct cc_err *err)
{
	_cleanup_json_ json_t *carved = json_object();
	struct cc_irq_counts before = { 0 }, after = { 0 };
	__attribute__((cleanup(walker_fini))) struct walker w = { .s = s, .cg = CC_CG_INIT };
	const struct cc_carve *c;
	double start = now_ms();
	int rc = -1, r;

	memset(s, 0, sizeof(*s));
	cc_noderecs_init(&s->power);
	if (!carved)
		return cc_err_sys(err, ENOMEM, "audit");
	w.carved = carved;
	cc_ledger_foreach_carve(l, k, c)
		if (c->cgroup[0] && json_object_set_new(carved, c->cgroup, json_true()) < 0)
			return cc_err_sys(err, ENOMEM, "audit");
	if (cc_cg_open(&w.cg, root, err) < 0)
		return -1;
	/* A captured tree does not change: a sample of it would be empty. */
	s->sample_ms = o->skip_irqs || !root->is_host ? 0 : o->sample_ms;
	s->max_tasks = o->max_tasks > 0 ? o->max_tasks : CC_AUDIT_TASKS_PER_CGROUP;
	if (s->sample_ms > 0 && cc_irq_counts_read(root, &before, err) < 0)
		goto out;

	if (cc_audit_snap_add_cgroup(s, "/", -1, err) < 0 || walk(&w, 0, 0, err) < 0 ||
	    cc_audit_snap_index(s, l, err) < 0)
		goto out;
	for (int i = 0; i < s->ncgroups; i++)
		if ((s->cgroups[i].within >= 0 || s->cgroups[i].quota_at >= 0) && read_tasks(&w, i, root, err) < 0)
			goto out;
	if (read_kubelet(root, s, err) < 0 || read_panic_on_warn(root, s, err) < 0)
		goto out;
	if (cc_power_recs_load(l, &s->power, err) < 0 || cc_power_read_now(root, &s->power, &s->power_now, err) < 0)
		goto out;
	if (!o->skip_irqs && cc_root_exists(root, "/proc/irq")) {
		if (cc_irq_table_read(root, &s->irqs, err) < 0)
			goto out;
		s->has_irqs = true;
	}
	if (s->sample_ms > 0) {
		double left = s->sample_ms - (now_ms() - start);

		/* The reads above count toward the window. */
		if (left > 0) {
			struct timespec ts = { (time_t)(left / 1e3), (long)((left - (double)(long)(left / 1e3) * 1e3) * 1e6) };

			while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
				;
		}
		if (cc_irq_counts_read(root, &after, err) < 0 || cc_audit_irq_growth(&before, &after, s, err) < 0)
			goto out;
	}
	rc = 0;
out:
	cc_irq_counts_fini(&before);
	cc_irq_counts_fini(&after);
	if (rc < 0) {
		r = err->code;
		cc_audit_snap_fini(s);
		err->code = r;
	}
	return rc;
}
