#define _GNU_SOURCE
#include "policy_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "cpulist.h"
#include "fileio.h"
#include "policy_schema.h"
#include "root.h"
#include "yaml_tree.h"

const struct cc_yenum cc_smt_values[] = {
	{ "isolate", CC_SMT_ISOLATE }, { "full", CC_SMT_FULL }, { NULL, 0 }
};
const struct cc_yenum cc_memory_values[] = {
	{ "local", CC_MEM_LOCAL }, { "spread", CC_MEM_SPREAD }, { "any", CC_MEM_ANY }, { NULL, 0 }
};
const struct cc_yenum cc_irq_values[] = {
	{ "steer-away", CC_IRQ_STEER_AWAY }, { "leave", CC_IRQ_LEAVE }, { NULL, 0 }
};
const struct cc_yenum cc_partition_values[] = {
	{ "root", CC_PART_ROOT }, { "isolated", CC_PART_ISOLATED }, { NULL, 0 }
};
const struct cc_yenum cc_quota_values[] = {
	{ "drop", CC_QUOTA_DROP }, { "keep", CC_QUOTA_KEEP }, { NULL, 0 }
};
const struct cc_yenum cc_align_values[] = {
	{ "none", CC_ALIGN_NONE }, { "l2", CC_ALIGN_L2 }, { NULL, 0 }
};

const struct cc_yenum cc_req_key_values[] = {
	{ "cpus", CC_REQ_CPUS }, { "memory", CC_REQ_MEMORY }, { "irq", CC_REQ_IRQ }, { "smt", CC_REQ_SMT }, { NULL, 0 }
};

const char *cc_smt_name(enum cc_smt v)
{
	return cc_yenum_name(cc_smt_values, (int)v);
}

const char *cc_memory_name(enum cc_memory v)
{
	return cc_yenum_name(cc_memory_values, (int)v);
}

const char *cc_irq_name(enum cc_irq v)
{
	return cc_yenum_name(cc_irq_values, (int)v);
}

const char *cc_partition_name(enum cc_partition v)
{
	return cc_yenum_name(cc_partition_values, (int)v);
}

const char *cc_quota_name(enum cc_quota v)
{
	return cc_yenum_name(cc_quota_values, (int)v);
}

const char *cc_align_name(enum cc_align v)
{
	return cc_yenum_name(cc_align_values, (int)v);
}

bool cc_policy_name_ok(const char *s, size_t max)
{
	size_t n = 0;

	for (; s[n]; n++)
		if (!((s[n] >= 'a' && s[n] <= 'z') || (s[n] >= '0' && s[n] <= '9') || s[n] == '-'))
			return false;
	return n >= 1 && n <= max;
}

void cc_policy_free(struct cc_policy *p)
{
	if (!p)
		return;
	if (p->reserved)
		hwloc_bitmap_free(p->reserved);
	for (int i = 0; i < p->noverrides; i++)
		if (p->overrides[i].cpus)
			hwloc_bitmap_free(p->overrides[i].cpus);
	free(p->overrides);
	free(p->classes);
	free(p);
}

void cc_policy_freep(struct cc_policy **p)
{
	cc_policy_free(*p);
}

const struct cc_pclass *cc_policy_class(const struct cc_policy *p, const char *name)
{
	if (!p || !name)
		return NULL;
	for (int i = 0; i < p->nclasses; i++)
		if (!strcmp(p->classes[i].name, name))
			return &p->classes[i];
	return NULL;
}

/* ---- parsing ---- */

/* `vms` is the VM list (vmconfig.h), allowed here so a VM host keeps one file. */
static const char *const top_keys[] = { "reserved", "minShared", "withoutCpuLimit", "coreClasses", "classes",
					"vms", NULL };
static const char *const class_keys[] = { "coreType", "fallback", "smt", "exclusive", "memory", "irq",
					  "partition", "quota", "align", "strictClusters", "power",
					  "annotationMaySet", "namespaces", "maxCpusPerPod", "maxCpus", NULL };

static int parse_reserved(struct cc_policy *p, const struct cc_ynode *n, struct cc_err *err)
{
	char where[CC_ERR_MSG_MAX / 2];
	const char *s;

	/* `reserved: 0` is read as the text "0": a cpu list either way. */
	if (cc_ynode_string(n, &s, err) < 0)
		return -1;
	p->reserved = hwloc_bitmap_alloc();
	if (!p->reserved)
		return cc_err_sys(err, ENOMEM, "reserved");
	cc_ynode_where(n, where, sizeof(where));
	if (cc_cpulist_parse(s, p->reserved, where, err) < 0)
		return -1;
	p->has_reserved = true;
	return 0;
}

static int parse_overrides(struct cc_policy *p, const struct cc_ynode *map, struct cc_err *err)
{
	if (cc_ynode_mapping(map, err) < 0)
		return -1;
	if (!map->n)
		return 0;
	p->overrides = calloc((size_t)map->n, sizeof(*p->overrides));
	if (!p->overrides)
		return cc_err_sys(err, ENOMEM, "coreClasses");
	for (const struct cc_ynode *c = map->first; c; c = c->next) {
		struct cc_class_override *o = &p->overrides[p->noverrides];
		char where[CC_ERR_MSG_MAX / 2];
		const char *s;

		if (!cc_policy_name_ok(c->key, CC_NAME_MAX - 1))
			return cc_ynode_err(c, err, EINVAL,
					    "core class names are 1 to %d characters of a-z, 0-9 and '-'",
					    CC_NAME_MAX - 1);
		/* coreType "any" means "whatever class": a class of that name
		 * could never be asked for. */
		if (!strcmp(c->key, "any"))
			return cc_ynode_err(c, err, EINVAL, "\"any\" is reserved for coreType and cannot name a core class");
		if (cc_ynode_string(c, &s, err) < 0)
			return -1;
		o->cpus = hwloc_bitmap_alloc();
		if (!o->cpus)
			return cc_err_sys(err, ENOMEM, "coreClasses");
		p->noverrides++;
		snprintf(o->name, sizeof(o->name), "%s", c->key);
		cc_ynode_where(c, where, sizeof(where));
		if (cc_cpulist_parse(s, o->cpus, where, err) < 0)
			return -1;
		if (hwloc_bitmap_iszero(o->cpus))
			return cc_ynode_err(c, err, EINVAL, "empty cpu list: a core class needs at least one CPU");
		for (int j = 0; j < p->noverrides - 1; j++) {
			_cleanup_bitmap_ hwloc_bitmap_t both = hwloc_bitmap_alloc();
			_cleanup_free_ char *list = NULL;

			if (!both)
				return cc_err_sys(err, ENOMEM, "coreClasses");
			hwloc_bitmap_and(both, o->cpus, p->overrides[j].cpus);
			if (hwloc_bitmap_iszero(both))
				continue;
			list = cc_cpulist_format(both);
			return cc_ynode_err(c, err, EINVAL, "CPUs %s are also in coreClasses.%s",
					    list ? list : "?", p->overrides[j].name);
		}
	}
	return 0;
}

/* A core class a placement class may draw from.  Without coreClasses the
 * topology names its classes performance, mid, mid-N, efficient and
 * low-power; with coreClasses, exactly the names given there. */
static int check_core_type(const struct cc_policy *p, const struct cc_ynode *n, const char *v,
			   bool allow_empty, struct cc_err *err)
{
	static const char *const builtin[] = { "performance", "efficient", "mid", "low-power", "any", NULL };
	char got[96], names[512];
	size_t len = 0;

	if (allow_empty && !*v)
		return 0;
	if (!strcmp(v, "any"))
		return 0;
	if (p->noverrides) {
		for (int i = 0; i < p->noverrides; i++)
			if (!strcmp(v, p->overrides[i].name))
				return 0;
	} else {
		for (size_t i = 0; builtin[i]; i++)
			if (!strcmp(v, builtin[i]))
				return 0;
		/* mid-1, mid-2...: the topology's names for extra middle tiers. */
		if (!strncmp(v, "mid-", 4) && v[4] >= '1' && v[4] <= '9' &&
		    strspn(v + 4, "0123456789") == strlen(v + 4))
			return 0;
	}
	cc_ynode_describe(n, got, sizeof(got));
	if (!p->noverrides)
		return cc_ynode_err(n, err, EINVAL,
				    "expected performance, efficient, mid, mid-N, low-power or any%s, got %s",
				    allow_empty ? " (or \"\" for none)" : "", got);
	names[0] = '\0';
	for (int i = 0; i < p->noverrides; i++)
		len += (size_t)snprintf(names + len, len < sizeof(names) ? sizeof(names) - len : 0,
					"%s%s", i ? ", " : "", p->overrides[i].name);
	return cc_ynode_err(n, err, EINVAL, "expected any or a class of coreClasses (%s)%s, got %s", names,
			    allow_empty ? " (or \"\" for none)" : "", got);
}

static int parse_enum(const struct cc_ynode *cls, const char *key, const struct cc_yenum *table,
		      int *out, struct cc_err *err)
{
	const struct cc_ynode *n = cc_ynode_get(cls, key);

	return n ? cc_ynode_enum(n, table, out, err) : 0;
}

static int parse_bool(const struct cc_ynode *cls, const char *key, bool *out, struct cc_err *err)
{
	const struct cc_ynode *n = cc_ynode_get(cls, key);

	return n ? cc_ynode_bool(n, out, err) : 0;
}

/* classes.<name>.annotationMaySet: the annotation keys a pod may write for
 * this class.  An annotation is written by whoever may create pods, and
 * read by a privileged hook, so by default it may set only what stays
 * inside its own container: cpus (its size, which the orchestrator's CPU
 * requests already account for) and memory (the cpuset.mems of the
 * container's own cgroup, nothing else: an uncarved container may use every
 * node anyway).  Not irq: steer-away moves every device IRQ of the node and
 * rewrites irqbalance's banned CPUs.  Not smt: isolate parks sibling
 * threads the node's shared pool then lacks, full changes how many cores a
 * carve takes.  The operator grants those per class. */
static int parse_may_set(const struct cc_ynode *n, unsigned *out, struct cc_err *err)
{
	unsigned set = 0;
	char got[96];

	if (n->type != CC_YSEQUENCE) {
		cc_ynode_describe(n, got, sizeof(got));
		return cc_ynode_err(n, err, EINVAL, "expected a list of cpus, memory, irq and smt such as [cpus, memory], got %s",
				    got);
	}
	for (const struct cc_ynode *k = n->first; k; k = k->next) {
		int bit;

		/* The class is what the annotation asks for: no class to ask
		 * permission of before it is named. */
		if (k->type == CC_YSCALAR && !strcmp(k->text, "class"))
			return cc_ynode_err(k, err, EINVAL,
					    "class is always allowed (an annotation must name its class): list only cpus, memory, irq or smt");
		if (cc_ynode_enum(k, cc_req_key_values, &bit, err) < 0)
			return -1;
		if (set & (unsigned)bit)
			return cc_ynode_err(k, err, EINVAL, "%s is listed twice", k->text);
		set |= (unsigned)bit;
	}
	*out = set;
	return 0;
}

static int parse_class(const struct cc_policy *p, const struct cc_ynode *n, struct cc_pclass *c,
		       struct cc_err *err)
{
	const struct cc_ynode *v;
	int smt = CC_SMT_ISOLATE, memory = CC_MEM_LOCAL, irq = CC_IRQ_LEAVE;
	int partition = CC_PART_ROOT, quota = CC_QUOTA_DROP, align = CC_ALIGN_NONE;

	if (!cc_policy_name_ok(n->key, sizeof(c->name) - 1))
		return cc_ynode_err(n, err, EINVAL, "class names are 1 to %zu characters of a-z, 0-9 and '-'",
				    sizeof(c->name) - 1);
	snprintf(c->name, sizeof(c->name), "%s", n->key);
	if (cc_ynode_mapping(n, err) < 0)
		return -1;
	/* A power key written on the class itself ("governor: performance"):
	 * say where it belongs rather than only that it is unknown. */
	for (const struct cc_ynode *k = n->first; k; k = k->next)
		for (const char *const *pk = cc_policy_power_keys; *pk; pk++)
			if (!strcmp(k->key, *pk))
				return cc_ynode_err(k, err, EINVAL, "unknown key (power settings go under power:)");
	if (cc_ynode_check_keys(n, class_keys, err) < 0)
		return -1;

	v = cc_ynode_get(n, "coreType");
	if (!v)
		return cc_ynode_missing(n, "coreType", err);
	if (cc_ynode_strcpy(v, c->core_type, sizeof(c->core_type), err) < 0 ||
	    check_core_type(p, v, c->core_type, false, err) < 0)
		return -1;
	v = cc_ynode_get(n, "fallback");
	if (v && (cc_ynode_strcpy(v, c->fallback, sizeof(c->fallback), err) < 0 ||
		  check_core_type(p, v, c->fallback, true, err) < 0))
		return -1;

	c->exclusive = true;
	c->strict_clusters = false;
	if (parse_enum(n, "smt", cc_smt_values, &smt, err) < 0 ||
	    parse_bool(n, "exclusive", &c->exclusive, err) < 0 ||
	    parse_enum(n, "memory", cc_memory_values, &memory, err) < 0 ||
	    parse_enum(n, "irq", cc_irq_values, &irq, err) < 0 ||
	    parse_enum(n, "partition", cc_partition_values, &partition, err) < 0 ||
	    parse_enum(n, "quota", cc_quota_values, &quota, err) < 0 ||
	    parse_enum(n, "align", cc_align_values, &align, err) < 0 ||
	    parse_bool(n, "strictClusters", &c->strict_clusters, err) < 0)
		return -1;
	c->smt = (enum cc_smt)smt;
	c->memory = (enum cc_memory)memory;
	c->irq = (enum cc_irq)irq;
	c->partition = (enum cc_partition)partition;
	c->quota = (enum cc_quota)quota;
	c->align = (enum cc_align)align;

	/* Settings that contradict each other are refused rather than quietly
	 * ignored: an isolated partition is exclusive by construction, and
	 * strictClusters only qualifies L2 alignment. */
	if (c->partition == CC_PART_ISOLATED && !c->exclusive)
		return cc_ynode_err(cc_ynode_get(n, "partition"), err, EINVAL,
				    "isolated requires exclusive: true");
	if (c->strict_clusters && c->align != CC_ALIGN_L2)
		return cc_ynode_err(cc_ynode_get(n, "strictClusters"), err, EINVAL,
				    "true requires align: l2");
	c->annotation_may_set = CC_REQ_DEFAULT;
	v = cc_ynode_get(n, "annotationMaySet");
	if (v && parse_may_set(v, &c->annotation_may_set, err) < 0)
		return -1;
	if (policy_parse_class_trust(n, c, err) < 0)
		return -1;
	v = cc_ynode_get(n, "power");
	if (v && cc_policy_parse_power(v, &c->power, err) < 0)
		return -1;
	/* A shared pool's CPUs belong to every container of the class and
	 * to the node: nobody's to retune. */
	if (v && !c->exclusive && !cc_power_spec_empty(&c->power))
		return cc_ynode_err(v, err, EINVAL, "power settings need exclusive: true");
	return 0;
}

static int parse_classes(struct cc_policy *p, const struct cc_ynode *map, struct cc_err *err)
{
	if (cc_ynode_mapping(map, err) < 0)
		return -1;
	if (!map->n)
		return cc_ynode_err(map, err, EINVAL, "at least one class is required");
	p->classes = calloc((size_t)map->n, sizeof(*p->classes));
	if (!p->classes)
		return cc_err_sys(err, ENOMEM, "classes");
	for (const struct cc_ynode *c = map->first; c; c = c->next) {
		if (parse_class(p, c, &p->classes[p->nclasses], err) < 0)
			return -1;
		p->nclasses++;
	}
	return 0;
}

struct cc_policy *cc_policy_parse(const char *text, size_t len, const char *name,
				  struct cc_err *err)
{
	_cleanup_ydoc_ struct cc_ydoc *doc = NULL;
	_cleanup_policy_ struct cc_policy *p = NULL;
	const struct cc_ynode *root, *n;

	if (!name || !*name)
		name = "policy";
	if (len > CC_POLICY_MAX) {
		cc_err_set(err, EFBIG, "%s: %zu bytes, more than the %u a policy may have", name, len,
			   CC_POLICY_MAX);
		return NULL;
	}
	doc = cc_yaml_parse(text, len, name, err);
	if (!doc)
		return NULL;
	root = doc->root;
	if (!root) {
		cc_err_set(err, EINVAL, "%s: empty document: a policy needs at least `classes`", name);
		return NULL;
	}
	if (cc_ynode_mapping(root, err) < 0 || cc_ynode_check_keys(root, top_keys, err) < 0)
		return NULL;

	p = calloc(1, sizeof(*p));
	if (!p) {
		cc_err_sys(err, ENOMEM, "policy");
		return NULL;
	}
	snprintf(p->source, sizeof(p->source), "%s", name);
	p->min_shared = 1;
	p->unlimited_kubernetes = CC_UNLIMITED_REFUSE;
	p->unlimited_other = CC_UNLIMITED_ALLOW;

	n = cc_ynode_get(root, "reserved");
	if (n && parse_reserved(p, n, err) < 0)
		return NULL;
	if (policy_parse_trust_top(p, root, err) < 0)
		return NULL;
	/* Before classes: coreType is checked against these names. */
	n = cc_ynode_get(root, "coreClasses");
	if (n && parse_overrides(p, n, err) < 0)
		return NULL;
	n = cc_ynode_get(root, "classes");
	if (!n) {
		cc_ynode_missing(root, "classes", err);
		return NULL;
	}
	if (parse_classes(p, n, err) < 0)
		return NULL;
	/* Checked here too: a policy is refused whole, whichever part is wrong. */
	n = cc_ynode_get(root, "vms");
	if (n && policy_parse_vms(p, n, err) < 0)
		return NULL;
	return cc_steal_ptr(p);
}

struct cc_policy *cc_policy_default(struct cc_err *err)
{
	return cc_policy_parse(cc_policy_default_yaml, strlen(cc_policy_default_yaml),
			       CC_POLICY_DEFAULT_SOURCE, err);
}

/* ---- loading ---- */

/* Read a regular file of at most CC_POLICY_MAX bytes.  Returns 1 with *out
 * (caller frees), 0 when it does not exist and `absent_ok`, -1 on error.
 * A link is followed: a policy is often one (a ConfigMap's mount). */
static int read_policy_file(const char *path, bool absent_ok, char **out, size_t *outlen,
			    struct cc_err *err)
{
	_cleanup_free_ char *name = NULL;

	if (asprintf(&name, "policy %s", path) < 0) {
		name = NULL;
		return cc_err_sys(err, ENOMEM, "policy %s", path);
	}
	if (cc_read_at(AT_FDCWD, path, name, CC_POLICY_MAX, CC_READ_REGULAR | (absent_ok ? CC_READ_ABSENT_OK : 0),
		       out, outlen, err) < 0)
		return -1;
	return *out ? 1 : 0;
}

/* A captured tree's policy, opened beneath its root (openat2
 * RESOLVE_IN_ROOT): a link in the tree resolves inside it, never to a
 * file of this host, and one that leads nowhere in the tree is refused
 * rather than read as "no policy".  Named as before, TREE/etc/...  1 with
 * *out, 0 when the tree has none, -1 with err. */
static int read_tree_policy(const struct cc_root *root, char **name, char **out, size_t *outlen,
			    struct cc_err *err)
{
	struct cc_err e = CC_ERR_INIT;
	_cleanup_close_ int fd = -1;
	_cleanup_free_ char *what = NULL;
	struct stat st;

	if (asprintf(name, "%s%s", root->path, CC_POLICY_PATH) < 0 || asprintf(&what, "policy %s", *name) < 0) {
		*name = NULL;
		return cc_err_sys(err, ENOMEM, "policy");
	}
	fd = cc_root_openat(root, CC_POLICY_PATH, O_RDONLY | O_NONBLOCK, 0, &e);
	if (fd < 0 && e.code == ENOENT && cc_root_lstat(root, CC_POLICY_PATH, &st, &e) < 0)
		return 0;
	if (fd < 0 && (e.code == ENOENT || e.code == ENOTDIR))
		return cc_err_set(err, ENOENT,
				  "%s: a link to a file that is not in the tree (links resolve inside the --root "
				  "tree; name the policy with --policy FILE)",
				  what);
	if (fd < 0)
		return cc_err_set(err, e.code, "%s: %s", what, strerror(e.code));
	if (cc_read_fd(fd, what, CC_POLICY_MAX, CC_READ_REGULAR, out, outlen, err) < 0)
		return -1;
	return 1;
}

struct cc_policy *cc_policy_load_in(const struct cc_root *root, const char *path, struct cc_err *err)
{
	_cleanup_free_ char *text = NULL, *name = NULL;
	size_t len = 0;
	int r;

	if (path || !root || root->is_host)
		return cc_policy_load(path, err);
	r = read_tree_policy(root, &name, &text, &len, err);
	if (r < 0)
		return NULL;
	if (r == 0)
		return cc_policy_default(err);
	return cc_policy_parse(text, len, name, err);
}

struct cc_policy *cc_policy_load(const char *path, struct cc_err *err)
{
	_cleanup_free_ char *text = NULL;
	size_t len = 0;
	int r;

	r = read_policy_file(path ? path : CC_POLICY_PATH, !path, &text, &len, err);
	if (r < 0)
		return NULL;
	if (r == 0)
		return cc_policy_default(err);
	return cc_policy_parse(text, len, path ? path : CC_POLICY_PATH, err);
}

/* ---- the reserved set ---- */

/* The class the default rule reserves from in package `pk`: the one with
 * the most cores there, and of equal counts the less performant.
 * Housekeeping needs no fast core, and the scarce class is the one carves
 * ask for: on a 4P+8E laptop reserving a P-core would leave latency 3
 * cores, on an Arm phone SoC with one X3 core none.  -1 when the package
 * has no classed core. */
static int plentiful_class(const struct cc_topo *t, int pk)
{
	int best = -1, nbest = 0;

	for (int c = t->nclasses - 1; c >= 0; c--) {
		int n = 0;

		for (int i = 0; i < t->ncores; i++)
			n += t->cores[i].package == pk && t->cores[i].cls == c && t->cores[i].pus &&
			     !hwloc_bitmap_iszero(t->cores[i].pus);
		if (n > nbest)
			best = c, nbest = n;
	}
	return best;
}

hwloc_bitmap_t cc_policy_reserved(const struct cc_policy *p, const struct cc_topo *t)
{
	hwloc_bitmap_t set;

	if (p && p->has_reserved)
		return hwloc_bitmap_dup(p->reserved);
	set = hwloc_bitmap_alloc();
	if (!set || !t)
		return set;
	for (int pk = 0; pk < t->npackages; pk++) {
		const struct cc_core *best = NULL, *first = NULL;
		int cls = plentiful_class(t, pk);

		/* Cores are in id order, so the first match is the lowest id. */
		for (int i = 0; i < t->ncores && !best; i++) {
			const struct cc_core *c = &t->cores[i];

			if (c->package != pk || !c->pus || hwloc_bitmap_iszero(c->pus))
				continue;
			if (!first)
				first = c;
			if (cls >= 0 && c->cls == cls)
				best = c;
		}
		if (!best)
			best = first;
		if (best)
			hwloc_bitmap_or(set, set, best->pus);
	}
	return set;
}

void cc_policy_reserved_why(const struct cc_policy *p, const struct cc_topo *t, char *buf, size_t len)
{
	char names[128] = "";
	size_t off = 0;

	if (p && p->has_reserved) {
		snprintf(buf, len, "the policy's reserved (%s)", p->source);
		return;
	}
	for (int pk = 0; t && pk < t->npackages && off < sizeof(names); pk++) {
		int c = plentiful_class(t, pk);
		const char *name = c >= 0 ? t->classes[c].name : "unclassed";

		if (!strstr(names, name))
			off += (size_t)snprintf(names + off, sizeof(names) - off, "%s%s", off ? "/" : "", name);
	}
	snprintf(buf, len,
		 "the default rule: the first core of %s, the most plentiful core class, in each package, so the scarce "
		 "cores stay carvable; set reserved in the policy to choose",
		 names[0] ? names : "each package");
}
