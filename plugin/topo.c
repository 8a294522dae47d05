/* corecarve: topology discovery.  hwloc reads the machine (the host, a
 * captured tree under a root, an XML export or a synthetic description);
 * sysfs through the cc_root fills in what hwloc 2.9 does not read (online,
 * present and possible CPUs, the hybrid PMU lists); the result is copied
 * into the plain model of topo.h and hwloc is released. */
#define _GNU_SOURCE
#include "topo.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "classes.h"
#include "cleanup.h"
#include "cpulist.h"

static void cc_hwloc_destroyp(hwloc_topology_t *t)
{
	if (*t)
		hwloc_topology_destroy(*t);
}
#define _cleanup_hwloc_ __attribute__((cleanup(cc_hwloc_destroyp)))

static const char cpu_dir[] = "/sys/devices/system/cpu";

/* ---- loading hwloc ---------------------------------------------------- */

/* hwloc 2.9 quirk: the Linux backend takes its filesystem root only from
 * the HWLOC_FSROOT environment variable (there is no API setter since
 * hwloc 2.0), and unless HWLOC_COMPONENTS=linux,stop the x86 backend would
 * mix the running machine's CPUID into a captured tree.  HWLOC_HIDE_ERRORS=2
 * keeps hwloc from printing its own diagnostics (we report one line), and
 * HWLOC_XMLFILE / HWLOC_SYNTHETIC from the caller's environment must not
 * replace what the caller asked for.  The variables are set only around
 * hwloc_topology_load() and restored after it; this is the only place
 * corecarve touches the environment below the entry points (single-threaded
 * CLI and hook processes). */
static int hwloc_load_with_env(hwloc_topology_t t, const struct cc_root *fsroot)
{
	struct {
		const char *name;
		const char *value; /* NULL: unset during the load */
		char *saved;
		bool had;
	} env[] = {
		{ "HWLOC_FSROOT", fsroot ? fsroot->path : NULL, NULL, false },
		{ "HWLOC_COMPONENTS", fsroot ? "linux,stop" : NULL, NULL, false },
		{ "HWLOC_HIDE_ERRORS", "2", NULL, false },
		{ "HWLOC_XMLFILE", NULL, NULL, false },
		{ "HWLOC_SYNTHETIC", NULL, NULL, false },
	};
	size_t n = sizeof(env) / sizeof(env[0]);
	int r, saved_errno;

	for (size_t i = 0; i < n; i++) {
		const char *old = getenv(env[i].name);

		/* HWLOC_COMPONENTS is an administrator's knob on the host
		 * (e.g. to disable a buggy backend): keep it there. */
		if (!fsroot && strcmp(env[i].name, "HWLOC_COMPONENTS") == 0)
			continue;
		env[i].had = old != NULL;
		env[i].saved = old ? strdup(old) : NULL;
		if (env[i].value)
			setenv(env[i].name, env[i].value, 1);
		else
			unsetenv(env[i].name);
	}
	r = hwloc_topology_load(t);
	saved_errno = errno;
	for (size_t i = 0; i < n; i++) {
		if (!fsroot && strcmp(env[i].name, "HWLOC_COMPONENTS") == 0)
			continue;
		if (env[i].had && env[i].saved)
			setenv(env[i].name, env[i].saved, 1);
		else
			unsetenv(env[i].name);
		free(env[i].saved);
	}
	errno = saved_errno;
	return r;
}

/* What the kernel says about CPUs, read through the root. */
struct cpu_state {
	hwloc_bitmap_t online, present, possible;
	hwloc_bitmap_t pmu_core, pmu_atom; /* NULL when the host is not hybrid */
};

static void cpu_state_free(struct cpu_state *s)
{
	hwloc_bitmap_free(s->online);
	hwloc_bitmap_free(s->present);
	hwloc_bitmap_free(s->possible);
	hwloc_bitmap_free(s->pmu_core);
	hwloc_bitmap_free(s->pmu_atom);
}

/* Read a cpu-list file; 0 ok, 1 absent (when optional), -1 error. */
static int read_cpulist(const struct cc_root *root, const char *path, hwloc_bitmap_t out,
			bool optional, struct cc_err *err)
{
	struct cc_err e = CC_ERR_INIT;
	_cleanup_free_ char *s = cc_root_read(root, path, 0, &e);

	if (!s) {
		if (optional && e.code == ENOENT)
			return 1;
		*err = e;
		return -1;
	}
	return cc_cpulist_parse(s, out, path, err);
}

/* A captured tree must look like sysfs and hold every online CPU's
 * topology: hwloc itself quietly builds a smaller machine from a truncated
 * dump, so the checks are made here, naming the first missing piece. */
static int read_cpu_state(const struct cc_root *root, struct cpu_state *s, struct cc_err *err)
{
	_cleanup_bitmap_ hwloc_bitmap_t sib = hwloc_bitmap_alloc();
	char path[256];
	int cpu, r, first;
	bool caches;

	if (!sib)
		return cc_err_sys(err, ENOMEM, "topology");
	if (!cc_root_exists(root, cpu_dir))
		return cc_err_set(err, ENOENT, "%s is not a sysfs tree: %s is missing", root->path, cpu_dir);
	if (read_cpulist(root, "/sys/devices/system/cpu/online", s->online, false, err) < 0)
		return cc_err_prefix(err, "%s: truncated sysfs tree", root->path);
	if (hwloc_bitmap_iszero(s->online))
		return cc_err_set(err, EINVAL, "%s: /sys/devices/system/cpu/online lists no CPU", root->path);
	r = read_cpulist(root, "/sys/devices/system/cpu/present", s->present, true, err);
	if (r < 0)
		return -1;
	if (r > 0)
		hwloc_bitmap_copy(s->present, s->online);
	r = read_cpulist(root, "/sys/devices/system/cpu/possible", s->possible, true, err);
	if (r < 0)
		return -1;
	if (r > 0)
		hwloc_bitmap_copy(s->possible, s->present);
	if (!hwloc_bitmap_isincluded(s->online, s->present) || !hwloc_bitmap_isincluded(s->present, s->possible))
		return cc_err_set(err, EINVAL, "%s: inconsistent sysfs tree: online CPUs are not all present and possible",
				  root->path);
	/* Cache directories are optional (some VMs and boards have none),
	 * but all online CPUs have them or none does. */
	first = hwloc_bitmap_first(s->online);
	if (cc_path(path, sizeof(path), err, "/sys/devices/system/cpu/cpu%d/cache", first) < 0)
		return -1;
	caches = cc_root_exists(root, path);
	hwloc_bitmap_foreach_begin(cpu, s->online)
	{
		static const char *const ids[] = { "core_id", "physical_package_id" };
		long v;

		if (cc_path(path, sizeof(path), err, "/sys/devices/system/cpu/cpu%d/topology/thread_siblings_list", cpu) < 0)
			return -1;
		if (read_cpulist(root, path, sib, false, err) < 0)
			return cc_err_prefix(err, "%s: truncated sysfs tree (CPU %d is online)", root->path, cpu);
		if (!hwloc_bitmap_isset(sib, (unsigned)cpu))
			return cc_err_set(err, EINVAL, "%s: %s does not list CPU %d itself", root->path, path, cpu);
		for (size_t k = 0; k < sizeof(ids) / sizeof(ids[0]); k++) {
			if (cc_path(path, sizeof(path), err, "/sys/devices/system/cpu/cpu%d/topology/%s", cpu, ids[k]) < 0)
				return -1;
			if (cc_root_read_long(root, path, &v, err) < 0)
				return cc_err_prefix(err, "%s: truncated sysfs tree (CPU %d is online)", root->path, cpu);
		}
		if (cc_path(path, sizeof(path), err, "/sys/devices/system/cpu/cpu%d/cache", cpu) < 0)
			return -1;
		if (cc_root_exists(root, path) != caches)
			return cc_err_set(err, ENOENT,
					  "%s: truncated sysfs tree: /sys/devices/system/cpu/cpu%d/cache is missing (CPU %d has one)",
					  root->path, caches ? cpu : first, caches ? first : cpu);
	}
	hwloc_bitmap_foreach_end();

	/* Intel hybrid: the kernel registers one PMU per core type.  hwloc
	 * 2.9's Linux backend does not read these (2.10 does). */
	if (cc_root_exists(root, "/sys/devices/cpu_core/cpus") && cc_root_exists(root, "/sys/devices/cpu_atom/cpus")) {
		s->pmu_core = hwloc_bitmap_alloc();
		s->pmu_atom = hwloc_bitmap_alloc();
		if (!s->pmu_core || !s->pmu_atom)
			return cc_err_sys(err, ENOMEM, "topology");
		if (read_cpulist(root, "/sys/devices/cpu_core/cpus", s->pmu_core, false, err) < 0 ||
		    read_cpulist(root, "/sys/devices/cpu_atom/cpus", s->pmu_atom, false, err) < 0)
			return cc_err_prefix(err, "%s", root->path);
	}
	return 0;
}

/* Split "DESC | name=list name=list" (synthetic classes). */
static int parse_synthetic(const char *arg, char **desc, struct cc_class_override **ov, int *nov,
			   struct cc_err *err)
{
	const char *bar = strchr(arg, '|');
	_cleanup_free_ char *classes = NULL;
	char *save = NULL, *tok;

	*ov = NULL;
	*nov = 0;
	*desc = bar ? strndup(arg, (size_t)(bar - arg)) : strdup(arg);
	if (!*desc)
		return cc_err_sys(err, ENOMEM, "synthetic topology");
	for (size_t n = strlen(*desc); n && ((*desc)[n - 1] == ' ' || (*desc)[n - 1] == '\t');)
		(*desc)[--n] = '\0';
	if (!bar)
		return 0;
	classes = strdup(bar + 1);
	if (!classes)
		return cc_err_sys(err, ENOMEM, "synthetic topology");
	for (tok = strtok_r(classes, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
		char *eq = strchr(tok, '=');
		struct cc_class_override *o;

		if (!eq || eq == tok || (size_t)(eq - tok) >= CC_NAME_MAX)
			return cc_err_set(err, EINVAL, "synthetic classes: expected name=cpulist, got \"%.40s\"", tok);
		if (*nov >= CC_CLASSES_MAX)
			return cc_err_set(err, E2BIG, "synthetic classes: more than %d classes", CC_CLASSES_MAX);
		o = realloc(*ov, (size_t)(*nov + 1) * sizeof(**ov));
		if (!o)
			return cc_err_sys(err, ENOMEM, "synthetic classes");
		*ov = o;
		o = &o[(*nov)++];
		memset(o, 0, sizeof(*o));
		memcpy(o->name, tok, (size_t)(eq - tok));
		o->cpus = hwloc_bitmap_alloc();
		if (!o->cpus)
			return cc_err_sys(err, ENOMEM, "synthetic classes");
		if (cc_cpulist_parse(eq + 1, o->cpus, o->name, err) < 0)
			return cc_err_prefix(err, "synthetic classes");
	}
	if (*nov == 0)
		return cc_err_set(err, EINVAL, "synthetic classes: nothing after '|'");
	return 0;
}

static void free_overrides(struct cc_class_override *ov, int nov)
{
	for (int i = 0; i < nov; i++)
		hwloc_bitmap_free(ov[i].cpus);
	free(ov);
}

/* ---- building the model ----------------------------------------------- */

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

static void domains_free(struct cc_domain *d, int n)
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

/* Every core, PU and domain of the machine, built from hwloc. */
static int build_structure(hwloc_topology_t t, struct cc_topo *topo, hwloc_const_bitmap_t online,
			   int *llc_level, struct cc_err *err)
{
	struct objmap pk = { 0 }, l2 = { 0 }, llc = { 0 }, cores = { 0 };
	hwloc_obj_t pu = NULL, prev_core = NULL;
	int nnuma = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_NUMANODE);
	int npu = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PU);
	_cleanup_free_ int *core_pkg = NULL, *core_l2 = NULL, *core_llc = NULL;
	int rc = -1;

	if (npu <= 0)
		return cc_err_set(err, EINVAL, "the topology has no CPU");
	core_pkg = malloc((size_t)npu * sizeof(int));
	core_l2 = malloc((size_t)npu * sizeof(int));
	core_llc = malloc((size_t)npu * sizeof(int));
	topo->cores = calloc((size_t)npu, sizeof(*topo->cores));
	if (!core_pkg || !core_l2 || !core_llc || !topo->cores)
		goto nomem;

	/* Cores in hwloc's logical order (locality order: package, cache,
	 * core), so neighbouring core ids are close in the machine.  The PUs
	 * of a core are consecutive in that order. */
	while ((pu = hwloc_get_next_obj_by_type(t, HWLOC_OBJ_PU, pu))) {
		hwloc_obj_t core = hwloc_get_ancestor_obj_by_type(t, HWLOC_OBJ_CORE, pu);
		hwloc_obj_t l2obj = NULL, llcobj = NULL, key;
		struct cc_core *c;
		int id;

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
		if (objmap_find_or_add(&cores, core) < 0)
			goto nomem;
		id = topo->ncores++;
		c = &topo->cores[id];
		c->id = id;
		c->numa = c->cls = -1;
		c->pus = hwloc_bitmap_alloc();
		if (!c->pus)
			goto nomem;
		hwloc_bitmap_set(c->pus, pu->os_index);
		c->npus = 1;
		llc_level[id] = 0;
		for (hwloc_obj_t o = core->parent; o; o = o->parent) {
			if (!hwloc_obj_type_is_dcache(o->type))
				continue;
			if (!l2obj && o->attr->cache.depth == 2)
				l2obj = o;
			if (!llcobj || o->attr->cache.depth > llcobj->attr->cache.depth)
				llcobj = o;
		}
		key = package_key(core);
		core_pkg[id] = objmap_find_or_add(&pk, key);
		core_l2[id] = l2obj ? objmap_find_or_add(&l2, l2obj) : -2;
		core_llc[id] = llcobj ? objmap_find_or_add(&llc, llcobj) : -2;
		if (core_pkg[id] < 0 || core_l2[id] == -1 || core_llc[id] == -1)
			goto nomem;
		if (llcobj)
			llc_level[id] = (int)llcobj->attr->cache.depth;
	}
	if (topo->ncores == 0) {
		cc_err_set(err, EINVAL, "the topology has no online CPU");
		goto out;
	}

	topo->npackages = pk.n;
	topo->nl2s = l2.n;
	topo->nllcs = llc.n;
	topo->nnuma = nnuma > 0 ? nnuma : 0;
	if (domains_alloc(&topo->packages, pk.n) < 0 || domains_alloc(&topo->l2s, l2.n) < 0 ||
	    domains_alloc(&topo->llcs, llc.n) < 0 || domains_alloc(&topo->numa, topo->nnuma) < 0)
		goto nomem;
	for (int i = 0; i < pk.n; i++) {
		/* The lowest physical id among merged packages. */
		hwloc_obj_t p = NULL;

		while ((p = hwloc_get_next_obj_by_type(t, HWLOC_OBJ_PACKAGE, p)))
			if (pk.objs[i] && (p == pk.objs[i] || hwloc_obj_is_in_subtree(t, p, pk.objs[i])) &&
			    (topo->packages[i].os < 0 || obj_os(p) < topo->packages[i].os))
				topo->packages[i].os = obj_os(p);
	}
	for (int i = 0; i < l2.n; i++) {
		topo->l2s[i].os = obj_os(l2.objs[i]);
		topo->l2s[i].level = 2;
		topo->l2s[i].size = l2.objs[i]->attr->cache.size;
	}
	for (int i = 0; i < llc.n; i++) {
		topo->llcs[i].os = obj_os(llc.objs[i]);
		topo->llcs[i].level = (int)llc.objs[i]->attr->cache.depth;
		topo->llcs[i].size = llc.objs[i]->attr->cache.size;
	}
	for (int i = 0; i < topo->nnuma; i++) {
		hwloc_obj_t n = hwloc_get_obj_by_type(t, HWLOC_OBJ_NUMANODE, (unsigned)i);

		topo->numa[i].os = obj_os(n);
		hwloc_bitmap_and(topo->numa[i].cpus, n->cpuset, online);
	}

	for (int id = 0; id < topo->ncores; id++) {
		struct cc_core *c = &topo->cores[id];

		c->package = core_pkg[id];
		c->l2 = core_l2[id] >= 0 ? core_l2[id] : -1;
		c->llc = core_llc[id] >= 0 ? core_llc[id] : -1;
		/* The first node (logical order: DRAM before HBM or CXL
		 * memory) whose CPUs include the core's. */
		for (int n = 0; n < topo->nnuma; n++)
			if (hwloc_bitmap_isincluded(c->pus, topo->numa[n].cpus)) {
				c->numa = n;
				break;
			}
	}
	rc = 0;
	goto out;
nomem:
	cc_err_sys(err, ENOMEM, "topology");
out:
	objmap_free(&pk);
	objmap_free(&l2);
	objmap_free(&llc);
	objmap_free(&cores);
	return rc;
}

/* Fill the cpus/cores of each domain from its cores, and the enclosing
 * package / NUMA node of each domain when a single one holds it. */
static void fill_domains(struct cc_topo *topo)
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

static int build_distances(hwloc_topology_t t, struct cc_topo *topo, struct cc_err *err)
{
	struct hwloc_distances_s *dist[4];
	unsigned nr = 4;

	if (topo->nnuma < 1)
		return 0;
	if (hwloc_distances_get_by_type(t, HWLOC_OBJ_NUMANODE, &nr, dist, HWLOC_DISTANCES_KIND_MEANS_LATENCY, 0) < 0)
		return 0;
	if (nr > 4)
		nr = 4;
	for (unsigned k = 0; k < nr; k++) {
		struct hwloc_distances_s *d = dist[k];

		if (!topo->distance && d->nbobjs == (unsigned)topo->nnuma) {
			topo->distance = calloc((size_t)topo->nnuma * (size_t)topo->nnuma, sizeof(int));
			if (!topo->distance) {
				for (unsigned j = k; j < nr; j++)
					hwloc_distances_release(t, dist[j]);
				return cc_err_sys(err, ENOMEM, "topology");
			}
			for (unsigned a = 0; a < d->nbobjs; a++)
				for (unsigned b = 0; b < d->nbobjs; b++)
					topo->distance[d->objs[a]->logical_index * (unsigned)topo->nnuma +
						       d->objs[b]->logical_index] =
						(int)d->values[a * d->nbobjs + b];
		}
		hwloc_distances_release(t, d);
	}
	return 0;
}

/* hwloc keeps no distance matrix for a single node (and none when it
 * rejected the kernel's): read the kernel's rows, which list the distance
 * to every node in increasing node number.  Missing or odd rows leave the
 * distances unknown. */
static int sysfs_distances(const struct cc_root *root, struct cc_topo *topo, struct cc_err *err)
{
	int n = topo->nnuma;
	_cleanup_free_ int *d = calloc((size_t)n * (size_t)n, sizeof(int));
	_cleanup_free_ int *rank = calloc((size_t)n, sizeof(int));

	if (!d || !rank)
		return cc_err_sys(err, ENOMEM, "topology");
	for (int i = 0; i < n; i++) {
		if (topo->numa[i].os < 0)
			return 0;
		for (int j = 0; j < n; j++)
			rank[i] += topo->numa[j].os < topo->numa[i].os;
	}
	for (int i = 0; i < n; i++) {
		struct cc_err e = CC_ERR_INIT;
		_cleanup_free_ char *row = NULL;
		char path[96], *p, *end;
		int count = 0;

		if (cc_path(path, sizeof(path), &e, "/sys/devices/system/node/node%d/distance", topo->numa[i].os) < 0)
			return 0;
		row = cc_root_read(root, path, 0, &e);
		if (!row)
			return 0;
		for (p = row;; p = end) {
			long v;

			while (*p == ' ')
				p++;
			if (!*p)
				break;
			errno = 0;
			v = strtol(p, &end, 10);
			if (errno || end == p || v <= 0 || v > 255 || count >= n)
				return 0;
			for (int j = 0; j < n; j++)
				if (rank[j] == count)
					d[i * n + j] = (int)v;
			count++;
		}
		if (count != n)
			return 0;
	}
	topo->distance = cc_steal_ptr(d);
	return 0;
}

static int build_pus(struct cc_topo *topo, hwloc_const_bitmap_t online)
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
static int collect_facts(hwloc_topology_t t, const struct cc_topo *topo, const struct cpu_state *cs,
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

static int build_classes(hwloc_topology_t t, struct cc_topo *topo, const struct cc_topo_source *src,
			 const struct cc_class_override *syn, int nsyn, const struct cpu_state *cs,
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

/* The caller's allowed CPUs on the real host: the cgroup cpuset hwloc
 * found (it is kept apart thanks to INCLUDE_DISALLOWED) and the process
 * affinity. */
static void host_allowed(hwloc_topology_t t, hwloc_bitmap_t allowed)
{
	_cleanup_bitmap_ hwloc_bitmap_t bind = hwloc_bitmap_alloc();

	hwloc_bitmap_and(allowed, allowed, hwloc_topology_get_allowed_cpuset(t));
	if (bind && hwloc_get_cpubind(t, bind, HWLOC_CPUBIND_PROCESS) == 0 && !hwloc_bitmap_iszero(bind))
		hwloc_bitmap_and(allowed, allowed, bind);
}

static int load_hwloc(hwloc_topology_t t, const struct cc_topo_source *src, const char *desc,
		      struct cc_err *err)
{
	_cleanup_close_ int fd = -1;

	if (hwloc_topology_set_flags(t, HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED) < 0 ||
	    hwloc_topology_set_io_types_filter(t, HWLOC_TYPE_FILTER_KEEP_NONE) < 0 ||
	    hwloc_topology_set_cache_types_filter(t, HWLOC_TYPE_FILTER_KEEP_ALL) < 0)
		return cc_err_sys(err, errno, "hwloc");
	switch (src->kind) {
	case CC_TOPO_HOST:
		if (hwloc_load_with_env(t, src->root->is_host ? NULL : src->root) < 0)
			return cc_err_sys(err, errno, "%s: hwloc could not read the topology", src->root->path);
		return 0;
	case CC_TOPO_XML:
		/* hwloc reports any XML problem as EINVAL: name the usual
		 * ones (missing, unreadable) first. */
		fd = open(src->arg, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return cc_err_sys(err, errno, "hwloc XML %s", src->arg);
		if (hwloc_topology_set_xml(t, src->arg) < 0)
			return cc_err_sys(err, errno, "hwloc XML %s", src->arg);
		if (hwloc_load_with_env(t, NULL) < 0)
			return cc_err_set(err, EINVAL, "hwloc XML %s: not a valid hwloc XML v2 topology", src->arg);
		return 0;
	case CC_TOPO_SYNTHETIC:
		if (hwloc_topology_set_synthetic(t, desc) < 0)
			return cc_err_set(err, EINVAL, "synthetic topology \"%.100s\": not a valid hwloc synthetic description", desc);
		if (hwloc_load_with_env(t, NULL) < 0)
			return cc_err_sys(err, errno, "synthetic topology \"%.100s\"", desc);
		return 0;
	}
	return cc_err_set(err, EINVAL, "unknown topology source");
}

static int topo_sets_alloc(struct cc_topo *topo)
{
	topo->online = hwloc_bitmap_alloc();
	topo->allowed = hwloc_bitmap_alloc();
	topo->offline = hwloc_bitmap_alloc();
	topo->present = hwloc_bitmap_alloc();
	topo->possible = hwloc_bitmap_alloc();
	return topo->online && topo->allowed && topo->offline && topo->present && topo->possible ? 0 : -1;
}

struct cc_topo *cc_topo_load(const struct cc_topo_source *src, struct cc_err *err)
{
	_cleanup_topo_ struct cc_topo *topo = NULL;
	_cleanup_hwloc_ hwloc_topology_t t = NULL;
	_cleanup_free_ char *desc = NULL;
	_cleanup_free_ int *llc_level = NULL;
	struct cc_class_override *syn = NULL;
	struct cpu_state cs = { 0 };
	int nsyn = 0, r = -1;

	if (!src || (src->kind == CC_TOPO_HOST && !src->root) || (src->kind != CC_TOPO_HOST && !src->arg))
		return cc_err_set(err, EINVAL, "topology: incomplete source"), NULL;
	if (src->noverrides > 0 && !src->overrides)
		return cc_err_set(err, EINVAL, "topology: overrides missing"), NULL;
	topo = calloc(1, sizeof(*topo));
	if (!topo || topo_sets_alloc(topo) < 0)
		return cc_err_sys(err, ENOMEM, "topology"), NULL;

	switch (src->kind) {
	case CC_TOPO_HOST:
		if (src->root->is_host)
			snprintf(topo->source, sizeof(topo->source), "host");
		else
			snprintf(topo->source, sizeof(topo->source), "--root %s", src->root->path);
		break;
	case CC_TOPO_XML:
		snprintf(topo->source, sizeof(topo->source), "--hwloc-xml %s", src->arg);
		break;
	case CC_TOPO_SYNTHETIC:
		if (parse_synthetic(src->arg, &desc, &syn, &nsyn, err) < 0)
			goto out;
		snprintf(topo->source, sizeof(topo->source), "synthetic:%s", desc);
		break;
	}

	if (src->kind == CC_TOPO_HOST) {
		cs.online = hwloc_bitmap_alloc();
		cs.present = hwloc_bitmap_alloc();
		cs.possible = hwloc_bitmap_alloc();
		if (!cs.online || !cs.present || !cs.possible) {
			cc_err_sys(err, ENOMEM, "topology");
			goto out;
		}
		if (read_cpu_state(src->root, &cs, err) < 0)
			goto out;
	}
	if (hwloc_topology_init(&t) < 0) {
		cc_err_sys(err, errno, "hwloc");
		goto out;
	}
	if (load_hwloc(t, src, desc, err) < 0)
		goto out;

	hwloc_bitmap_copy(topo->online, hwloc_topology_get_topology_cpuset(t));
	if (src->kind == CC_TOPO_HOST) {
		/* hwloc quietly drops CPUs whose sysfs entries it cannot use;
		 * the model must be the kernel's. */
		if (!hwloc_bitmap_isequal(topo->online, cs.online)) {
			_cleanup_free_ char *h = cc_cpulist_format(topo->online);
			_cleanup_free_ char *k = cc_cpulist_format(cs.online);

			cc_err_set(err, EINVAL, "%s: hwloc found CPUs %s but /sys/devices/system/cpu/online lists %s",
				   src->root->path, h ? h : "?", k ? k : "?");
			goto out;
		}
		hwloc_bitmap_copy(topo->present, cs.present);
		hwloc_bitmap_copy(topo->possible, cs.possible);
	} else {
		/* An XML export keeps offline CPUs in its complete cpuset. */
		hwloc_bitmap_copy(topo->present, hwloc_topology_get_complete_cpuset(t));
		hwloc_bitmap_or(topo->present, topo->present, topo->online);
		hwloc_bitmap_copy(topo->possible, topo->present);
	}
	hwloc_bitmap_andnot(topo->offline, topo->present, topo->online);
	hwloc_bitmap_copy(topo->allowed, topo->online);
	if (src->kind == CC_TOPO_HOST && src->root->is_host && src->caller_view)
		host_allowed(t, topo->allowed);

	llc_level = calloc((size_t)hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PU) + 1, sizeof(int));
	if (!llc_level) {
		cc_err_sys(err, ENOMEM, "topology");
		goto out;
	}
	if (build_structure(t, topo, topo->online, llc_level, err) < 0)
		goto out;
	fill_domains(topo);
	if (build_distances(t, topo, err) < 0)
		goto out;
	if (!topo->distance && src->kind == CC_TOPO_HOST && sysfs_distances(src->root, topo, err) < 0)
		goto out;
	if (build_pus(topo, topo->online) < 0) {
		cc_err_sys(err, ENOMEM, "topology");
		goto out;
	}
	if (build_classes(t, topo, src, syn, nsyn, src->kind == CC_TOPO_HOST ? &cs : NULL, llc_level, err) < 0)
		goto out;
	r = 0;
out:
	free_overrides(syn, nsyn);
	cpu_state_free(&cs);
	if (r < 0)
		return NULL;
	return cc_steal_ptr(topo);
}

void cc_topo_free(struct cc_topo *topo)
{
	if (!topo)
		return;
	for (int i = 0; i < topo->ncores; i++)
		hwloc_bitmap_free(topo->cores[i].pus);
	free(topo->cores);
	free(topo->pus);
	domains_free(topo->packages, topo->npackages);
	domains_free(topo->numa, topo->nnuma);
	domains_free(topo->llcs, topo->nllcs);
	domains_free(topo->l2s, topo->nl2s);
	free(topo->distance);
	for (int i = 0; i < topo->nclasses; i++) {
		hwloc_bitmap_free(topo->classes[i].cpus);
		hwloc_bitmap_free(topo->classes[i].cores);
	}
	free(topo->classes);
	hwloc_bitmap_free(topo->online);
	hwloc_bitmap_free(topo->allowed);
	hwloc_bitmap_free(topo->offline);
	hwloc_bitmap_free(topo->present);
	hwloc_bitmap_free(topo->possible);
	free(topo);
}

void cc_topo_freep(struct cc_topo **topo)
{
	cc_topo_free(*topo);
}

int cc_topo_pu_index(const struct cc_topo *topo, int os)
{
	int lo = 0, hi = topo->npus - 1;

	while (lo <= hi) {
		int mid = lo + (hi - lo) / 2;

		if (topo->pus[mid].os == os)
			return mid;
		if (topo->pus[mid].os < os)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return -1;
}

int cc_topo_class_index(const struct cc_topo *topo, const char *name)
{
	for (int i = 0; i < topo->nclasses; i++)
		if (strcmp(topo->classes[i].name, name) == 0)
			return i;
	return -1;
}

int cc_topo_online_pus(const struct cc_topo *topo)
{
	return hwloc_bitmap_weight(topo->online);
}
