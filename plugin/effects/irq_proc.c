/* /proc/irq through the root: read the whole table, write a plan, roll it
 * back.  Every file is read and checked before a plan is made, so a
 * malformed entry stops everything with nothing written. */
#define _GNU_SOURCE
#include "irq.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>

#include "cleanup.h"
#include "cpulist.h"
#include "fault.h"

#define PATH_LEN 96

static int cmp_irq(const void *a, const void *b)
{
	const struct cc_irq_info *x = a, *y = b;

	return (x->irq > y->irq) - (x->irq < y->irq);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A /proc/irq entry name: the IRQ number, or -1 for something else. */
static int irq_number(const char *name, struct cc_err *err)
{
	long v = 0;

	if (!isdigit((unsigned char)name[0]))
		return -1;
	for (const char *p = name; *p; p++) {
		if (!isdigit((unsigned char)*p))
			return cc_err_set(err, EINVAL, "/proc/irq/%.32s: not an IRQ number", name), -2;
		v = v * 10 + (*p - '0');
		if (v >= CC_IRQ_NUMBER_MAX)
			return cc_err_set(err, ERANGE, "/proc/irq/%.32s: IRQ number out of range", name), -2;
	}
	return (int)v;
}

/* The handler names: one subdirectory of /proc/irq/N per action. */
static int read_names(const struct cc_root *root, const char *dir, char *out, size_t len, struct cc_err *err)
{
	_cleanup_closedir_ DIR *d = cc_root_opendir(root, dir, err);
	char *names[32];
	int n = 0;
	bool more = false;
	struct dirent *de;
	size_t used = 0;

	out[0] = '\0';
	if (!d)
		return -1;
	while ((errno = 0, de = readdir(d))) {
		struct stat st;

		if (de->d_name[0] == '.')
			continue;
		if (de->d_type == DT_UNKNOWN) {
			if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode))
				continue;
		} else if (de->d_type != DT_DIR) {
			continue;
		}
		if (n == (int)(sizeof(names) / sizeof(names[0]))) {
			more = true;
			continue;
		}
		if (!(names[n] = strdup(de->d_name))) {
			while (n)
				free(names[--n]);
			return cc_err_sys(err, ENOMEM, "%s", dir);
		}
		n++;
	}
	qsort(names, (size_t)n, sizeof(*names), cmp_str);
	for (int i = 0; i < n; i++) {
		size_t need = strlen(names[i]) + (i ? 1 : 0);

		/* Room is kept for "..." when names are left out. */
		if (!more && used + need + 4 <= len) {
			snprintf(out + used, len - used, "%s%s", i ? "," : "", names[i]);
			used += need;
		} else {
			more = true;
		}
		free(names[i]);
	}
	if (more)
		snprintf(out + used, len - used, "...");
	return 0;
}

/* Read one file of /proc/irq/N; ENOENT is returned as 1 with err unset. */
static int read_opt(const struct cc_root *root, const char *path, char **out, struct cc_err *err)
{
	struct cc_err e = CC_ERR_INIT;

	*out = cc_root_read(root, path, 64 * 1024, &e);
	if (*out)
		return 0;
	if (e.code == ENOENT)
		return 1;
	*err = e;
	return -1;
}

static int read_list(const struct cc_root *root, const char *path, hwloc_bitmap_t out, bool *present,
		     struct cc_err *err)
{
	_cleanup_free_ char *s = NULL;
	int r = read_opt(root, path, &s, err);

	if (present)
		*present = r == 0;
	if (r < 0)
		return -1;
	if (r > 0)
		return present ? 0 : cc_err_set(err, ENOENT, "%s: missing", path);
	return cc_cpulist_parse(s, out, path, err);
}

static int read_node(const struct cc_root *root, const char *path, int *node, struct cc_err *err)
{
	_cleanup_free_ char *s = NULL;
	int r = read_opt(root, path, &s, err);
	char *end;
	long v;

	*node = -1;
	if (r != 0)
		return r < 0 ? -1 : 0; /* no node file: a kernel without NUMA */
	errno = 0;
	v = strtol(s, &end, 10);
	if (!*s || *end || errno || v < -1 || v >= CC_CPU_LIMIT)
		return cc_err_set(err, EINVAL, "%s: expected a NUMA node number or -1, got \"%.32s\"", path, s);
	*node = (int)v;
	return 0;
}

/* Returns 1 when the IRQ went away while being read. */
static int read_irq(const struct cc_root *root, int irq, struct cc_irq_info *q, struct cc_err *err)
{
	char dir[PATH_LEN], path[PATH_LEN + 32];

	q->irq = irq;
	q->affinity = hwloc_bitmap_alloc();
	q->effective = hwloc_bitmap_alloc();
	if (!q->affinity || !q->effective)
		return cc_err_sys(err, ENOMEM, "/proc/irq");
	snprintf(dir, sizeof(dir), "/proc/irq/%d", irq);
	snprintf(path, sizeof(path), "%s/smp_affinity_list", dir);
	if (read_list(root, path, q->affinity, NULL, err) < 0) {
		/* Freed between readdir and read: not an error. */
		if (err->code == ENOENT && !cc_root_exists(root, dir)) {
			cc_err_clear(err);
			return 1;
		}
		return -1;
	}
	snprintf(path, sizeof(path), "%s/effective_affinity_list", dir);
	if (read_list(root, path, q->effective, &q->has_effective, err) < 0)
		return -1;
	snprintf(path, sizeof(path), "%s/node", dir);
	if (read_node(root, path, &q->node, err) < 0)
		return -1;
	if (read_names(root, dir, q->name, sizeof(q->name), err) < 0) {
		if (err->code == ENOENT) {
			cc_err_clear(err);
			return 1;
		}
		return -1;
	}
	return 0;
}

static void irq_fini(struct cc_irq_info *q)
{
	if (q->affinity)
		hwloc_bitmap_free(q->affinity);
	if (q->effective)
		hwloc_bitmap_free(q->effective);
	q->affinity = q->effective = NULL;
}

int cc_irq_table_read(const struct cc_root *root, struct cc_irq_table *t, struct cc_err *err)
{
	_cleanup_closedir_ DIR *d = NULL;
	_cleanup_free_ char *mask = NULL;
	_cleanup_free_ char *online = NULL;
	struct dirent *de;
	int cap = 0;

	memset(t, 0, sizeof(*t));
	t->default_affinity = hwloc_bitmap_alloc();
	t->online = hwloc_bitmap_alloc();
	if (!t->default_affinity || !t->online) {
		cc_err_sys(err, ENOMEM, "/proc/irq");
		goto fail;
	}
	online = cc_root_read(root, "/sys/devices/system/cpu/online", 0, err);
	if (!online || cc_cpulist_parse(online, t->online, "/sys/devices/system/cpu/online", err) < 0)
		goto fail;
	mask = cc_root_read(root, "/proc/irq/default_smp_affinity", 0, err);
	if (!mask || cc_cpumask_parse(mask, t->default_affinity, "/proc/irq/default_smp_affinity", err) < 0)
		goto fail;
	d = cc_root_opendir(root, "/proc/irq", err);
	if (!d)
		goto fail;
	while ((errno = 0, de = readdir(d))) {
		int irq = irq_number(de->d_name, err), r;

		if (irq == -2)
			goto fail;
		if (irq < 0)
			continue; /* default_smp_affinity, ".", ".." */
		if (t->n == cap) {
			struct cc_irq_info *g;

			cap = cap ? 2 * cap : 64;
			g = realloc(t->irqs, (size_t)cap * sizeof(*g));
			if (!g) {
				cc_err_sys(err, ENOMEM, "/proc/irq");
				goto fail;
			}
			t->irqs = g;
		}
		memset(&t->irqs[t->n], 0, sizeof(t->irqs[0]));
		r = read_irq(root, irq, &t->irqs[t->n], err);
		if (r < 0) {
			irq_fini(&t->irqs[t->n]);
			goto fail;
		}
		if (r > 0) {
			irq_fini(&t->irqs[t->n]);
			continue;
		}
		t->n++;
	}
	if (errno) {
		cc_err_sys(err, errno, "/proc/irq: readdir");
		goto fail;
	}
	qsort(t->irqs, (size_t)t->n, sizeof(*t->irqs), cmp_irq);
	return 0;
fail:
	cc_irq_table_fini(t);
	return -1;
}

void cc_irq_table_fini(struct cc_irq_table *t)
{
	for (int i = 0; i < t->n; i++)
		irq_fini(&t->irqs[i]);
	free(t->irqs);
	if (t->default_affinity)
		hwloc_bitmap_free(t->default_affinity);
	if (t->online)
		hwloc_bitmap_free(t->online);
	memset(t, 0, sizeof(*t));
}

const struct cc_irq_info *cc_irq_find(const struct cc_irq_table *t, int irq)
{
	for (int i = 0; i < t->n; i++)
		if (t->irqs[i].irq == irq)
			return &t->irqs[i];
	return NULL;
}

/* ---- writes ---------------------------------------------------------------- */

bool cc_irq_refusal(int code)
{
	return code == EIO || code == EPERM || code == EROFS;
}

static const char *refusal_name(int code)
{
	switch (code) {
	case EIO:
		return "EIO";
	case EPERM:
		return "EPERM";
	case EROFS:
		return "EROFS";
	}
	return "E?";
}

static void step_path(const struct cc_irq_step *s, char *buf, size_t len)
{
	if (s->irq == CC_IRQ_DEFAULT)
		snprintf(buf, len, "/proc/irq/default_smp_affinity");
	else
		snprintf(buf, len, "/proc/irq/%d/smp_affinity_list", s->irq);
}

/* Write one affinity.  default_smp_affinity only takes the hex mask form. */
static int write_affinity(const struct cc_root *root, const struct cc_irq_step *s, hwloc_const_bitmap_t set,
			  FILE *trace, struct cc_err *err)
{
	_cleanup_free_ char *v = NULL;
	char path[PATH_LEN];

	step_path(s, path, sizeof(path));
	v = s->irq == CC_IRQ_DEFAULT ? cc_cpumask_format(set, 0) : cc_cpulist_format(set);
	if (!v)
		return cc_err_sys(err, ENOMEM, "%s", path);
	if (trace)
		fprintf(trace, "corecarve: irq: %s <- %s\n", path, v);
	return cc_root_write(root, path, v, err);
}

/* What the kernel keeps after a write (it may differ from what was asked). */
static int read_back(const struct cc_root *root, const struct cc_irq_step *s, hwloc_bitmap_t out,
		     struct cc_err *err)
{
	_cleanup_free_ char *v = NULL;
	char path[PATH_LEN];

	step_path(s, path, sizeof(path));
	v = cc_root_read(root, path, 64 * 1024, err);
	if (!v)
		return -1;
	return s->irq == CC_IRQ_DEFAULT ? cc_cpumask_parse(v, out, path, err) : cc_cpulist_parse(v, out, path, err);
}

static const char *label(const struct cc_irq_step *s, char *buf, size_t len)
{
	if (s->irq == CC_IRQ_DEFAULT)
		snprintf(buf, len, "default_smp_affinity");
	else if (s->name[0])
		snprintf(buf, len, "IRQ %d (%s)", s->irq, s->name);
	else
		snprintf(buf, len, "IRQ %d", s->irq);
	return buf;
}

/* Put back, newest first, every step written so far; the first failure is
 * appended to err. */
static void rollback(const struct cc_root *root, struct cc_irq_plan *p, int upto, enum cc_irq_outcome *outcome,
		     FILE *trace, struct cc_err *err)
{
	bool noted = false;

	for (int i = upto - 1; i >= 0; i--) {
		struct cc_err e = CC_ERR_INIT;
		char l[CC_IRQ_NAME_MAX + 16];

		if (outcome[i] != CC_IRQ_WRITTEN)
			continue;
		if (write_affinity(root, &p->steps[i], p->steps[i].from, trace, &e) == 0) {
			outcome[i] = CC_IRQ_UNDONE;
			continue;
		}
		if (!noted) {
			size_t n = strlen(err->msg);

			snprintf(err->msg + n, sizeof(err->msg) - n, "; %s could not be put back: %s",
				 label(&p->steps[i], l, sizeof(l)), e.msg);
			noted = true;
		}
	}
}

/* The record of steps[i] in plan->next after its outcome. */
static int fix_record(struct cc_irq_plan *p, const struct cc_irq_state *prev, int i, enum cc_irq_outcome o,
		      hwloc_const_bitmap_t readback, int code)
{
	const struct cc_irq_step *s = &p->steps[i];
	const struct cc_irq_rec *old = cc_irq_state_find(prev, s->irq);
	struct cc_irq_rec *now = (struct cc_irq_rec *)cc_irq_state_find(&p->next, s->irq);

	if (old && s->irq != CC_IRQ_DEFAULT && !cc_irq_same_device(old->name, s->name))
		old = NULL;
	switch (o) {
	case CC_IRQ_WRITTEN:
		if (now && now->set)
			hwloc_bitmap_copy(now->set, readback);
		return 0;
	case CC_IRQ_VANISHED:
		cc_irq_state_del(&p->next, s->irq);
		return 0;
	case CC_IRQ_UNMOVABLE: {
		/* Whatever was recorded: it is where it is, and stays there. */
		struct cc_irq_rec r = { .irq = s->irq, .unmovable = true, .orig = s->from };

		snprintf(r.name, sizeof(r.name), "%s", s->name);
		snprintf(r.refused, sizeof(r.refused), "%s", refusal_name(code));
		return cc_irq_state_put(&p->next, &r);
	}
	default:
		if (old)
			return cc_irq_state_put(&p->next, old);
		cc_irq_state_del(&p->next, s->irq);
		return 0;
	}
}

int cc_irq_apply(const struct cc_root *root, struct cc_irq_plan *p, const struct cc_irq_state *prev,
		 const struct cc_irq_apply_opts *opts, enum cc_irq_outcome *outcome, struct cc_err *err)
{
	_cleanup_bitmap_ hwloc_bitmap_t back = hwloc_bitmap_alloc();
	FILE *trace = opts ? opts->trace : NULL;
	bool best = opts && opts->best_effort;
	int rc = 0;

	if (!back)
		return cc_err_sys(err, ENOMEM, "IRQ apply");
	for (int i = 0; i < p->n; i++)
		outcome[i] = CC_IRQ_PENDING;
	for (int i = 0; i < p->n; i++) {
		struct cc_irq_step *s = &p->steps[i];
		struct cc_err e = CC_ERR_INIT;
		char l[CC_IRQ_NAME_MAX + 16];
		int code = 0;

		/* CORECARVE_FAULT=irq-write:ERRNO@n (fault.h): the n-th write
		 * of this apply fails as a full or broken /proc would. */
		int inj = cc_fault_errno(opts ? opts->fault : NULL, "irq-write", i + 1);

		if (inj)
			cc_err_set(&e, inj, "%s: injected failure (the test build's fault switch)", s->irq == CC_IRQ_DEFAULT ? "default" : "irq");
		if (!inj && write_affinity(root, s, s->to, trace, &e) == 0) {
			outcome[i] = CC_IRQ_WRITTEN;
			cc_fault(opts ? opts->fault : NULL, "mid-irq-write");
			if (read_back(root, s, back, &e) < 0)
				hwloc_bitmap_copy(back, s->to);
		} else if (e.code == ENOENT && s->irq != CC_IRQ_DEFAULT) {
			outcome[i] = CC_IRQ_VANISHED;
		} else if (cc_irq_refusal(e.code)) {
			/* Kernel-managed (or /proc/irq read only): recorded and
			 * reported, never fatal. */
			outcome[i] = CC_IRQ_UNMOVABLE;
			code = e.code;
		} else {
			outcome[i] = CC_IRQ_FAILED;
			if (!cc_err_isset(err))
				cc_err_set(err, e.code, "%s: %s", label(s, l, sizeof(l)), e.msg);
			rc = -1;
			if (!best) {
				rollback(root, p, i, outcome, trace, err);
				return -1;
			}
		}
		if (fix_record(p, prev, i, outcome[i], back, code) < 0) {
			cc_err_sys(err, ENOMEM, "IRQ apply");
			if (!best)
				rollback(root, p, i + 1, outcome, trace, err);
			return -1;
		}
	}
	return rc;
}

void cc_irq_undo(const struct cc_root *root, struct cc_irq_plan *p, enum cc_irq_outcome *outcome, FILE *trace,
		 struct cc_err *err)
{
	rollback(root, p, p->n, outcome, trace, err);
}
