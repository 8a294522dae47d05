/* corecarve: the device plugin's decisions (devplugin.h): which devices a
 * class offers, their health, the preferred set and the grants. */
#define _GNU_SOURCE
#include "devplugin.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "cleanup.h"
#include "cpulist.h"

int cc_dp_resources(const struct cc_topo *t, const struct cc_policy *p, struct cc_dp_resource **out, int *n,
		    struct cc_err *err)
{
	struct cc_dp_resource *r = calloc((size_t)p->nclasses + 1, sizeof(*r));
	int k = 0;

	if (!r)
		return cc_err_sys(err, ENOMEM, "device plugin");
	for (int i = 0; i < p->nclasses; i++) {
		const struct cc_pclass *pc = &p->classes[i];
		struct cc_err why = CC_ERR_INIT;
		bool fell_back;
		int cls;

		if (!pc->exclusive)
			continue;
		cls = cc_alloc_core_class(t, pc, r[k].core_class, &fell_back, &why);
		if (cls < -1)
			continue; /* the host has no core of its type: nothing to offer */
		r[k].cls = cls;
		snprintf(r[k].class_name, sizeof(r[k].class_name), "%s", pc->name);
		cc_policy_resource_name(pc, r[k].name, sizeof(r[k].name));
		snprintf(r[k].endpoint, sizeof(r[k].endpoint), "corecarve-%s.sock", pc->name);
		k++;
	}
	*out = r;
	*n = k;
	return 0;
}

/* Whether carve `c` may hold a core of `r` and leave it Healthy: a grant
 * of r's own class (the kubelet gave it to a pod of r), or the container
 * carved from one. */
static bool own_grant(const struct cc_carve *c, const struct cc_dp_resource *r)
{
	return (!strcmp(c->kind, "grant") || c->grant[0]) && !strcmp(c->class_name, r->class_name);
}

static void health(struct cc_dp_device *d, const struct cc_topo *t, const struct cc_dp_resource *r,
		   const struct cc_ledger *l)
{
	const struct cc_carve *c;

	d->healthy = true;
	if (!l)
		return;
	cc_ledger_foreach_carve(l, i, c) {
		if (own_grant(c, r))
			continue;
		if (hwloc_bitmap_intersects(c->cpus, t->cores[d->core].pus) ||
		    hwloc_bitmap_intersects(c->parked, t->cores[d->core].pus)) {
			d->healthy = false;
			snprintf(d->holder, sizeof(d->holder), "held by %.15s %.200s", c->kind, c->id);
			return;
		}
	}
}

/* minShared: of the free cores (Healthy and held by nothing), those the
 * allocator's floors leave no room for are Unhealthy too, the highest
 * first, so that the kubelet never grants a core the hook would refuse
 * to carve and the capacity it publishes is what `corecarve status`
 * says fits. */
static int keep_shared(const struct cc_topo *t, const struct cc_policy *p, const struct cc_dp_resource *r,
		       const struct cc_ledger *l, struct cc_dp_device *d, int n)
{
	_cleanup_bitmap_ hwloc_bitmap_t taken = cc_ledger_taken(l);
	int budget, used = 0;

	if (!taken)
		return -1;
	budget = cc_alloc_budget(t, p, r->cls, taken);
	for (int i = 0; i < n; i++) {
		const struct cc_core *core = &t->cores[d[i].core];
		int npus = hwloc_bitmap_weight(core->pus);

		if (!d[i].healthy || hwloc_bitmap_intersects(core->pus, taken))
			continue;
		if (used + npus <= budget) {
			used += npus;
			continue;
		}
		d[i].healthy = false;
		snprintf(d[i].holder, sizeof(d[i].holder), "minShared (policy %.200s): kept shared", p->source);
	}
	return 0;
}

int cc_dp_devices(const struct cc_topo *t, const struct cc_policy *p, const struct cc_dp_resource *r,
		  const struct cc_ledger *l, struct cc_dp_device **out, int *n, struct cc_err *err)
{
	_cleanup_bitmap_ hwloc_bitmap_t reserved = cc_policy_reserved(p, t);
	struct cc_dp_device *d = calloc((size_t)t->ncores + 1, sizeof(*d));
	int k = 0;

	if (!d || !reserved) {
		free(d);
		return cc_err_sys(err, ENOMEM, "device plugin");
	}
	for (int pu = 0; pu < t->npus; pu++) {
		const struct cc_pu *u = &t->pus[pu];
		const struct cc_core *core;

		if (u->core < 0)
			continue;
		core = &t->cores[u->core];
		/* Each core once, at its lowest CPU (pus is sorted by os). */
		if (hwloc_bitmap_first(core->pus) != u->os)
			continue;
		if ((r->cls >= 0 && core->cls != r->cls) || hwloc_bitmap_intersects(core->pus, reserved))
			continue;
		d[k].cpu = u->os;
		d[k].core = u->core;
		d[k].numa = core->numa >= 0 ? t->numa[core->numa].os : -1;
		health(&d[k], t, r, l);
		k++;
	}
	if (l && keep_shared(t, p, r, l, d, k) < 0) {
		free(d);
		return cc_err_sys(err, ENOMEM, "device plugin");
	}
	*out = d;
	*n = k;
	return 0;
}

int cc_dp_parse_id(const struct cc_topo *t, const char *id, struct cc_err *err)
{
	char *end;
	long cpu;

	if (strncmp(id, "cpu", 3) || id[3] < '0' || id[3] > '9')
		return cc_err_set(err, EINVAL, "device \"%.64s\": expected cpu<N>", id);
	errno = 0;
	cpu = strtol(id + 3, &end, 10);
	if (*end || errno || (id[3] == '0' && id[4]))
		return cc_err_set(err, EINVAL, "device \"%.64s\": expected cpu<N>", id);
	for (int i = 0; i < t->npus; i++) {
		if (t->pus[i].os != cpu)
			continue;
		if (t->pus[i].core < 0 || hwloc_bitmap_first(t->cores[t->pus[i].core].pus) != cpu)
			break;
		return t->pus[i].core;
	}
	return cc_err_set(err, EINVAL, "device %s: no core of this node has CPU %ld as its lowest", id, cpu);
}

/* The CPUs of the cores the IDs name; -1 on an ID that names none. */
static int ids_cpus(const struct cc_topo *t, char *const *ids, int n, hwloc_bitmap_t out, struct cc_err *err)
{
	for (int i = 0; i < n; i++) {
		int core = cc_dp_parse_id(t, ids[i], err);

		if (core < 0)
			return -1;
		hwloc_bitmap_or(out, out, t->cores[core].pus);
	}
	return 0;
}

static int add_id(char **out, int *k, int cpu, struct cc_err *err)
{
	if (asprintf(&out[*k], "cpu%d", cpu) < 0)
		return cc_err_sys(err, ENOMEM, "device plugin");
	(*k)++;
	return 0;
}

/* The allocator's choice of `want` cores among `offer`. */
static int choose(const struct cc_devplugin *dp, const struct cc_dp_resource *r, hwloc_const_bitmap_t offer, int want,
		  hwloc_bitmap_t got)
{
	const struct cc_pclass *pc = cc_policy_class(dp->p, r->class_name);
	_cleanup_bitmap_ hwloc_bitmap_t taken = hwloc_bitmap_dup(dp->t->online);
	struct cc_err why = CC_ERR_INIT;
	struct cc_request req;
	struct cc_decision d;
	int tpc = r->cls >= 0 ? dp->t->classes[r->cls].threads_per_core : 1;

	if (!pc || !taken || want <= 0)
		return -1;
	hwloc_bitmap_andnot(taken, taken, offer);
	memset(&req, 0, sizeof(req));
	snprintf(req.class_name, sizeof(req.class_name), "%s", r->class_name);
	/* smt: isolate carves a core per CPU asked (its siblings parked),
	 * smt: full every thread of each core. */
	req.cpus = pc->smt == CC_SMT_FULL ? want * (tpc > 0 ? tpc : 1) : want;
	if (cc_allocate(dp->t, dp->p, taken, &req, &d, &why) < 0)
		return -1;
	hwloc_bitmap_or(got, d.cpus, d.parked);
	cc_decision_fini(&d);
	return 0;
}

int cc_dp_preferred(const struct cc_devplugin *dp, const struct cc_dp_resource *r, char *const *avail, int navail,
		    char *const *must, int nmust, int size, char ***out, struct cc_err *err)
{
	_cleanup_bitmap_ hwloc_bitmap_t offer = hwloc_bitmap_alloc(), musts = hwloc_bitmap_alloc();
	_cleanup_bitmap_ hwloc_bitmap_t got = hwloc_bitmap_alloc();
	char **ids;
	int k = 0;

	if (!offer || !musts || !got)
		return cc_err_sys(err, ENOMEM, "device plugin");
	if (size < 0 || size > navail || nmust > size)
		return cc_err_set(err, EINVAL, "allocation_size %d: expected %d..%d (must-include %d, available %d)", size,
				  nmust, navail, nmust, navail);
	if (ids_cpus(dp->t, avail, navail, offer, err) < 0 || ids_cpus(dp->t, must, nmust, musts, err) < 0)
		return -1;
	hwloc_bitmap_andnot(offer, offer, musts);
	ids = calloc((size_t)size + 1, sizeof(*ids));
	if (!ids)
		return cc_err_sys(err, ENOMEM, "device plugin");
	for (int i = 0; i < nmust; i++)
		if (add_id(ids, &k, hwloc_bitmap_first(dp->t->cores[cc_dp_parse_id(dp->t, must[i], err)].pus), err) < 0)
			goto fail;
	if (choose(dp, r, offer, size - nmust, got) == 0) {
		for (int c = 0; c < dp->t->ncores && k < size; c++)
			if (hwloc_bitmap_isincluded(dp->t->cores[c].pus, got) && !hwloc_bitmap_iszero(dp->t->cores[c].pus) &&
			    add_id(ids, &k, hwloc_bitmap_first(dp->t->cores[c].pus), err) < 0)
				goto fail;
	}
	/* The allocator refused (or chose fewer): the offered ones in order. */
	for (int i = 0; i < navail && k < size; i++) {
		int core = cc_dp_parse_id(dp->t, avail[i], err);
		bool have = false;

		for (int j = 0; j < k; j++)
			have |= !strcmp(ids[j], avail[i]);
		if (!have && add_id(ids, &k, hwloc_bitmap_first(dp->t->cores[core].pus), err) < 0)
			goto fail;
	}
	*out = ids;
	return 0;
fail:
	for (int i = 0; i < k; i++)
		free(ids[i]);
	free(ids);
	return -1;
}
