/* The cgroup v2 test double (fakecg.h). */
#define _GNU_SOURCE
#include "fakecg.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cpulist.h"

#define MAX_NODES 256

struct node {
	char path[PATH_MAX]; /* "/" for the root */
	int parent;          /* -1 for the root */
	bool alive, populated;
	hwloc_bitmap_t cpus, mems, excl; /* as written; empty = unset */
	char part[32];                   /* member, root, isolated: as written */
	long long part_seq;              /* when it asked to be a partition */
	char cpumax[64];
	char *files[16]; /* what flush last wrote, per file (only changes are written) */
	hwloc_bitmap_t withheld; /* fakecg_withhold: CPUs its effective set never gets */
	/* derived */
	hwloc_bitmap_t eff, meff, pcpus; /* pcpus: a valid partition's CPUs */
	bool valid, remote;
	char reason[128];
};

struct fakecg {
	char dir[PATH_MAX]; /* <root>/sys/fs/cgroup */
	enum fakecg_kernel k;
	hwloc_bitmap_t all, allmems;
	int n;
	struct node nodes[MAX_NODES];
	long long seq;
	int writes, fail_at, fail_code;
	char vanish[PATH_MAX]; /* fakecg_vanish: gone at the next write to it */
	int vanish_code;
	char buf[8192];
};

static bool has_excl(const struct fakecg *f)
{
	return f->k != FAKECG_6_1;
}

static int find(const struct fakecg *f, const char *cgroup)
{
	for (int i = 0; i < f->n; i++)
		if (f->nodes[i].alive && !strcmp(f->nodes[i].path, cgroup))
			return i;
	return -1;
}

static bool is_partition(const struct node *n)
{
	return strcmp(n->part, "member") != 0;
}

/* ---- the model --------------------------------------------------------- */

static bool ancestor_of(const struct fakecg *f, int a, int i)
{
	for (int p = f->nodes[i].parent; p >= 0; p = f->nodes[p].parent)
		if (p == a)
			return true;
	return false;
}

/* Validity of every partition, in the order they were asked for: an
 * earlier partition keeps CPUs a later one claims. */
static void validate(struct fakecg *f)
{
	hwloc_bitmap_t claimed = hwloc_bitmap_alloc();
	int order[MAX_NODES], m = 0;

	for (int i = 0; i < f->n; i++) {
		struct node *n = &f->nodes[i];

		if (!n->alive)
			continue;
		n->valid = i == 0;
		n->remote = false;
		n->reason[0] = '\0';
		hwloc_bitmap_zero(n->pcpus);
		if (i && n->alive && is_partition(n))
			order[m++] = i;
	}
	hwloc_bitmap_copy(f->nodes[0].pcpus, f->all);
	/* by seq, then parents first */
	for (int a = 0; a < m; a++)
		for (int b = a + 1; b < m; b++)
			if (f->nodes[order[b]].part_seq < f->nodes[order[a]].part_seq) {
				int t = order[a];
				order[a] = order[b];
				order[b] = t;
			}
	for (int pass = 0; pass < 2; pass++) {
		hwloc_bitmap_zero(claimed);
		for (int a = 0; a < m; a++) {
			struct node *n = &f->nodes[order[a]], *p = &f->nodes[n->parent];
			hwloc_bitmap_t want = hwloc_bitmap_alloc();
			bool local = n->parent == 0 || p->valid;

			n->valid = false;
			n->remote = false;
			hwloc_bitmap_zero(n->pcpus);
			if (local) {
				hwloc_bitmap_copy(want, has_excl(f) && !hwloc_bitmap_iszero(n->excl) ? n->excl : n->cpus);
				if (hwloc_bitmap_iszero(want))
					snprintf(n->reason, sizeof(n->reason), "cpuset.cpus is empty");
				else if (!hwloc_bitmap_isincluded(want, p->pcpus))
					snprintf(n->reason, sizeof(n->reason), "Invalid cpu list in cpuset.cpus");
			} else if (has_excl(f)) {
				hwloc_bitmap_copy(want, n->excl);
				if (hwloc_bitmap_iszero(want))
					snprintf(n->reason, sizeof(n->reason), "Invalid cpu list in cpuset.cpus.exclusive");
				for (int q = n->parent; q > 0 && !n->reason[0]; q = f->nodes[q].parent)
					if (!hwloc_bitmap_isincluded(want, f->nodes[q].excl))
						snprintf(n->reason, sizeof(n->reason), "Invalid cpu list in cpuset.cpus.exclusive");
				n->remote = true;
			} else {
				snprintf(n->reason, sizeof(n->reason), "Parent is not a partition root");
			}
			/* 7.0: a later partition gets what is left, stripped of the
			 * CPUs an earlier one holds; before, it is invalid. */
			if (!n->reason[0] && f->k == FAKECG_7)
				hwloc_bitmap_andnot(want, want, claimed);
			if (!n->reason[0] && f->k == FAKECG_7 && hwloc_bitmap_iszero(want))
				snprintf(n->reason, sizeof(n->reason), "Cpu list in cpuset.cpus not exclusive");
			if (!n->reason[0] && hwloc_bitmap_intersects(want, claimed))
				snprintf(n->reason, sizeof(n->reason), "Cpu list in cpuset.cpus not exclusive");
			/* 6.12: a member sibling that asks for its CPUs spoils it. */
			for (int s = 1; !n->reason[0] && f->k == FAKECG_6_12 && s < f->n; s++) {
				struct node *sib = &f->nodes[s];

				if (s != order[a] && sib->alive && sib->parent == n->parent && !is_partition(sib) &&
				    hwloc_bitmap_intersects(sib->cpus, want))
					snprintf(n->reason, sizeof(n->reason), "Cpu list in cpuset.cpus not exclusive");
			}
			if (!n->reason[0]) {
				n->valid = true;
				hwloc_bitmap_copy(n->pcpus, want);
				hwloc_bitmap_or(claimed, claimed, want);
			}
			hwloc_bitmap_free(want);
		}
	}
	hwloc_bitmap_free(claimed);
}

static void effective(struct fakecg *f)
{
	for (int i = 0; i < f->n; i++) {
		struct node *n = &f->nodes[i];

		if (!n->alive)
			continue;
		if (i == 0) {
			hwloc_bitmap_copy(n->eff, f->all);
			hwloc_bitmap_copy(n->meff, f->allmems);
			for (int j = 1; j < f->n; j++)
				if (f->nodes[j].alive && f->nodes[j].valid && (f->nodes[j].parent == 0 || f->nodes[j].remote))
					hwloc_bitmap_andnot(n->eff, n->eff, f->nodes[j].pcpus);
			continue;
		}
		{
			struct node *p = &f->nodes[n->parent];

			if (n->valid) {
				hwloc_bitmap_copy(n->eff, n->pcpus);
			} else {
				if (hwloc_bitmap_iszero(n->cpus))
					hwloc_bitmap_copy(n->eff, p->eff);
				else
					hwloc_bitmap_and(n->eff, n->cpus, p->eff);
				if (hwloc_bitmap_iszero(n->eff))
					hwloc_bitmap_copy(n->eff, p->eff);
			}
			for (int j = 1; j < f->n; j++)
				if (f->nodes[j].alive && f->nodes[j].valid && f->nodes[j].parent == i && !f->nodes[j].remote)
					hwloc_bitmap_andnot(n->eff, n->eff, f->nodes[j].pcpus);
			/* Remote partitions below a member take their CPUs from the
			 * root, and so from everyone on the way. */
			for (int j = 1; j < f->n; j++)
				if (f->nodes[j].alive && f->nodes[j].valid && f->nodes[j].remote && !ancestor_of(f, j, i) &&
				    j != i)
					hwloc_bitmap_andnot(n->eff, n->eff, f->nodes[j].pcpus);
			if (n->withheld)
				hwloc_bitmap_andnot(n->eff, n->eff, n->withheld);
			/* As for the CPUs: nothing left is the parent's. */
			hwloc_bitmap_and(n->meff, n->mems, p->meff);
			if (hwloc_bitmap_iszero(n->meff))
				hwloc_bitmap_copy(n->meff, p->meff);
		}
	}
}

/* ---- the files ----------------------------------------------------------- */

static const char *const file_names[] = { "cgroup.controllers", "cgroup.subtree_control", "cgroup.procs",
					  "cgroup.events", "cpuset.cpus", "cpuset.cpus.effective", "cpuset.mems",
					  "cpuset.mems.effective", "cpuset.cpus.partition", "cpuset.cpus.exclusive",
					  "cpuset.cpus.exclusive.effective", "cpu.max", NULL };

static int file_index(const char *name)
{
	for (int i = 0; file_names[i]; i++)
		if (!strcmp(file_names[i], name))
			return i;
	return -1;
}

static int put_file(struct node *n, const char *dir, const char *name, const char *value)
{
	char path[PATH_MAX + 64];
	int k = file_index(name);
	FILE *fp;

	if (n->files[k] && !strcmp(n->files[k], value))
		return 0;
	free(n->files[k]);
	n->files[k] = strdup(value);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fp = fopen(path, "w");
	if (!fp)
		return -1;
	fprintf(fp, "%s\n", value);
	return fclose(fp);
}

static void node_dir(const struct fakecg *f, const struct node *n, char *out, size_t len)
{
	snprintf(out, len, "%s%s", f->dir, strcmp(n->path, "/") ? n->path : "");
}

static void list(hwloc_const_bitmap_t b, char *out, size_t len)
{
	char *s = cc_cpulist_format(b);

	snprintf(out, len, "%s", s ? s : "");
	free(s);
}

static void flush(struct fakecg *f)
{
	validate(f);
	effective(f);
	for (int i = 0; i < f->n; i++) {
		struct node *n = &f->nodes[i];
		char dir[PATH_MAX], v[512];
		bool populated = n->populated;

		if (!n->alive)
			continue;
		for (int j = 0; j < f->n; j++)
			if (f->nodes[j].alive && f->nodes[j].populated && ancestor_of(f, i, j))
				populated = true;
		node_dir(f, n, dir, sizeof(dir));
		put_file(n, dir, "cgroup.controllers", "cpuset cpu");
		put_file(n, dir, "cgroup.subtree_control", "cpuset cpu");
		put_file(n, dir, "cgroup.procs", n->populated ? "4242" : "");
		snprintf(v, sizeof(v), "populated %d\nfrozen 0", populated);
		put_file(n, dir, "cgroup.events", v);
		list(n->eff, v, sizeof(v));
		put_file(n, dir, "cpuset.cpus.effective", v);
		list(n->meff, v, sizeof(v));
		put_file(n, dir, "cpuset.mems.effective", v);
		if (i == 0)
			continue;
		list(n->cpus, v, sizeof(v));
		put_file(n, dir, "cpuset.cpus", v);
		list(n->mems, v, sizeof(v));
		put_file(n, dir, "cpuset.mems", v);
		if (!is_partition(n))
			snprintf(v, sizeof(v), "member");
		else if (n->valid)
			snprintf(v, sizeof(v), "%s", n->part);
		else
			snprintf(v, sizeof(v), "%s invalid (%s)", n->part, n->reason);
		put_file(n, dir, "cpuset.cpus.partition", v);
		if (has_excl(f)) {
			list(n->excl, v, sizeof(v));
			put_file(n, dir, "cpuset.cpus.exclusive", v);
			list(n->pcpus, v, sizeof(v));
			put_file(n, dir, "cpuset.cpus.exclusive.effective", v);
		}
		put_file(n, dir, "cpu.max", n->cpumax);
	}
}

/* ---- writes ----------------------------------------------------------- */

static int parse_set(const struct fakecg *f, const char *value, hwloc_bitmap_t out, hwloc_const_bitmap_t within)
{
	struct cc_err e = CC_ERR_INIT;
	char v[1024];
	size_t n;

	snprintf(v, sizeof(v), "%s", value);
	/* The kernel strips whitespace (libcgroup sends " " for empty). */
	n = strlen(v);
	while (n && (v[n - 1] == ' ' || v[n - 1] == '\n'))
		v[--n] = '\0';
	if (cc_cpulist_parse(v[0] == ' ' ? v + strspn(v, " ") : v, out, "fakecg", &e) < 0)
		return EINVAL;
	(void)f;
	return hwloc_bitmap_isincluded(out, within) ? 0 : EINVAL;
}

static int write_file(struct fakecg *f, const char *cgroup, const char *file, const char *value)
{
	int i = find(f, cgroup);
	struct node *n;
	hwloc_bitmap_t set;
	int rc = 0;

	if (i < 0)
		return ENOENT;
	n = &f->nodes[i];
	if (!strcmp(file, "cgroup.subtree_control"))
		return 0;
	if (i == 0)
		return ENOENT; /* the root has no cpuset.cpus, partition or cpu.max */
	set = hwloc_bitmap_alloc();
	if (!strcmp(file, "cpuset.cpus")) {
		rc = parse_set(f, value, set, f->all);
		if (!rc && f->k == FAKECG_6_1 && hwloc_bitmap_iszero(set) && !hwloc_bitmap_iszero(n->cpus) &&
		    n->populated)
			rc = ENOSPC;
		for (int s = 1; !rc && f->k == FAKECG_6_1 && s < f->n; s++)
			if (s != i && f->nodes[s].alive && f->nodes[s].parent == n->parent && f->nodes[s].valid &&
			    hwloc_bitmap_intersects(set, f->nodes[s].pcpus))
				rc = EINVAL;
		if (!rc && f->k == FAKECG_7) {
			/* 7.0: conflicting CPUs are stripped, not refused. */
			for (int s = 1; s < f->n; s++)
				if (s != i && f->nodes[s].alive && f->nodes[s].parent == n->parent && f->nodes[s].valid &&
				    !is_partition(n))
					hwloc_bitmap_andnot(set, set, f->nodes[s].pcpus);
		}
		if (!rc)
			hwloc_bitmap_copy(n->cpus, set);
	} else if (!strcmp(file, "cpuset.mems")) {
		rc = parse_set(f, value, set, f->allmems);
		if (!rc && f->k == FAKECG_6_1 && hwloc_bitmap_iszero(set) && !hwloc_bitmap_iszero(n->mems) &&
		    n->populated)
			rc = ENOSPC;
		if (!rc)
			hwloc_bitmap_copy(n->mems, set);
	} else if (!strcmp(file, "cpuset.cpus.exclusive")) {
		if (!has_excl(f)) {
			rc = ENOENT;
		} else {
			rc = parse_set(f, value, set, f->all);
			if (!rc && n->parent > 0 && !hwloc_bitmap_isincluded(set, f->nodes[n->parent].excl))
				rc = EINVAL;
			for (int s = 1; !rc && s < f->n; s++) {
				struct node *o = &f->nodes[s];

				if (s == i || !o->alive)
					continue;
				if (o->parent == n->parent && hwloc_bitmap_intersects(set, o->excl))
					rc = EINVAL; /* siblings' exclusive sets are disjoint */
				if (o->parent == i && !hwloc_bitmap_isincluded(o->excl, set))
					rc = EINVAL; /* a parent's covers its children's */
			}
			if (!rc)
				hwloc_bitmap_copy(n->excl, set);
		}
	} else if (!strcmp(file, "cpuset.cpus.partition")) {
		char v[32];

		snprintf(v, sizeof(v), "%.*s", (int)strcspn(value, " \n"), value);
		if (strcmp(v, "member") && strcmp(v, "root") && strcmp(v, "isolated")) {
			rc = EINVAL;
		} else {
			if (strcmp(n->part, v))
				n->part_seq = ++f->seq;
			snprintf(n->part, sizeof(n->part), "%s", v);
		}
	} else if (!strcmp(file, "cpu.max")) {
		char q[32];
		long long period = 100000, quota;
		char *end;
		int k = sscanf(value, "%31s %lld", q, &period);

		if (k < 1 || period <= 0)
			rc = EINVAL;
		else if (!strcmp(q, "max"))
			snprintf(n->cpumax, sizeof(n->cpumax), "max %lld", period);
		else if ((quota = strtoll(q, &end, 10)) <= 0 || *end)
			rc = EINVAL;
		else
			snprintf(n->cpumax, sizeof(n->cpumax), "%lld %lld", quota, period);
	} else {
		rc = ENOENT;
	}
	hwloc_bitmap_free(set);
	if (!rc)
		flush(f);
	return rc;
}

static void node_init(struct node *n, const char *path, int parent)
{
	memset(n, 0, sizeof(*n));
	snprintf(n->path, sizeof(n->path), "%s", path);
	n->parent = parent;
	n->alive = true;
	n->cpus = hwloc_bitmap_alloc();
	n->mems = hwloc_bitmap_alloc();
	n->excl = hwloc_bitmap_alloc();
	n->eff = hwloc_bitmap_alloc();
	n->meff = hwloc_bitmap_alloc();
	n->pcpus = hwloc_bitmap_alloc();
	snprintf(n->part, sizeof(n->part), "member");
	snprintf(n->cpumax, sizeof(n->cpumax), "max 100000");
}

static void node_fini(struct node *n)
{
	hwloc_bitmap_t *b[] = { &n->cpus, &n->mems, &n->excl, &n->eff, &n->meff, &n->pcpus, &n->withheld };

	for (size_t i = 0; i < sizeof(b) / sizeof(b[0]); i++)
		if (*b[i]) {
			hwloc_bitmap_free(*b[i]);
			*b[i] = NULL;
		}
	for (int i = 0; i < 16; i++) {
		free(n->files[i]);
		n->files[i] = NULL;
	}
}

int fakecg_mkdir(struct fakecg *f, const char *cgroup, bool populated)
{
	char parent[PATH_MAX], dir[PATH_MAX + 8];
	int p, i;

	if (find(f, cgroup) >= 0)
		return 0;
	if (f->n == MAX_NODES)
		return ENOSPC;
	cc_cg_parent(cgroup, parent, sizeof(parent));
	p = find(f, parent);
	if (p < 0)
		return ENOENT;
	snprintf(dir, sizeof(dir), "%s%s", f->dir, cgroup);
	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		return errno;
	i = f->n++;
	node_init(&f->nodes[i], cgroup, p);
	f->nodes[i].populated = populated;
	flush(f);
	return 0;
}

static void remove_files(const char *dir)
{
	char path[PATH_MAX + 64];

	for (int i = 0; file_names[i]; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, file_names[i]);
		unlink(path);
	}
}

int fakecg_rmdir(struct fakecg *f, const char *cgroup)
{
	int i = find(f, cgroup);
	char dir[PATH_MAX];

	if (i < 0)
		return 0;
	if (i == 0)
		return EBUSY;
	for (int j = 0; j < f->n; j++)
		if (f->nodes[j].alive && f->nodes[j].parent == i)
			return EBUSY;
	if (f->nodes[i].populated)
		return EBUSY;
	node_dir(f, &f->nodes[i], dir, sizeof(dir));
	remove_files(dir);
	if (rmdir(dir) < 0)
		return errno;
	f->nodes[i].alive = false;
	node_fini(&f->nodes[i]);
	flush(f);
	return 0;
}

int fakecg_withhold(struct fakecg *f, const char *cgroup, const char *cpus)
{
	int i = find(f, cgroup);
	struct cc_err e = CC_ERR_INIT;

	if (i < 0)
		return ENOENT;
	if (!f->nodes[i].withheld && !(f->nodes[i].withheld = hwloc_bitmap_alloc()))
		return ENOMEM;
	if (cc_cpulist_parse(cpus, f->nodes[i].withheld, "withhold", &e) < 0)
		return EINVAL;
	flush(f);
	return 0;
}

void fakecg_exit(struct fakecg *f, const char *cgroup)
{
	int i = find(f, cgroup);

	if (i >= 0 && f->nodes[i].populated) {
		f->nodes[i].populated = false;
		flush(f);
	}
}

bool fakecg_exists(const struct fakecg *f, const char *cgroup)
{
	return find(f, cgroup) >= 0;
}

int fakecg_write(struct fakecg *f, const char *cgroup, const char *file, const char *value)
{
	return write_file(f, cgroup, file, value);
}

const char *fakecg_get(const struct fakecg *f, const char *cgroup, const char *file)
{
	/* A few in turn: callers print several in one message. */
	static char bufs[8][1024];
	static int next;
	char *v = bufs[next++ % 8], path[PATH_MAX + 64];
	FILE *fp;
	size_t n;

	snprintf(path, sizeof(path), "%s%s/%s", f->dir, strcmp(cgroup, "/") ? cgroup : "", file);
	v[0] = '\0';
	fp = fopen(path, "r");
	if (!fp)
		return v;
	n = fread(v, 1, sizeof(bufs[0]) - 1, fp);
	fclose(fp);
	v[n] = '\0';
	while (n && v[n - 1] == '\n')
		v[--n] = '\0';
	return v;
}

void fakecg_fail_write(struct fakecg *f, int nth, int code)
{
	f->fail_at = nth > 0 ? f->writes + nth : 0;
	f->fail_code = code;
}

void fakecg_vanish(struct fakecg *f, const char *cgroup, int code)
{
	snprintf(f->vanish, sizeof(f->vanish), "%s", cgroup);
	f->vanish_code = code;
}

int fakecg_writes(const struct fakecg *f)
{
	return f->writes;
}

const char *fakecg_dump(const struct fakecg *f)
{
	size_t n = 0;

	((struct fakecg *)f)->buf[0] = '\0';
	for (int i = 0; i < f->n && n + 1 < sizeof(f->buf); i++)
		if (f->nodes[i].alive)
			n += (size_t)snprintf(((struct fakecg *)f)->buf + n, sizeof(f->buf) - n, "%s\n", f->nodes[i].path);
	return f->buf;
}

/* ---- the ops corecarve writes through ----------------------------------- */

static int op_write(struct cc_cg *cg, const char *cgroup, const char *file, const char *value, struct cc_err *err)
{
	struct fakecg *f = cg->ops_arg;
	int rc;

	f->writes++;
	if (f->fail_at && f->writes == f->fail_at)
		return cc_err_sys(err, f->fail_code, "write \"%s\" to %s/%s (injected)", value, cgroup, file);
	if (f->vanish[0] && !strcmp(f->vanish, cgroup)) {
		f->vanish[0] = '\0';
		fakecg_exit(f, cgroup);
		if ((rc = fakecg_rmdir(f, cgroup)) != 0)
			return cc_err_sys(err, rc, "rmdir %s (vanish)", cgroup);
		return cc_err_sys(err, f->vanish_code, "write \"%s\" to %s/%s", value, cgroup, file);
	}
	rc = write_file(f, cgroup, file, value);
	return rc ? cc_err_sys(err, rc, "write \"%s\" to %s/%s", value, cgroup, file) : 0;
}

static int op_mkdir(struct cc_cg *cg, const char *cgroup, struct cc_err *err)
{
	struct fakecg *f = cg->ops_arg;
	int rc;

	f->writes++;
	if (f->fail_at && f->writes == f->fail_at)
		return cc_err_sys(err, f->fail_code, "mkdir %s (injected)", cgroup);
	rc = fakecg_mkdir(f, cgroup, false);
	return rc ? cc_err_sys(err, rc, "mkdir %s", cgroup) : 0;
}

static int op_rmdir(struct cc_cg *cg, const char *cgroup, struct cc_err *err)
{
	struct fakecg *f = cg->ops_arg;
	int rc;

	f->writes++;
	if (f->fail_at && f->writes == f->fail_at)
		return cc_err_sys(err, f->fail_code, "rmdir %s (injected)", cgroup);
	rc = fakecg_rmdir(f, cgroup);
	return rc ? cc_err_sys(err, rc, "rmdir %s", cgroup) : 0;
}

const struct cc_cg_ops fakecg_ops = { op_write, op_mkdir, op_rmdir };

static int mkdirs(const char *path)
{
	char p[PATH_MAX];

	snprintf(p, sizeof(p), "%s", path);
	for (char *s = p + 1; *s; s++)
		if (*s == '/') {
			*s = '\0';
			if (mkdir(p, 0755) < 0 && errno != EEXIST)
				return -1;
			*s = '/';
		}
	return mkdir(p, 0755) < 0 && errno != EEXIST ? -1 : 0;
}

struct fakecg *fakecg_new(const char *rootdir, enum fakecg_kernel k, const char *cpus, const char *mems)
{
	struct fakecg *f = calloc(1, sizeof(*f));
	struct cc_err e = CC_ERR_INIT;

	if (!f)
		return NULL;
	snprintf(f->dir, sizeof(f->dir), "%s/sys/fs/cgroup", rootdir);
	f->k = k;
	f->all = hwloc_bitmap_alloc();
	f->allmems = hwloc_bitmap_alloc();
	if (mkdirs(f->dir) < 0 || cc_cpulist_parse(cpus, f->all, "cpus", &e) < 0 ||
	    cc_cpulist_parse(mems, f->allmems, "mems", &e) < 0) {
		fprintf(stderr, "fakecg: %s: %s\n", f->dir, e.msg[0] ? e.msg : strerror(errno));
		fakecg_free(f);
		return NULL;
	}
	node_init(&f->nodes[0], "/", -1);
	f->n = 1;
	flush(f);
	return f;
}

void fakecg_free(struct fakecg *f)
{
	if (!f)
		return;
	for (int i = 0; i < f->n; i++)
		node_fini(&f->nodes[i]);
	hwloc_bitmap_free(f->all);
	hwloc_bitmap_free(f->allmems);
	free(f);
}
