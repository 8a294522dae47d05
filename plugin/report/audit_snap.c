/* corecarve audit: the snapshot — what was read, indexed against the
 * ledger — and the pure parsers of what the reader reads. */
#define _GNU_SOURCE
#include "audit.h"

#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "cpulist.h"

int cc_audit_snap_add_cgroup(struct cc_audit_snap *s, const char *path, int parent,
			     struct cc_err *err)
{
	struct cc_audit_cgroup *g;

	if (!s->index && !(s->index = json_object()))
		return cc_err_sys(err, ENOMEM, "audit");
	if (s->ncgroups == s->cap_cgroups) {
		int cap = s->cap_cgroups ? 2 * s->cap_cgroups : 64;
		struct cc_audit_cgroup *grown = realloc(s->cgroups, (size_t)cap * sizeof(*grown));

		if (!grown)
			return cc_err_sys(err, ENOMEM, "audit");
		s->cgroups = grown;
		s->cap_cgroups = cap;
	}
	g = &s->cgroups[s->ncgroups];
	memset(g, 0, sizeof(*g));
	g->path = strdup(path);
	g->cpus = hwloc_bitmap_alloc();
	g->effective = hwloc_bitmap_alloc();
	g->parent = parent;
	g->quota = -1;
	g->carve = g->within = g->quota_at = -1;
	if (!g->path || !g->cpus || !g->effective) {
		free(g->path);
		if (g->cpus)
			hwloc_bitmap_free(g->cpus);
		if (g->effective)
			hwloc_bitmap_free(g->effective);
		return cc_err_sys(err, ENOMEM, "audit");
	}
	if (json_object_set_new(s->index, path, json_integer(s->ncgroups)) < 0) {
		free(g->path);
		hwloc_bitmap_free(g->cpus);
		hwloc_bitmap_free(g->effective);
		return cc_err_set(err, EINVAL, "audit: cgroup path \"%.64s\" cannot be indexed", path);
	}
	return s->ncgroups++;
}

void cc_audit_snap_drop_last(struct cc_audit_snap *s)
{
	struct cc_audit_cgroup *g;

	if (s->ncgroups == 0)
		return;
	g = &s->cgroups[--s->ncgroups];
	json_object_del(s->index, g->path);
	free(g->path);
	hwloc_bitmap_free(g->cpus);
	hwloc_bitmap_free(g->effective);
	if (g->exclusive)
		hwloc_bitmap_free(g->exclusive);
	if (g->mems)
		hwloc_bitmap_free(g->mems);
	memset(g, 0, sizeof(*g));
}

int cc_audit_snap_add_task(struct cc_audit_snap *s, int tid, int cgroup,
			   hwloc_const_bitmap_t affinity, struct cc_err *err)
{
	struct cc_audit_task *t;

	if (s->ntasks == s->cap_tasks) {
		int cap = s->cap_tasks ? 2 * s->cap_tasks : 16;
		struct cc_audit_task *grown = realloc(s->tasks, (size_t)cap * sizeof(*grown));

		if (!grown)
			return cc_err_sys(err, ENOMEM, "audit");
		s->tasks = grown;
		s->cap_tasks = cap;
	}
	t = &s->tasks[s->ntasks];
	t->tid = tid;
	t->cgroup = cgroup;
	t->affinity = hwloc_bitmap_dup(affinity);
	if (!t->affinity)
		return cc_err_sys(err, ENOMEM, "audit");
	s->ntasks++;
	return 0;
}

int cc_audit_snap_find(const struct cc_audit_snap *s, const char *path)
{
	json_t *v = s->index ? json_object_get(s->index, path) : NULL;

	return v ? (int)json_integer_value(v) : -1;
}

int cc_audit_snap_index(struct cc_audit_snap *s, const struct cc_ledger *l, struct cc_err *err)
{
	const struct cc_carve *c;

	(void)err;
	for (int i = 0; i < s->ncgroups; i++) {
		struct cc_audit_cgroup *g = &s->cgroups[i];

		g->carve = g->within = g->quota_at = -1;
		g->above_carve = false;
	}
	cc_ledger_foreach_carve(l, k, c) {
		int i = c->cgroup[0] ? cc_audit_snap_find(s, c->cgroup) : -1;

		if (i < 0 || s->cgroups[i].carve >= 0)
			continue;
		s->cgroups[i].carve = k;
		/* Stop at the first ancestor already marked: so are all above
		 * it, which keeps the whole marking linear in the tree size. */
		for (int p = s->cgroups[i].parent; p >= 0 && !s->cgroups[p].above_carve; p = s->cgroups[p].parent)
			s->cgroups[p].above_carve = true;
	}
	/* Parents come before children, so one forward pass inherits. */
	for (int i = 0; i < s->ncgroups; i++) {
		struct cc_audit_cgroup *g = &s->cgroups[i];
		const struct cc_audit_cgroup *p = g->parent >= 0 ? &s->cgroups[g->parent] : NULL;

		g->within = g->carve >= 0 ? g->carve : p ? p->within : -1;
		g->quota_at = g->quota >= 0 ? i : p ? p->quota_at : -1;
	}
	return 0;
}

void cc_audit_snap_fini(struct cc_audit_snap *s)
{
	for (int i = 0; i < s->ncgroups; i++) {
		struct cc_audit_cgroup *g = &s->cgroups[i];

		free(g->path);
		hwloc_bitmap_free(g->cpus);
		hwloc_bitmap_free(g->effective);
		if (g->exclusive)
			hwloc_bitmap_free(g->exclusive);
		if (g->mems)
			hwloc_bitmap_free(g->mems);
	}
	free(s->cgroups);
	for (int i = 0; i < s->ntasks; i++)
		hwloc_bitmap_free(s->tasks[i].affinity);
	free(s->tasks);
	if (s->has_irqs)
		cc_irq_table_fini(&s->irqs);
	for (int i = 0; i < s->ngrowth; i++)
		hwloc_bitmap_free(s->growth[i].cpus);
	free(s->growth);
	free(s->unreadable_path);
	cc_noderecs_fini(&s->power);
	cc_power_now_fini(&s->power_now);
	if (s->index)
		json_decref(s->index);
	memset(s, 0, sizeof(*s));
}

/* ---- parsers ------------------------------------------------------------ */

int cc_audit_parse_status_affinity(const char *status, hwloc_bitmap_t out, struct cc_err *err)
{
	static const char key[] = "Cpus_allowed_list:";
	const char *p = status;
	_cleanup_free_ char *v = NULL;

	while (p && strncmp(p, key, sizeof(key) - 1) != 0) {
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	if (!p)
		return cc_err_set(err, EINVAL, "no Cpus_allowed_list line");
	p += sizeof(key) - 1;
	p += strspn(p, " \t");
	v = strndup(p, strcspn(p, "\n"));
	if (!v)
		return cc_err_sys(err, ENOMEM, "audit");
	return cc_cpulist_parse(v, out, "Cpus_allowed_list", err);
}

int cc_audit_parse_stat_start(const char *stat, unsigned long long *out, struct cc_err *err)
{
	const char *p = strrchr(stat, ')');
	char *end;

	/* "pid (comm) state ppid ...": fields 3.. follow the last ')'; the
	 * start time is field 22, the 20th of them. */
	if (!p)
		return cc_err_set(err, EINVAL, "stat: no \")\" after the name");
	p++;
	for (int field = 3; field < 22; field++) {
		p += strspn(p, " ");
		p += strcspn(p, " \n");
		if (!*p)
			return cc_err_set(err, EINVAL, "stat: fewer than 22 fields");
	}
	p += strspn(p, " ");
	errno = 0;
	*out = strtoull(p, &end, 10);
	if (errno || end == p || (*end && *end != ' ' && *end != '\n'))
		return cc_err_set(err, EINVAL, "stat: field 22 (starttime) is not a number");
	return 0;
}

int cc_audit_parse_kubelet_state(const char *text, char *out, size_t len, struct cc_err *err)
{
	json_error_t je;
	_cleanup_json_ json_t *doc = json_loads(text, JSON_REJECT_DUPLICATES, &je);
	json_t *name;

	if (!doc)
		return cc_err_set(err, EINVAL, "line %d: %s", je.line, je.text);
	if (!json_is_object(doc))
		return cc_err_set(err, EINVAL, "expected a JSON object");
	name = json_object_get(doc, "policyName");
	if (name && !json_is_string(name))
		return cc_err_set(err, EINVAL, "policyName: expected a string");
	snprintf(out, len, "%s", name ? json_string_value(name) : "");
	return 0;
}
