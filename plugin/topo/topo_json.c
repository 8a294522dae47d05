/* corecarve: the topology as one JSON object (docs/topology.md lists the
 * fields; automation and tests rely on them). */
#include <errno.h>
#include <string.h>

#include "cleanup.h"
#include "cpulist.h"
#include "topo.h"

/* json_object_set_new() and json_array_append_new() steal the value even
 * on failure; one flag collects failures so the builders stay readable. */
struct jb {
	bool failed;
};

static void jset(struct jb *b, json_t *obj, const char *key, json_t *v)
{
	if (!v || json_object_set_new(obj, key, v) < 0)
		b->failed = true;
}

static void japp(struct jb *b, json_t *arr, json_t *v)
{
	if (!v || json_array_append_new(arr, v) < 0)
		b->failed = true;
}

static json_t *jlist(struct jb *b, hwloc_const_bitmap_t set)
{
	_cleanup_free_ char *s = cc_cpulist_format(set);

	if (!s) {
		b->failed = true;
		return NULL;
	}
	return json_string(s);
}

/* An index, or null when unknown (-1). */
static json_t *jidx(int v)
{
	return v < 0 ? json_null() : json_integer(v);
}

static json_t *domain_json(struct jb *b, const struct cc_domain *d, const char *idkey, bool cache)
{
	json_t *o = json_object();

	if (!o) {
		b->failed = true;
		return NULL;
	}
	jset(b, o, idkey, json_integer(d->id));
	jset(b, o, "os", jidx(d->os));
	if (cache) {
		jset(b, o, "level", json_integer(d->level));
		jset(b, o, "size", json_integer((json_int_t)d->size));
	}
	if (strcmp(idkey, "package") != 0)
		jset(b, o, "package", jidx(d->package));
	if (cache)
		jset(b, o, "numa", jidx(d->numa));
	jset(b, o, "cores", json_integer(d->ncores));
	jset(b, o, "cpus", jlist(b, d->cpus));
	return o;
}

static json_t *domains_json(struct jb *b, const struct cc_domain *d, int n, const char *idkey, bool cache)
{
	json_t *a = json_array();

	if (!a) {
		b->failed = true;
		return NULL;
	}
	for (int i = 0; i < n; i++)
		japp(b, a, domain_json(b, &d[i], idkey, cache));
	return a;
}

static json_t *numa_json(struct jb *b, const struct cc_topo *t)
{
	json_t *a = json_array();

	if (!a) {
		b->failed = true;
		return NULL;
	}
	for (int i = 0; i < t->nnuma; i++) {
		json_t *o = domain_json(b, &t->numa[i], "node", false);

		if (o && t->distance) {
			json_t *row = json_array();

			for (int j = 0; row && j < t->nnuma; j++)
				japp(b, row, json_integer(t->distance[i * t->nnuma + j]));
			jset(b, o, "distances", row);
		}
		japp(b, a, o);
	}
	return a;
}

static json_t *classes_json(struct jb *b, const struct cc_topo *t)
{
	json_t *a = json_array();

	if (!a) {
		b->failed = true;
		return NULL;
	}
	for (int i = 0; i < t->nclasses; i++) {
		const struct cc_class *c = &t->classes[i];
		json_t *o = json_object();
		int nclusters = 0;

		if (!o) {
			b->failed = true;
			break;
		}
		for (int l = 0; l < t->nl2s; l++)
			if (t->l2s[l].ncores > 1 && hwloc_bitmap_isincluded(t->l2s[l].cpus, c->cpus))
				nclusters++;
		jset(b, o, "name", json_string(c->name));
		jset(b, o, "rank", json_integer(c->rank));
		jset(b, o, "kind", json_string(c->kind));
		jset(b, o, "cores", json_integer(c->ncores));
		jset(b, o, "pus", json_integer(hwloc_bitmap_weight(c->cpus)));
		jset(b, o, "cpus", jlist(b, c->cpus));
		jset(b, o, "threads_per_core", json_integer(c->threads_per_core));
		jset(b, o, "clusters", json_integer(nclusters));
		japp(b, a, o);
	}
	return a;
}

/* Class of a set of cores: the one class all of them belong to, or -1. */
static int cores_class(const struct cc_topo *t, hwloc_const_bitmap_t cores)
{
	int id, cls = -2;

	hwloc_bitmap_foreach_begin(id, cores)
	{
		if (cls == -2)
			cls = t->cores[id].cls;
		else if (cls != t->cores[id].cls)
			cls = -1;
	}
	hwloc_bitmap_foreach_end();
	return cls < 0 ? -1 : cls;
}

static json_t *clusters_json(struct jb *b, const struct cc_topo *t)
{
	json_t *a = json_array();

	if (!a) {
		b->failed = true;
		return NULL;
	}
	for (int l = 0; l < t->nl2s; l++) {
		const struct cc_domain *d = &t->l2s[l];
		json_t *o;
		int cls;

		if (d->ncores < 2)
			continue;
		o = json_object();
		if (!o) {
			b->failed = true;
			break;
		}
		cls = cores_class(t, d->cores);
		jset(b, o, "l2", json_integer(d->id));
		jset(b, o, "class", cls >= 0 ? json_string(t->classes[cls].name) : json_null());
		jset(b, o, "cores", json_integer(d->ncores));
		jset(b, o, "cpus", jlist(b, d->cpus));
		japp(b, a, o);
	}
	return a;
}

static json_t *cpus_json(struct jb *b, const struct cc_topo *t, const struct cc_topo_view *view)
{
	json_t *a = json_array();

	if (!a) {
		b->failed = true;
		return NULL;
	}
	for (int i = 0; i < t->npus; i++) {
		const struct cc_pu *p = &t->pus[i];
		json_t *o = json_object();

		if (!o) {
			b->failed = true;
			break;
		}
		jset(b, o, "cpu", json_integer(p->os));
		jset(b, o, "core", jidx(p->core));
		jset(b, o, "package", jidx(p->package));
		jset(b, o, "numa", jidx(p->numa));
		jset(b, o, "l2", jidx(p->l2));
		jset(b, o, "llc", jidx(p->llc));
		jset(b, o, "class", p->cls >= 0 ? json_string(t->classes[p->cls].name) : json_null());
		if (p->core >= 0)
			jset(b, o, "siblings", jlist(b, t->cores[p->core].pus));
		else
			jset(b, o, "siblings", json_null());
		jset(b, o, "online", json_boolean(p->online));
		jset(b, o, "allowed", json_boolean(p->allowed));
		if (view && view->pu_labels && view->pu_labels[i])
			jset(b, o, "label", json_string(view->pu_labels[i]));
		japp(b, a, o);
	}
	return a;
}

json_t *cc_topo_json(const struct cc_topo *t, const struct cc_topo_view *view, struct cc_err *err)
{
	_cleanup_json_ json_t *o = json_object();
	struct jb b = { false };

	if (!o)
		return cc_err_sys(err, ENOMEM, "topology JSON"), NULL;
	/* Version 2: every array is named in the plural, as the text says
	 * "2 packages, 8 NUMA nodes"; version 1 had counts under those names
	 * and singular arrays (package, numa, llc, l2). */
	jset(&b, o, "schema_version", json_integer(2));
	jset(&b, o, "source", json_string(t->source));
	jset(&b, o, "class_source", json_string(t->class_source));
	{
		json_t *n = json_object();

		jset(&b, n, "packages", json_integer(t->npackages));
		jset(&b, n, "numa_nodes", json_integer(t->nnuma));
		jset(&b, n, "llcs", json_integer(t->nllcs));
		jset(&b, n, "l2s", json_integer(t->nl2s));
		jset(&b, n, "cores", json_integer(t->ncores));
		jset(&b, n, "pus", json_integer(cc_topo_online_pus(t)));
		jset(&b, o, "counts", n);
	}
	jset(&b, o, "online", jlist(&b, t->online));
	jset(&b, o, "offline", jlist(&b, t->offline));
	jset(&b, o, "allowed", jlist(&b, t->allowed));
	jset(&b, o, "present", jlist(&b, t->present));
	jset(&b, o, "possible", jlist(&b, t->possible));
	jset(&b, o, "classes", classes_json(&b, t));
	jset(&b, o, "clusters", clusters_json(&b, t));
	jset(&b, o, "packages", domains_json(&b, t->packages, t->npackages, "package", false));
	jset(&b, o, "numa_nodes", numa_json(&b, t));
	jset(&b, o, "llcs", domains_json(&b, t->llcs, t->nllcs, "llc", true));
	jset(&b, o, "l2s", domains_json(&b, t->l2s, t->nl2s, "l2", true));
	jset(&b, o, "cpus", cpus_json(&b, t, view));
	if (b.failed)
		return cc_err_sys(err, ENOMEM, "topology JSON"), NULL;
	return cc_steal_ptr(o);
}
