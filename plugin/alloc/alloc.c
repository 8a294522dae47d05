/* corecarve: the allocator.  See docs/allocator.md for the rules, and
 * alloc_int.h for how its files divide the work.
 *
 * Works on core ids (indexes into topo->cores) in plain int arrays; bitmaps
 * are built only for the decision.  Packing is hierarchical best fit:
 * NUMA node, then package (for nodes that span packages), then LLC, then
 * L2, then lowest core id.  At each level the
 * fewest domains that can hold the request are chosen; among those, the
 * closest (NUMA distance) and then the fullest (fewest free cores), then the
 * lowest ids, so the same input always gives the same carve.
 *
 * This file: the entry points, the core class a placement class resolves
 * to, and the parts of a decision both kinds of carve fill.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc_int.h"
#include "cleanup.h"

/* Names "a, b" in buf ("none" for none): the classes an error lists. */
static void join_names(char *buf, size_t len, int n, const char *(*name_at)(const void *, int), const void *from)
{
	size_t off = 0;

	snprintf(buf, len, "none");
	for (int i = 0; i < n && off < len; i++)
		off += (size_t)snprintf(buf + off, len - off, "%s%s", i ? ", " : "", name_at(from, i));
}

static const char *policy_class_name(const void *p, int i)
{
	return ((const struct cc_policy *)p)->classes[i].name;
}

static const char *topo_class_name(const void *t, int i)
{
	return ((const struct cc_topo *)t)->classes[i].name;
}

/* The policy's placement classes, for an unknown one. */
static void known_classes(const struct cc_policy *p, char *buf, size_t len)
{
	join_names(buf, len, p->nclasses, policy_class_name, p);
}

/* The host's core classes, for a class it has none of. */
static void host_classes(const struct cc_topo *t, char *buf, size_t len)
{
	join_names(buf, len, t->nclasses, topo_class_name, t);
}

/* Resolve the core class: its index, or -1 for "any".  -2 with err set. */
int alloc_resolve_class(const struct cc_topo *t, const struct cc_pclass *pc, struct cc_decision *d,
			struct cc_err *err)
{
	char names[512];
	int ci;

	if (strcmp(pc->core_type, "any") == 0) {
		snprintf(d->core_class, sizeof(d->core_class), "any");
		return -1;
	}
	ci = cc_topo_class_index(t, pc->core_type);
	if (ci >= 0) {
		snprintf(d->core_class, sizeof(d->core_class), "%s", t->classes[ci].name);
		return ci;
	}
	host_classes(t, names, sizeof(names));
	if (!pc->fallback[0]) {
		cc_err_set(err, EINVAL, "class %s: host has no %s cores (host classes: %s) and the class has no fallback",
			   pc->name, pc->core_type, names);
		return -2;
	}
	if (strcmp(pc->fallback, "any") == 0)
		ci = -1;
	else if ((ci = cc_topo_class_index(t, pc->fallback)) < 0) {
		cc_err_set(err, EINVAL, "class %s: host has no %s cores and no %s cores for the fallback (host classes: %s)",
			   pc->name, pc->core_type, pc->fallback, names);
		return -2;
	}
	d->fell_back = true;
	snprintf(d->core_class, sizeof(d->core_class), "%s", ci < 0 ? "any" : t->classes[ci].name);
	alloc_warn(d, "%s: host has no %s cores; using %s", pc->name, pc->core_type, pc->fallback);
	return ci;
}

/* Count distinct domains of `level` touched by a set of PUs. */
static int count_domains(const struct cc_topo *t, hwloc_const_bitmap_t set, enum alloc_level level)
{
	int nd = alloc_level_ndom(t, level), n = 0;
	_cleanup_free_ bool *seen = calloc((size_t)nd + 1, sizeof(bool));
	int os;

	if (!seen)
		return 0;
	hwloc_bitmap_foreach_begin(os, set)
	{
		int pi = cc_topo_pu_index(t, os), d;

		if (pi < 0)
			continue;
		d = level == LVL_NUMA ? t->pus[pi].numa : level == LVL_LLC ? t->pus[pi].llc : t->pus[pi].l2;
		if (d >= 0 && d < nd && !seen[d]) {
			seen[d] = true;
			n++;
		}
	}
	hwloc_bitmap_foreach_end();
	return n;
}

/* cpuset.mems for the decision.  Empty when the topology has no NUMA
 * information: the apply step then leaves cpuset.mems as it is. */
void alloc_fill_mems(const struct cc_topo *t, struct cc_decision *d, int cls)
{
	int os;

	hwloc_bitmap_zero(d->mems);
	if (t->nnuma <= 0)
		return;
	switch (d->memory) {
	case CC_MEM_LOCAL:
		hwloc_bitmap_foreach_begin(os, d->cpus)
		{
			int pi = cc_topo_pu_index(t, os);

			if (pi < 0 || t->pus[pi].numa < 0 || t->pus[pi].numa >= t->nnuma) {
				hwloc_bitmap_zero(d->mems);
				return;
			}
			hwloc_bitmap_set(d->mems, (unsigned)t->numa[t->pus[pi].numa].os);
		}
		hwloc_bitmap_foreach_end();
		break;
	case CC_MEM_SPREAD:
		for (int i = 0; i < t->nnuma; i++) {
			bool has = cls < 0 ? !hwloc_bitmap_iszero(t->numa[i].cpus)
					   : hwloc_bitmap_intersects(t->numa[i].cpus, t->classes[cls].cpus);

			if (has)
				hwloc_bitmap_set(d->mems, (unsigned)t->numa[i].os);
		}
		break;
	case CC_MEM_ANY:
		for (int i = 0; i < t->nnuma; i++)
			hwloc_bitmap_set(d->mems, (unsigned)t->numa[i].os);
		break;
	}
}

/* How many NUMA nodes, LLCs and L2s the decision's CPUs touch. */
void alloc_fill_spans(const struct cc_topo *t, struct cc_decision *d)
{
	d->numa_nodes = count_domains(t, d->cpus, LVL_NUMA);
	d->llcs = count_domains(t, d->cpus, LVL_LLC);
	d->l2s = count_domains(t, d->cpus, LVL_L2);
}

int cc_allocate(const struct cc_topo *t, const struct cc_policy *p, hwloc_const_bitmap_t taken,
		const struct cc_request *req, struct cc_decision *out, struct cc_err *err)
{
	const struct cc_pclass *pc;
	_cleanup_bitmap_ hwloc_bitmap_t reserved = NULL;
	struct alloc_ctx cx = { .t = t };
	int cls, r;

	memset(out, 0, sizeof(*out));
	snprintf(out->class_name, sizeof(out->class_name), "%s", req->class_name);
	pc = cc_policy_class(p, req->class_name);
	if (!pc) {
		char names[512];

		known_classes(p, names, sizeof(names));
		return cc_err_set(err, EINVAL, "unknown placement class \"%s\" (known: %s)", req->class_name, names);
	}
	/* Here, where the overrides take effect: no caller can apply an
	 * override its class does not grant an annotation, and the refusal
	 * comes before anything is decided, let alone written. */
	if (req->annotation[0] && cc_request_permitted(req, pc, err) < 0)
		return cc_err_prefix(err, "annotation %s", req->annotation);
	out->exclusive = pc->exclusive;
	out->smt = req->has_smt ? req->smt : pc->smt;
	out->memory = req->has_memory ? req->memory : pc->memory;
	out->irq = req->has_irq ? req->irq : pc->irq;
	out->partition = pc->partition;
	out->quota = pc->quota;

	cls = alloc_resolve_class(t, pc, out, err);
	if (cls == -2)
		goto fail;
	out->cpus = hwloc_bitmap_alloc();
	out->parked = hwloc_bitmap_alloc();
	out->mems = hwloc_bitmap_alloc();
	reserved = cc_policy_reserved(p, t);
	cx.dist = alloc_distances(t);
	if (!out->cpus || !out->parked || !out->mems || !reserved || !cx.dist) {
		cc_err_set(err, ENOMEM, "out of memory");
		goto fail;
	}
	if (!pc->exclusive) {
		if (req->cpus < 0) {
			cc_err_set(err, EINVAL, "class %s: cpus must not be negative, got %d", out->class_name, req->cpus);
			goto fail;
		}
		r = alloc_shared(t, req, cls, reserved, taken, out, err);
	} else {
		r = alloc_exclusive(&cx, pc, p, req, cls, reserved, taken, out, err);
	}
	free(cx.dist);
	if (r == 0)
		return 0;
	cc_decision_fini(out);
	return -1;
fail:
	free(cx.dist);
	cc_decision_fini(out);
	return -1;
}

int cc_alloc_core_class(const struct cc_topo *t, const struct cc_pclass *pc, char name[CC_NAME_MAX],
			bool *fell_back, struct cc_err *err)
{
	struct cc_decision d;
	int ci;

	memset(&d, 0, sizeof(d));
	ci = alloc_resolve_class(t, pc, &d, err);
	snprintf(name, CC_NAME_MAX, "%s", ci == -2 ? "" : d.core_class);
	if (fell_back)
		*fell_back = d.fell_back;
	return ci;
}

void cc_decision_fini(struct cc_decision *d)
{
	if (!d)
		return;
	hwloc_bitmap_free(d->cpus);
	hwloc_bitmap_free(d->parked);
	hwloc_bitmap_free(d->mems);
	d->cpus = d->parked = d->mems = NULL;
}
