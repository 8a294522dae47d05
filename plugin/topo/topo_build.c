/* corecarve: the model of topo.h built from a loaded hwloc topology
 * (topo_int.h): cores in locality order, their packages, caches and NUMA
 * nodes, every PU, and the core classes. */
#define _GNU_SOURCE
#include "topo_int.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "classes.h"
#include "cleanup.h"

/* Objects already turned into domains, looked up from the most recent (the
 * tree is walked in order, so hits are almost always at the end). */
struct objmap {
	hwloc_obj_t *objs;
	int n, cap;
};

static int objmap_find_or_add(struct objmap *m, hwloc_obj_t obj)
{
	for (int i = m->n; i-- > 0;)
		if (m->objs[i] == obj)
			return i;
	if (m->n == m->cap) {
		int cap = m->cap ? m->cap * 2 : 16;
		hwloc_obj_t *o = realloc(m->objs, (size_t)cap * sizeof(*o));

		if (!o)
			return -1;
		m->objs = o;
		m->cap = cap;
	}
	m->objs[m->n] = obj;
	return m->n++;
}

static void objmap_free(struct objmap *m)
{
	free(m->objs);
}

static int domains_alloc(struct cc_domain **d, int n)
{
	*d = calloc((size_t)(n ? n : 1), sizeof(**d));
	if (!*d)
		return -1;
	for (int i = 0; i < n; i++) {
		(*d)[i].id = i;
		(*d)[i].os = -1;
		(*d)[i].package = -1;
		(*d)[i].numa = -1;
		(*d)[i].cpus = hwloc_bitmap_alloc();
		(*d)[i].cores = hwloc_bitmap_alloc();
		if (!(*d)[i].cpus || !(*d)[i].cores)
			return -1;
	}
	return 0;
}

void topo_domains_free(struct cc_domain *d, int n)
{
	if (!d)
		return;
	for (int i = 0; i < n; i++) {
		hwloc_bitmap_free(d[i].cpus);
		hwloc_bitmap_free(d[i].cores);
	}
	free(d);
}

/* A package is what no cache spans.  Some ARM SoCs report each cluster
 * as its own physical_package_id (core_id restarting per cluster) while
 * one L3 covers all of them, and hwloc then puts the L3 above the
 * "packages".  Real sockets never share a cache, so packages under a
 * common cache are one package; it keeps the lowest id. */
static hwloc_obj_t package_key(hwloc_obj_t core)
{
	hwloc_obj_t pkg = NULL, top = NULL;

	for (hwloc_obj_t o = core; o; o = o->parent)
		if (o->type == HWLOC_OBJ_PACKAGE) {
			pkg = o;
			break;
		}
	if (!pkg)
		return NULL;
	for (hwloc_obj_t o = pkg->parent; o; o = o->parent)
		if (hwloc_obj_type_is_dcache(o->type))
			top = o;
	return top ? top : pkg;
}

static int obj_os(hwloc_obj_t o)
{
	return o && o->os_index != HWLOC_UNKNOWN_INDEX ? (int)o->os_index : -1;
}

/* What topo_build_structure gathers while it walks the PUs: the domains
 * met so far, and each core's index into them (-2: none of that kind)
 * until the domains exist. */
struct build {
	struct objmap pk, l2, llc, cores;
	int *core_pkg, *core_l2, *core_llc;
	int *llc_level;
};

/* A new core, first seen at `pu`, with the domains above it.  -1: out of
 * memory. */
static int add_core(struct build *b, struct cc_topo *topo, hwloc_obj_t core, hwloc_obj_t pu)
{
	hwloc_obj_t l2obj = NULL, llcobj = NULL, key;
	struct cc_core *c;
	int id;

	if (objmap_find_or_add(&b->cores, core) < 0)
		return -1;
	id = topo->ncores++;
	c = &topo->cores[id];
	c->id = id;
	c->numa = c->cls = -1;
	c->pus = hwloc_bitmap_alloc();
	if (!c->pus)
		return -1;
	hwloc_bitmap_set(c->pus, pu->os_index);
	c->npus = 1;
	b->llc_level[id] = 0;
	for (hwloc_obj_t o = core->parent; o; o = o->parent) {
		if (!hwloc_obj_type_is_dcache(o->type))
			continue;
		if (!l2obj && o->attr->cache.depth == 2)
			l2obj = o;
		if (!llcobj || o->attr->cache.depth > llcobj->attr->cache.depth)
			llcobj = o;
	}
	key = package_key(core);
	b->core_pkg[id] = objmap_find_or_add(&b->pk, key);
	b->core_l2[id] = l2obj ? objmap_find_or_add(&b->l2, l2obj) : -2;
	b->core_llc[id] = llcobj ? objmap_find_or_add(&b->llc, llcobj) : -2;
	if (b->core_pkg[id] < 0 || b->core_l2[id] == -1 || b->core_llc[id] == -1)
		return -1;
	if (llcobj)
		b->llc_level[id] = (int)llcobj->attr->cache.depth;
	return 0;
}

/* Cores in hwloc's logical order (locality order: package, cache, core),
 * so neighbouring core ids are close in the machine.  The PUs of a core
 * are consecutive in that order.  -1: out of memory. */
static int walk_pus(hwloc_topology_t t, struct cc_topo *topo, hwloc_const_bitmap_t online, struct build *b)
{
	hwloc_obj_t pu = NULL, prev_core = NULL;

	while ((pu = hwloc_get_next_obj_by_type(t, HWLOC_OBJ_PU, pu))) {
		hwloc_obj_t core = hwloc_get_ancestor_obj_by_type(t, HWLOC_OBJ_CORE, pu);

		if (!hwloc_bitmap_isset(online, pu->os_index))
			continue;
		if (!core)
			core = pu; /* a topology without cores: each PU is one */
		if (core == prev_core) {
			hwloc_bitmap_set(topo->cores[topo->ncores - 1].pus, pu->os_index);
			topo->cores[topo->ncores - 1].npus++;
			continue;
		}
		prev_core = core;
		if (add_core(b, topo, core, pu) < 0)
			return -1;
	}
	return 0;
}

/* The allocated domains' OS ids, cache levels and sizes, and the NUMA
 * nodes' online CPUs. */
static void describe_domains(hwloc_topology_t t, struct cc_topo *topo, hwloc_const_bitmap_t online,
			     const struct build *b)
{
	for (int i = 0; i < b->pk.n; i++) {
		/* The lowest physical id among merged packages. */
		hwloc_obj_t p = NULL;

		while ((p = hwloc_get_next_obj_by_type(t, HWLOC_OBJ_PACKAGE, p)))
			if (b->pk.objs[i] && (p == b->pk.objs[i] || hwloc_obj_is_in_subtree(t, p, b->pk.objs[i])) &&
			    (topo->packages[i].os < 0 || obj_os(p) < topo->packages[i].os))
				topo->packages[i].os = obj_os(p);
	}
	for (int i = 0; i < b->l2.n; i++) {
		topo->l2s[i].os = obj_os(b->l2.objs[i]);
		topo->l2s[i].level = 2;
		topo->l2s[i].size = b->l2.objs[i]->attr->cache.size;
	}
	for (int i = 0; i < b->llc.n; i++) {
		topo->llcs[i].os = obj_os(b->llc.objs[i]);
		topo->llcs[i].level = (int)b->llc.objs[i]->attr->cache.depth;
		topo->llcs[i].size = b->llc.objs[i]->attr->cache.size;
	}
	for (int i = 0; i < topo->nnuma; i++) {
		hwloc_obj_t n = hwloc_get_obj_by_type(t, HWLOC_OBJ_NUMANODE, (unsigned)i);

		topo->numa[i].os = obj_os(n);
		hwloc_bitmap_and(topo->numa[i].cpus, n->cpuset, online);
	}
}

/* Each core's package, caches and NUMA node, now that the domains exist. */
static void link_cores(struct cc_topo *topo, const struct build *b)
{
	for (int id = 0; id < topo->ncores; id++) {
		struct cc_core *c = &topo->cores[id];

		c->package = b->core_pkg[id];
		c->l2 = b->core_l2[id] >= 0 ? b->core_l2[id] : -1;
		c->llc = b->core_llc[id] >= 0 ? b->core_llc[id] : -1;
		/* The first node (logical order: DRAM before HBM or CXL
		 * memory) whose CPUs include the core's. */
		for (int n = 0; n < topo->nnuma; n++)
			if (hwloc_bitmap_isincluded(c->pus, topo->numa[n].cpus)) {
				c->numa = n;
				break;
			}
	}
}

/* Every core, PU and domain of the machine, built from hwloc. */
int topo_build_structure(hwloc_topology_t t, struct cc_topo *topo, hwloc_const_bitmap_t online,
			 int *llc_level, struct cc_err *err)
{
	struct build b = { .llc_level = llc_level };
	int nnuma = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_NUMANODE);
	int npu = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PU);
	_cleanup_free_ int *core_pkg = NULL, *core_l2 = NULL, *core_llc = NULL;
	int rc = -1;

	if (npu <= 0)
		return cc_err_set(err, EINVAL, "the topology has no CPU");
	b.core_pkg = core_pkg = malloc((size_t)npu * sizeof(int));
	b.core_l2 = core_l2 = malloc((size_t)npu * sizeof(int));
	b.core_llc = core_llc = malloc((size_t)npu * sizeof(int));
	topo->cores = calloc((size_t)npu, sizeof(*topo->cores));
	if (!core_pkg || !core_l2 || !core_llc || !topo->cores)
		goto nomem;
	if (walk_pus(t, topo, online, &b) < 0)
		goto nomem;
	if (topo->ncores == 0) {
		cc_err_set(err, EINVAL, "the topology has no online CPU");
		goto out;
	}

	topo->npackages = b.pk.n;
	topo->nl2s = b.l2.n;
	topo->nllcs = b.llc.n;
	topo->nnuma = nnuma > 0 ? nnuma : 0;
	if (domains_alloc(&topo->packages, b.pk.n) < 0 || domains_alloc(&topo->l2s, b.l2.n) < 0 ||
	    domains_alloc(&topo->llcs, b.llc.n) < 0 || domains_alloc(&topo->numa, topo->nnuma) < 0)
		goto nomem;
	describe_domains(t, topo, online, &b);
	link_cores(topo, &b);
	rc = 0;
	goto out;
nomem:
	cc_err_sys(err, ENOMEM, "topology");
out:
	objmap_free(&b.pk);
	objmap_free(&b.l2);
	objmap_free(&b.llc);
	objmap_free(&b.cores);
	return rc;
}

/* Fill the cpus/cores of each domain from its cores, and the enclosing
 * package / NUMA node of each domain when a single one holds it. */
void topo_fill_domains(struct cc_topo *topo)
{
	struct {
		struct cc_domain *d;
		int n;
		size_t off; /* member of struct cc_core pointing into d */
	} kinds[] = {
		{ topo->packages, topo->npackages, offsetof(struct cc_core, package) },
		{ topo->numa, topo->nnuma, offsetof(struct cc_core, numa) },
		{ topo->llcs, topo->nllcs, offsetof(struct cc_core, llc) },
		{ topo->l2s, topo->nl2s, offsetof(struct cc_core, l2) },
	};

	for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		for (int i = 0; i < kinds[k].n; i++) {
			struct cc_domain *d = &kinds[k].d[i];
			bool first = true;

			for (int id = 0; id < topo->ncores; id++) {
				const struct cc_core *c = &topo->cores[id];

				if (*(const int *)((const char *)c + kinds[k].off) != i)
					continue;
				hwloc_bitmap_or(d->cpus, d->cpus, c->pus);
				hwloc_bitmap_set(d->cores, (unsigned)id);
				d->ncores++;
				if (k == 0)
					continue;
				if (first) {
					d->package = c->package;
					d->numa = k >= 2 ? c->numa : -1;
					first = false;
					continue;
				}
				if (d->package != c->package)
					d->package = -1;
				if (k >= 2 && d->numa != c->numa)
					d->numa = -1;
			}
		}
	}
}

int topo_build_pus(struct cc_topo *topo, hwloc_const_bitmap_t online)
{
	_cleanup_bitmap_ hwloc_bitmap_t all = hwloc_bitmap_alloc();
	int cpu, n = 0;

	if (!all)
		return -1;
	hwloc_bitmap_or(all, online, topo->offline);
	topo->npus = hwloc_bitmap_weight(all);
	topo->pus = calloc((size_t)topo->npus, sizeof(*topo->pus));
	if (!topo->pus)
		return -1;
	hwloc_bitmap_foreach_begin(cpu, all)
	{
		struct cc_pu *p = &topo->pus[n++];

		p->os = cpu;
		p->core = p->package = p->numa = p->l2 = p->llc = p->cls = -1;
		p->online = hwloc_bitmap_isset(online, (unsigned)cpu);
		p->allowed = p->online && hwloc_bitmap_isset(topo->allowed, (unsigned)cpu);
	}
	hwloc_bitmap_foreach_end();
	for (int id = 0; id < topo->ncores; id++) {
		const struct cc_core *c = &topo->cores[id];

		hwloc_bitmap_foreach_begin(cpu, c->pus)
		{
			struct cc_pu *p = &topo->pus[cc_topo_pu_index(topo, cpu)];

			p->core = id;
			p->package = c->package;
			p->numa = c->numa;
			p->l2 = c->l2;
			p->llc = c->llc;
		}
		hwloc_bitmap_foreach_end();
	}
	return 0;
}

static unsigned long info_ulong(const struct hwloc_info_s *infos, unsigned n, const char *name)
{
	for (unsigned i = 0; i < n; i++)
		if (strcmp(infos[i].name, name) == 0 && infos[i].value)
			return strtoul(infos[i].value, NULL, 10);
	return 0;
}

/* Per-core facts for the class rules: hybrid PMU membership, cache
 * levels, and hwloc's CPU kinds with their infos. */
static int collect_facts(hwloc_topology_t t, const struct cc_topo *topo, const struct topo_cpu_state *cs,
			 const int *llc_level, struct cc_core_facts *f, struct cc_err *err)
{
	_cleanup_bitmap_ hwloc_bitmap_t kset = hwloc_bitmap_alloc();
	int nkinds = hwloc_cpukinds_get_nr(t, 0);

	if (!kset)
		return cc_err_sys(err, ENOMEM, "topology");
	for (int id = 0; id < topo->ncores; id++) {
		const struct cc_core *c = &topo->cores[id];

		memset(&f[id], 0, sizeof(f[id]));
		f[id].efficiency = -1;
		f[id].llc_level = llc_level[id];
		if (cs && cs->pmu_core && hwloc_bitmap_isincluded(c->pus, cs->pmu_core))
			f[id].pmu = CC_PMU_CORE;
		else if (cs && cs->pmu_atom && hwloc_bitmap_isincluded(c->pus, cs->pmu_atom))
			f[id].pmu = CC_PMU_ATOM;
	}
	for (int k = 0; k < nkinds; k++) {
		struct hwloc_info_s *infos = NULL;
		unsigned ninfos = 0;
		int eff = -1;

		if (hwloc_cpukinds_get_info(t, (unsigned)k, kset, &eff, &ninfos, &infos, 0) < 0)
			continue;
		for (int id = 0; id < topo->ncores; id++) {
			struct cc_core_facts *cf = &f[id];

			if (!hwloc_bitmap_isset(kset, (unsigned)hwloc_bitmap_first(topo->cores[id].pus)))
				continue;
			cf->efficiency = eff;
			for (unsigned i = 0; i < ninfos; i++)
				if (strcmp(infos[i].name, "CoreType") == 0 && infos[i].value)
					snprintf(cf->core_type, sizeof(cf->core_type), "%s", infos[i].value);
			cf->base_mhz = info_ulong(infos, ninfos, "FrequencyBaseMHz");
			cf->max_mhz = info_ulong(infos, ninfos, "FrequencyMaxMHz");
			cf->capacity = info_ulong(infos, ninfos, "LinuxCapacity");
		}
	}
	return 0;
}

int topo_build_classes(hwloc_topology_t t, struct cc_topo *topo, const struct cc_topo_source *src,
		       const struct cc_class_override *syn, int nsyn, const struct topo_cpu_state *cs,
		       const int *llc_level, struct cc_err *err)
{
	_cleanup_free_ struct cc_core_facts *facts = calloc((size_t)topo->ncores, sizeof(*facts));
	_cleanup_free_ int *core_class = calloc((size_t)topo->ncores, sizeof(int));
	_cleanup_free_ hwloc_const_bitmap_t *core_pus = calloc((size_t)topo->ncores, sizeof(*core_pus));
	_cleanup_bitmap_ hwloc_bitmap_t known = hwloc_bitmap_alloc();
	struct cc_classing cl;
	int r;

	if (!facts || !core_class || !core_pus || !known)
		return cc_err_sys(err, ENOMEM, "topology");
	for (int id = 0; id < topo->ncores; id++)
		core_pus[id] = topo->cores[id].pus;
	hwloc_bitmap_or(known, topo->present, topo->online);
	if (src->noverrides > 0)
		r = cc_classify_override(src->overrides, src->noverrides, core_pus, topo->ncores, topo->online,
					 known, "coreClasses", core_class, &cl, err);
	else if (nsyn > 0)
		r = cc_classify_override(syn, nsyn, core_pus, topo->ncores, topo->online, known,
					 "synthetic classes", core_class, &cl, err);
	else if ((r = collect_facts(t, topo, cs, llc_level, facts, err)) == 0)
		r = cc_classify(facts, topo->ncores, core_class, &cl, err);
	if (r < 0)
		return -1;
	if (nsyn > 0 && src->noverrides <= 0) {
		snprintf(cl.source, sizeof(cl.source), "synthetic");
		for (int k = 0; k < cl.nclasses; k++)
			snprintf(cl.classes[k].kind, sizeof(cl.classes[k].kind), "synthetic");
	}

	topo->classes = calloc((size_t)cl.nclasses, sizeof(*topo->classes));
	if (!topo->classes)
		return cc_err_sys(err, ENOMEM, "topology");
	topo->nclasses = cl.nclasses;
	snprintf(topo->class_source, sizeof(topo->class_source), "%s", cl.source);
	for (int k = 0; k < cl.nclasses; k++) {
		struct cc_class *c = &topo->classes[k];

		snprintf(c->name, sizeof(c->name), "%s", cl.classes[k].name);
		snprintf(c->kind, sizeof(c->kind), "%s", cl.classes[k].kind);
		c->rank = k;
		c->cpus = hwloc_bitmap_alloc();
		c->cores = hwloc_bitmap_alloc();
		if (!c->cpus || !c->cores)
			return cc_err_sys(err, ENOMEM, "topology");
	}
	for (int id = 0; id < topo->ncores; id++) {
		struct cc_core *core = &topo->cores[id];
		struct cc_class *c = &topo->classes[core_class[id]];
		int cpu;

		core->cls = core_class[id];
		hwloc_bitmap_or(c->cpus, c->cpus, core->pus);
		hwloc_bitmap_set(c->cores, (unsigned)id);
		c->ncores++;
		if (core->npus > c->threads_per_core)
			c->threads_per_core = core->npus;
		hwloc_bitmap_foreach_begin(cpu, core->pus)
		{
			topo->pus[cc_topo_pu_index(topo, cpu)].cls = core->cls;
		}
		hwloc_bitmap_foreach_end();
	}
	return 0;
}
