/* Decision latency: the hook's whole create and release paths, timed in
 * process.
 *
 * One decision is what `corecarve hook createRuntime` does after reading
 * its stdin: parse the runtime's state JSON, then cc_container_create —
 * the bundle's config.json and its annotation, the container's cgroup from
 * /proc/<pid>/cgroup, the policy, the topology (through its cache), the
 * ledger (its index), gc of every carve's cgroup, the allocation, the
 * cgroup plan, the journal commit, the cgroup writes with their read-backs,
 * the final commit.  One release is `corecarve hook poststop`:
 * cc_container_release of that container after the runtime removed its
 * cgroup.  Both run against a cgroup tree under a scratch directory
 * (bench/benchcg.h: the files corecarve reads, and writes through its
 * cgroup ops that store what is written), with the ledger on tmpfs as
 * /run/corecarve is.
 *
 * The node is busy: carves for about half of its CPUs, each made by
 * cc_carve_create as the hook makes them — a container of 64 hex digits in
 * its own pod (/kubepods/pod<N>/<id>, a Guaranteed pod's cpu.max), so the
 * ledger holds the node records a real node in that layout has: every
 * ancestor's cpuset.cpus.exclusive (remote partitions), the parked
 * partition, the pods' quotas.  IRQ steering is left out (the policy is the
 * default one with `irq: leave`): its cost is the node's IRQs, not its
 * carves (docs/performance.md, section 5).
 *
 * Modes, interleaved: cold (the topology cache removed first: discovery
 * and a new cache, the first hook after a boot), warm (the cache), empty
 * (the cache, a node without carves).  Every decision is released again;
 * the warm one's release is timed.
 *
 *   decide [--n N] [--n-large N] [--only HOST] [--bin CORECARVE]
 *       the tables: N invocations per mode (N-large above 256 PUs)
 *   decide --callgrind --only HOST --mode cold|warm|empty [--n N]
 *       N invocations and nothing else, for
 *       valgrind --tool=callgrind --toggle-collect=measured_decision
 *       (or =measured_release); with --node DIR the node is prepared
 *       into DIR the first time and reused after (the prefill is most of
 *       the run, and needs no valgrind)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "alloc.h"
#include "bench.h"
#include "benchcg.h"
#include "cleanup.h"
#include "container.h"
#include "cpulist.h"
#include "ledger.h"
#include "oci.h"
#include "policy.h"
#include "topo_cache.h"

enum mode { COLD, WARM, EMPTY, NMODES };
static const char *const mode_name[NMODES] = { "cold", "warm", "empty" };

#define BENCH_ID "bench-ctr"
#define BENCH_PID 4242
#define BENCH_POD "/kubepods/pod1"
#define BENCH_CG BENCH_POD "/bench"

/* A node: its state directory and its cgroup tree. */
struct node {
	char dir[PATH_MAX];
	char state[PATH_MAX + 16];
	struct cc_root *root;
	struct benchcg *cg;
	struct cc_ctx ctx;
};

struct setup {
	const struct bench_host *h;
	struct cc_topo_source src;
	struct cc_root *troot; /* the topology's root (a fixture tree, or "/") */
	char *dir;
	struct node busy, empty;
	char bundle[PATH_MAX + 8], policy[PATH_MAX + 16];
	char state_json[PATH_MAX + 128];
	char request[64];
	int request_cpus;
	FILE *log; /* what the hook would print on stderr: nothing, on this node */
	char *logbuf;
	size_t loglen;
	int npus, ncores, nnuma, prefilled, taken_pus, records;
	long ledger_bytes;
	int misses; /* warm invocations that did not hit the cache */
	bool kept;  /* --node: the directory stays */
};

static const char config_fmt[] =
	"{\n"
	"  \"ociVersion\": \"1.0.2\",\n"
	"  \"process\": { \"terminal\": false, \"user\": { \"uid\": 0, \"gid\": 0 },\n"
	"    \"args\": [\"sh\", \"-c\", \"exec sleep 1000\"],\n"
	"    \"env\": [\"PATH=/usr/sbin:/usr/bin:/sbin:/bin\", \"HOME=/root\"], \"cwd\": \"/\" },\n"
	"  \"root\": { \"path\": \"rootfs\", \"readonly\": false },\n"
	"  \"hostname\": \"bench\",\n"
	"  \"mounts\": [ { \"destination\": \"/proc\", \"type\": \"proc\", \"source\": \"proc\" } ],\n"
	"  \"hooks\": { \"createRuntime\": [ { \"path\": \"/usr/local/bin/corecarve\", \"args\": [\"corecarve\", \"hook\", \"createRuntime\"] } ],\n"
	"             \"poststop\": [ { \"path\": \"/usr/local/bin/corecarve\", \"args\": [\"corecarve\", \"hook\", \"poststop\"] } ] },\n"
	"  \"annotations\": { \"io.kubernetes.container.name\": \"app\"%s%s%s },\n"
	"  \"linux\": { \"cgroupsPath\": \"" BENCH_CG "\",\n"
	"    \"resources\": { \"cpu\": { \"quota\": 200000, \"period\": 100000 } },\n"
	"    \"namespaces\": [ { \"type\": \"pid\" }, { \"type\": \"mount\" } ] }\n"
	"}\n";

static void write_bundle(const char *bundle, const char *annotation)
{
	char path[PATH_MAX + 16], *text;

	if (mkdir(bundle, 0700) < 0 && errno != EEXIST)
		bench_die("%s: %s", bundle, strerror(errno));
	if (asprintf(&text, config_fmt, annotation ? ", \"" CC_ANNOTATION_KEY "\": \"" : "", annotation ? annotation : "",
		     annotation ? "\"" : "") < 0)
		bench_die("out of memory");
	snprintf(path, sizeof(path), "%s/config.json", bundle);
	if (bench_write_file(path, text) < 0)
		bench_die("%s: %s", path, strerror(errno));
	free(text);
}

/* The default policy, IRQs left where they are. */
static void write_policy(const char *path)
{
	const char *from = "irq: steer-away", *p = cc_policy_default_yaml;
	_cleanup_free_ char *text = malloc(strlen(p) + 1);
	char *o = text;

	if (!text)
		bench_die("out of memory");
	while (*p) {
		if (!strncmp(p, from, strlen(from))) {
			o = stpcpy(o, "irq: leave");
			p += strlen(from);
		} else {
			*o++ = *p++;
		}
	}
	*o = '\0';
	if (bench_write_file(path, text) < 0)
		bench_die("%s: %s", path, strerror(errno));
}

static struct cc_policy *load_policy(const struct setup *s)
{
	struct cc_err err = CC_ERR_INIT;
	struct cc_policy *p = cc_policy_load(s->policy, &err);

	if (!p)
		bench_die("%s", err.msg);
	return p;
}

static bool parse_request(const char *yaml, struct cc_request *req)
{
	struct cc_err err = CC_ERR_INIT;

	return cc_request_parse(yaml, strlen(yaml), req, &err) == 0;
}

/* A container id as runtimes make them (64 hex digits), from `n`. */
static void container_id(int n, char *out, size_t len)
{
	unsigned long long h = 0x9e3779b97f4a7c15ULL * (unsigned long long)(n + 1);

	snprintf(out, len, "%016llx%016llx%016llx%016llx", h, h ^ 0x5555555555555555ULL, ~h,
		 h ^ 0xaaaaaaaaaaaaaaaaULL);
}

static void cg_mkdir(struct node *nd, const char *cgroup)
{
	int rc = benchcg_mkdir(nd->cg, cgroup);

	if (rc && rc != EEXIST)
		bench_die("%s: mkdir %s: %s", nd->dir, cgroup, strerror(rc));
}

static void cg_set(struct node *nd, const char *cgroup, const char *file, const char *value)
{
	int rc = benchcg_write(nd->cg, cgroup, file, value);

	if (rc)
		bench_die("%s: %s/%s: %s", nd->dir, cgroup, file, strerror(rc));
}

static void cg_rmdir(struct node *nd, const char *cgroup)
{
	int rc = benchcg_rmdir(nd->cg, cgroup);

	if (rc)
		bench_die("%s: rmdir %s: %s", nd->dir, cgroup, strerror(rc));
}

/* A pod as the kubelet makes a Guaranteed one: its cgroup and the
 * container's, each with the quota of the pod's CPUs. */
static void mk_pod(struct node *nd, const char *pod, const char *ctr, int pod_cpus, int ctr_cpus)
{
	char q[64];

	cg_mkdir(nd, pod);
	snprintf(q, sizeof(q), "%d 100000", pod_cpus * 100000);
	cg_set(nd, pod, "cpu.max", q);
	cg_mkdir(nd, ctr);
	snprintf(q, sizeof(q), "%d 100000", ctr_cpus * 100000);
	cg_set(nd, ctr, "cpu.max", q);
}

static void node_init(struct setup *s, struct node *nd, const char *tag, const char *cpus, const char *mems,
		      bool reuse)
{
	struct cc_err err = CC_ERR_INIT;
	char path[PATH_MAX + 64], line[128];

	snprintf(nd->dir, sizeof(nd->dir), "%s/%s", s->dir, tag);
	snprintf(nd->state, sizeof(nd->state), "%s/state", nd->dir);
	if (mkdir(nd->dir, 0700) < 0 && !(reuse && errno == EEXIST))
		bench_die("%s: %s", nd->dir, strerror(errno));
	nd->cg = benchcg_new(nd->dir, cpus, mems);
	/* Where the runtime's state says the container's process is. */
	snprintf(path, sizeof(path), "%s/proc", nd->dir);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/proc/%d", nd->dir, BENCH_PID);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/proc/%d/cgroup", nd->dir, BENCH_PID);
	snprintf(line, sizeof(line), "0::%s\n", BENCH_CG);
	if (bench_write_file(path, line) < 0)
		bench_die("%s: %s", path, strerror(errno));
	nd->root = cc_root_open(nd->dir, &err);
	if (!nd->root)
		bench_die("%s", err.msg);
	cg_mkdir(nd, "/kubepods");
	nd->ctx = (struct cc_ctx){ .root = nd->root,
				   .policy_path = s->policy,
				   .state_dir = nd->state,
				   .log = s->log,
				   .cg_ops = &benchcg_ops,
				   .cg_ops_arg = nd->cg,
				   .topo_src = &s->src };
}

/* Carve `yaml` for container n in its own pod, as the hook does; false
 * when refused (nothing is left of it then). */
static bool prefill_one(struct setup *s, const char *yaml, int n, hwloc_bitmap_t taken)
{
	struct cc_err err = CC_ERR_INIT;
	struct cc_request req;
	struct cc_create_result res;
	struct cc_carve_spec spec;
	char id[80], pod[64], cg[160];
	bool ok;

	if (!parse_request(yaml, &req))
		bench_die("%s: bad request", yaml);
	container_id(n, id, sizeof(id));
	snprintf(pod, sizeof(pod), "/kubepods/pod%d", n);
	snprintf(cg, sizeof(cg), "%s/%s", pod, id);
	/* The measured container is pod1's second one: its quota counts it. */
	mk_pod(&s->busy, pod, cg, req.cpus + (!strcmp(pod, BENCH_POD) ? s->request_cpus : 0), req.cpus);
	spec = (struct cc_carve_spec){ .id = id, .kind = "container", .cgroup = cg, .req = &req };
	ok = cc_carve_create(&s->busy.ctx, &spec, &res, &err) == 0 && res.carved;
	if (ok) {
		hwloc_bitmap_or(taken, taken, res.decision.cpus);
		hwloc_bitmap_or(taken, taken, res.decision.parked);
	} else {
		cg_rmdir(&s->busy, cg);
		if (strcmp(pod, BENCH_POD))
			cg_rmdir(&s->busy, pod);
	}
	cc_decision_fini(&res.decision);
	return ok;
}

/* What the runtime and poststop do when container n goes. */
static void unfill_one(struct setup *s, int n)
{
	struct cc_err err = CC_ERR_INIT;
	char id[80], pod[64], cg[160];

	container_id(n, id, sizeof(id));
	snprintf(pod, sizeof(pod), "/kubepods/pod%d", n);
	snprintf(cg, sizeof(cg), "%s/%s", pod, id);
	cg_rmdir(&s->busy, cg);
	if (cc_container_release(&s->busy.ctx, id, "container", &err) < 0)
		bench_die("release %s: %s", id, err.msg);
	if (strcmp(pod, BENCH_POD))
		cg_rmdir(&s->busy, pod);
}

static void ledger_stats(struct setup *s)
{
	struct cc_err err = CC_ERR_INIT;
	_cleanup_ledger_ struct cc_ledger *l = cc_ledger_read(s->busy.state, &err);
	char path[PATH_MAX + 32];
	json_t *cg;
	struct stat st;

	if (!l)
		bench_die("%s", err.msg);
	s->prefilled = cc_ledger_ncarves(l);
	cg = cc_ledger_section(l, "cgroup", false);
	s->records = cg ? (int)json_array_size(json_object_get(cg, "files")) : 0;
	snprintf(path, sizeof(path), "%s/" CC_LEDGER_FILE, s->busy.state);
	s->ledger_bytes = stat(path, &st) == 0 ? (long)st.st_size : 0;
}

/* The request this host can carve (the first that fits an empty node),
 * then carves for about half its CPUs, keeping room for the request. */
static bool prepare(struct setup *s, const struct bench_host *h, const char *node_dir)
{
	static const char *const tries[] = { "{class: latency, cpus: 2}", "{class: latency, cpus: 1}",
					     "{class: throughput, cpus: 2}", "{class: throughput, cpus: 1}" };
	static const char *const fill[] = { "{class: latency, cpus: 1}", "{class: throughput, cpus: 2}",
					    "{class: latency, cpus: 2}", "{class: throughput, cpus: 4}" };
	struct cc_err err = CC_ERR_INIT;
	_cleanup_policy_ struct cc_policy *p = NULL;
	_cleanup_topo_ struct cc_topo *t = NULL;
	_cleanup_bitmap_ hwloc_bitmap_t none = hwloc_bitmap_alloc();
	_cleanup_bitmap_ hwloc_bitmap_t taken = hwloc_bitmap_alloc();
	_cleanup_bitmap_ hwloc_bitmap_t mems = hwloc_bitmap_alloc();
	_cleanup_free_ char *cpus = NULL, *mem_list = NULL;
	char path[PATH_MAX + 32];
	int n = 0;

	bool reuse = false;

	memset(s, 0, sizeof(*s));
	s->h = h;
	if (!bench_source(h, &s->src, &s->troot))
		return false;
	if (node_dir) {
		/* A node prepared by an earlier run of this build (callgrind.sh:
		 * the prefill natively, the measurement under valgrind). */
		snprintf(path, sizeof(path), "%s/ready", node_dir);
		reuse = access(path, F_OK) == 0;
		if (!reuse && mkdir(node_dir, 0700) < 0)
			bench_die("%s: %s", node_dir, strerror(errno));
		s->dir = strdup(node_dir);
		if (!s->dir)
			bench_die("out of memory");
	} else {
		s->dir = bench_tmpdir("decide");
	}
	s->log = open_memstream(&s->logbuf, &s->loglen);
	if (!s->log)
		bench_die("out of memory");
	snprintf(s->bundle, sizeof(s->bundle), "%s/bundle", s->dir);
	snprintf(s->policy, sizeof(s->policy), "%s/policy.yaml", s->dir);
	write_policy(s->policy);
	p = load_policy(s);
	s->src.overrides = p->overrides;
	s->src.noverrides = p->noverrides;
	t = cc_topo_load(&s->src, &err);
	if (!t)
		bench_die("%s: %s", h->name, err.msg);
	s->npus = t->npus;
	s->ncores = t->ncores;
	s->nnuma = t->nnuma;
	for (int i = 0; i < t->nnuma; i++)
		hwloc_bitmap_set(mems, (unsigned)(t->numa[i].os >= 0 ? t->numa[i].os : i));
	if (hwloc_bitmap_iszero(mems))
		hwloc_bitmap_set(mems, 0);
	cpus = cc_cpulist_format(t->online);
	mem_list = cc_cpulist_format(mems);
	if (!cpus || !mem_list)
		bench_die("out of memory");
	snprintf(s->request, sizeof(s->request), "%s", tries[0]);
	for (size_t i = 0; i < sizeof(tries) / sizeof(tries[0]); i++) {
		struct cc_request req;
		struct cc_decision d;

		cc_err_clear(&err);
		if (!parse_request(tries[i], &req) || cc_allocate(t, p, none, &req, &d, &err) < 0)
			continue;
		cc_decision_fini(&d);
		snprintf(s->request, sizeof(s->request), "%s", tries[i]);
		break;
	}
	{
		struct cc_request req;

		parse_request(s->request, &req);
		s->request_cpus = req.cpus;
	}
	node_init(s, &s->busy, "node", cpus, mem_list, reuse);
	node_init(s, &s->empty, "node-empty", cpus, mem_list, reuse);
	while (!reuse && 2 * hwloc_bitmap_weight(taken) < t->npus) {
		struct cc_request req;
		struct cc_decision d;
		bool fits;

		if (!prefill_one(s, fill[n % 4], n, taken) && !prefill_one(s, fill[0], n, taken))
			break;
		/* Keep room for the measured request. */
		parse_request(s->request, &req);
		cc_err_clear(&err);
		fits = cc_allocate(t, p, taken, &req, &d, &err) == 0;
		if (fits)
			cc_decision_fini(&d);
		if (!fits) {
			unfill_one(s, n);
			break;
		}
		n++;
	}
	/* The measured container's pod, on both nodes. */
	if (!reuse && n <= 1)
		mk_pod(&s->busy, BENCH_POD, BENCH_POD "/placeholder", s->request_cpus, 1);
	if (!reuse)
		mk_pod(&s->empty, BENCH_POD, BENCH_POD "/placeholder", s->request_cpus, 1);
	{
		_cleanup_bitmap_ hwloc_bitmap_t all = NULL;
		struct cc_err e2 = CC_ERR_INIT;
		_cleanup_ledger_ struct cc_ledger *l = cc_ledger_read(s->busy.state, &e2);

		if (!l)
			bench_die("%s", e2.msg);
		all = cc_ledger_taken(l);
		s->taken_pus = all ? hwloc_bitmap_weight(all) : 0;
	}
	ledger_stats(s);
	write_bundle(s->bundle, s->request);
	snprintf(path, sizeof(path), "%s/rootfs", s->bundle);
	mkdir(path, 0700);
	snprintf(s->state_json, sizeof(s->state_json),
		 "{\"ociVersion\":\"1.0.2\",\"id\":\"" BENCH_ID "\",\"status\":\"created\",\"pid\":%d,\"bundle\":\"%s\"}",
		 BENCH_PID, s->bundle);
	s->kept = node_dir != NULL;
	if (node_dir && !reuse) {
		snprintf(path, sizeof(path), "%s/ready", node_dir);
		if (bench_write_file(path, "") < 0)
			bench_die("%s: %s", path, strerror(errno));
	}
	return true;
}

static void teardown(struct setup *s)
{
	fclose(s->log);
	free(s->logbuf);
	if (!s->kept)
		bench_rmdir(s->dir);
	free(s->dir);
	cc_root_free(s->troot);
	cc_root_free(s->busy.root);
	cc_root_free(s->empty.root);
	benchcg_free(s->busy.cg);
	benchcg_free(s->empty.cg);
}

static struct node *node_of(struct setup *s, enum mode m)
{
	return m == EMPTY ? &s->empty : &s->busy;
}

/* createRuntime, from its stdin on: 1 when carved. */
static int decision(struct setup *s, struct node *nd)
{
	struct cc_err err = CC_ERR_INIT;
	struct cc_oci_state st = { 0 };
	struct cc_create_result res;
	int carved;

	if (cc_oci_state_parse(s->state_json, strlen(s->state_json), &st, &err) < 0)
		bench_die("%s", err.msg);
	/* A refusal (no room: this 2-CPU machine) is still a whole decision. */
	if (cc_container_create(&nd->ctx, &st, &res, &err) < 0 && err.code != ENOSPC)
		bench_die("%s: createRuntime: %s", s->h->name, err.msg);
	carved = res.carved;
	cc_decision_fini(&res.decision);
	cc_oci_state_fini(&st);
	return carved;
}

/* poststop. */
static void release(struct setup *s, struct node *nd)
{
	struct cc_err err = CC_ERR_INIT;

	if (cc_container_release(&nd->ctx, BENCH_ID, "container", &err) < 0)
		bench_die("%s: poststop: %s", s->h->name, err.msg);
}

/* The invocations callgrind counts (--toggle-collect=measured_decision or
 * measured_release); priming the cache goes around them. */
static __attribute__((noinline)) int measured_decision(struct setup *s, struct node *nd)
{
	return decision(s, nd);
}

static __attribute__((noinline)) void measured_release(struct setup *s, struct node *nd)
{
	release(s, nd);
}

static bool same_file(const struct stat *a, const struct stat *b)
{
	return a->st_ino == b->st_ino && a->st_mtim.tv_sec == b->st_mtim.tv_sec &&
	       a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

/* One decision and its release; *dec and *rel get their times (ns).
 * `measured`: through the functions callgrind counts. */
static int decide_release(struct setup *s, enum mode m, bool measured, uint64_t *dec, uint64_t *rel)
{
	struct node *nd = node_of(s, m);
	char cache[PATH_MAX + 32];
	struct stat before, after;
	uint64_t t0;
	int carved;

	snprintf(cache, sizeof(cache), "%s/" CC_TOPO_CACHE_FILE, nd->state);
	if (m == COLD)
		unlink(cache);
	/* The runtime made the container's cgroup. */
	cg_mkdir(nd, BENCH_CG);
	cg_set(nd, BENCH_CG, "cpu.max", "200000 100000");
	if (m == WARM && stat(cache, &before) < 0)
		s->misses++;
	t0 = bench_now();
	carved = measured ? measured_decision(s, nd) : decision(s, nd);
	if (dec)
		*dec = bench_now() - t0;
	if (m == WARM && (stat(cache, &after) < 0 || !same_file(&before, &after)))
		s->misses++;
	/* The container ran and went; the runtime removed its cgroup. */
	cg_rmdir(nd, BENCH_CG);
	t0 = bench_now();
	if (measured)
		measured_release(s, nd);
	else
		release(s, nd);
	if (rel)
		*rel = bench_now() - t0;
	return carved;
}

/* Write the cache files, outside what is measured. */
static void prime_cache(struct setup *s)
{
	decide_release(s, WARM, false, NULL, NULL);
	decide_release(s, EMPTY, false, NULL, NULL);
	s->misses = 0;
}

/* The node is as it was: the carves of the prefill and nothing the hook
 * had to say (a record someone else changed, a kernel that refused). */
static void check_node(struct setup *s)
{
	struct cc_err err = CC_ERR_INIT;
	_cleanup_ledger_ struct cc_ledger *l = cc_ledger_read(s->busy.state, &err);

	if (!l)
		bench_die("%s", err.msg);
	if (cc_ledger_ncarves(l) != s->prefilled || cc_ledger_find(l, BENCH_ID))
		bench_die("%s: %d carves after the runs, %d before", s->h->name, cc_ledger_ncarves(l), s->prefilled);
	fflush(s->log);
	if (s->loglen)
		bench_die("%s: the hook said: %.400s", s->h->name, s->logbuf);
}

static double ms(double ns)
{
	return ns / 1e6;
}

struct row {
	struct bench_stats st[NMODES], rel, rel_empty;
	int carved[NMODES], n;
};

static void measure(struct setup *s, int n, struct row *r)
{
	uint64_t *tot[NMODES];
	_cleanup_free_ uint64_t *rel = calloc((size_t)n, sizeof(uint64_t));
	_cleanup_free_ uint64_t *rel_empty = calloc((size_t)n, sizeof(uint64_t));

	memset(r, 0, sizeof(*r));
	for (int m = 0; m < NMODES; m++)
		if (!(tot[m] = calloc((size_t)n, sizeof(uint64_t))))
			bench_die("out of memory");
	if (!rel || !rel_empty)
		bench_die("out of memory");
	r->n = n;
	prime_cache(s);
	for (int i = 0; i < n; i++) {
		/* Rotate the order, so no mode always follows the same one
		 * (page cache, allocator state, the CPU's caches). */
		for (int k = 0; k < NMODES; k++) {
			enum mode m = (enum mode)((i + k) % NMODES);

			r->carved[m] += decide_release(s, m, true, &tot[m][i],
						       m == WARM ? &rel[i] : m == EMPTY ? &rel_empty[i] : NULL);
		}
	}
	for (int m = 0; m < NMODES; m++) {
		r->st[m] = bench_stats(tot[m], n);
		free(tot[m]);
	}
	r->rel = bench_stats(rel, n);
	r->rel_empty = bench_stats(rel_empty, n);
	check_node(s);
}

/* Process cost: what every container pays once the hook is registered —
 * exec, dynamic linking, the state and config.json read — measured with
 * an unannotated container, against the bare start of the same binary. */
static void process_cost(const char *bin, const struct setup *s, int n)
{
	_cleanup_free_ uint64_t *hook = calloc((size_t)n, sizeof(uint64_t));
	_cleanup_free_ uint64_t *ver = calloc((size_t)n, sizeof(uint64_t));
	char plain[PATH_MAX + 16], state[PATH_MAX + 16], json[PATH_MAX + 128];
	struct bench_stats h, v;

	if (!hook || !ver)
		bench_die("out of memory");
	snprintf(plain, sizeof(plain), "%s/plain", s->dir);
	write_bundle(plain, NULL);
	snprintf(state, sizeof(state), "%s/plain-state.json", s->dir);
	snprintf(json, sizeof(json), "{\"ociVersion\":\"1.0.2\",\"id\":\"plain\",\"status\":\"created\",\"pid\":1,\"bundle\":\"%s\"}",
		 plain);
	if (bench_write_file(state, json) < 0)
		bench_die("%s: %s", state, strerror(errno));
	for (int i = 0; i < n; i++)
		for (int k = 0; k < 2; k++) {
			bool is_hook = (k == 0) == (i % 2 == 0);
			uint64_t t0 = bench_now();
			pid_t pid = fork();
			int status;

			if (pid < 0)
				bench_die("fork: %s", strerror(errno));
			if (pid == 0) {
				int in = open(is_hook ? state : "/dev/null", O_RDONLY);
				int out = open("/dev/null", O_WRONLY);

				if (in < 0 || out < 0 || dup2(in, 0) < 0 || dup2(out, 1) < 0)
					_exit(127);
				if (is_hook)
					execl(bin, "corecarve", "hook", "createRuntime", "--root", s->troot->path, "--state",
					      s->busy.state, (char *)NULL);
				else
					execl(bin, "corecarve", "--version", (char *)NULL);
				_exit(127);
			}
			if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
				bench_die("%s %s failed (status %d)", bin, is_hook ? "hook" : "--version", status);
			(is_hook ? hook : ver)[i] = bench_now() - t0;
		}
	h = bench_stats(hook, n);
	v = bench_stats(ver, n);
	printf("\nprocess: `corecarve hook createRuntime` for an unannotated container (exec, libraries, state and\n"
	       "config.json read), against `corecarve --version`, %d interleaved pairs:\n", n);
	printf("  hook    median %.3f ms  p99 %.3f ms\n", ms(h.median), ms(h.p99));
	printf("  start   median %.3f ms  p99 %.3f ms\n", ms(v.median), ms(v.p99));
	printf("BENCH host process hook_median_ms=%.3f start_median_ms=%.3f n=%d\n", ms(h.median), ms(v.median), n);
}

static void usage(void)
{
	fprintf(stderr, "usage: decide [--n N] [--n-large N] [--only HOST] [--bin CORECARVE]\n"
			"       decide --callgrind --only HOST --mode cold|warm|empty [--n N] [--node DIR]\n");
	exit(2);
}

static int mode_parse(const char *s)
{
	for (int m = 0; m < NMODES; m++)
		if (!strcmp(s, mode_name[m]))
			return m;
	return -1;
}

static void print_tables(const struct bench_host *hosts, int nhosts, const struct setup *setups,
			 const struct row *rows, const bool *have)
{
	printf("%-9s %5s %5s %4s %-30s %6s %7s %5s | %-17s | %-17s | %5s | %-17s | %-17s | %7s\n", "host", "PUs", "cores",
	       "NUMA", "request (carves in the ledger)", "recs", "ledger", "n", "cold median / p99", "warm median / p99",
	       "c/w", "empty median / p99", "release med / p99", "rel(0)");
	for (int i = 0; i < nhosts; i++) {
		const struct setup *s = &setups[i];
		const struct row *r = &rows[i];
		char req[64];

		if (!have[i])
			continue;
		snprintf(req, sizeof(req), "%s (%d)%s", s->request, s->prefilled, r->carved[WARM] ? "" : " refused");
		printf("%-9s %5d %5d %4d %-30s %6d %6ldK %5d | %7.3f / %7.3f | %7.3f / %7.3f | %4.1fx | %7.3f / %7.3f | %7.3f / "
		       "%7.3f | %7.3f\n",
		       hosts[i].name, s->npus, s->ncores, s->nnuma, req, s->records, s->ledger_bytes / 1024, r->n,
		       ms(r->st[COLD].median), ms(r->st[COLD].p99), ms(r->st[WARM].median), ms(r->st[WARM].p99),
		       r->st[COLD].median / r->st[WARM].median, ms(r->st[EMPTY].median), ms(r->st[EMPTY].p99),
		       ms(r->rel.median), ms(r->rel.p99), ms(r->rel_empty.median));
	}
	printf("(ms. A decision is createRuntime from its stdin on, with the cgroup plan, journal, writes and final\n"
	       " commit; a release is poststop. cold: no topology cache (discovery + writing it, the first hook after a\n"
	       " boot); warm: the cache; both with the ledger holding the carves in brackets and their node records\n"
	       " (recs; ledger: the file's size). empty: the cache, no carves. c/w: cold median / warm median.\n"
	       " release: poststop of the warm decision's carve; rel(0): of the empty one's.)\n");
	for (int i = 0; i < nhosts; i++) {
		const struct row *r = &rows[i];

		if (!have[i])
			continue;
		printf("BENCH decide host=%s pus=%d cores=%d carves=%d carved_pus=%d records=%d ledger_bytes=%ld n=%d "
		       "cold_median_ms=%.4f cold_p99_ms=%.4f warm_median_ms=%.4f warm_p99_ms=%.4f empty_median_ms=%.4f "
		       "empty_p99_ms=%.4f release_ms=%.4f release_p99_ms=%.4f release_empty_ms=%.4f\n",
		       hosts[i].name, setups[i].npus, setups[i].ncores, setups[i].prefilled, setups[i].taken_pus,
		       setups[i].records, setups[i].ledger_bytes, r->n, ms(r->st[COLD].median), ms(r->st[COLD].p99),
		       ms(r->st[WARM].median), ms(r->st[WARM].p99), ms(r->st[EMPTY].median), ms(r->st[EMPTY].p99),
		       ms(r->rel.median), ms(r->rel.p99), ms(r->rel_empty.median));
	}
}

int main(int argc, char **argv)
{
	int n = 1000, n_large = 200, nhosts, mode = -1;
	const char *only = NULL, *bin = NULL, *node_dir = NULL;
	bool callgrind = false, any = false;
	struct bench_host *hosts = bench_hosts(&nhosts);
	struct row *rows = calloc((size_t)nhosts, sizeof(*rows));
	struct setup *setups = calloc((size_t)nhosts, sizeof(*setups));
	bool *have = calloc((size_t)nhosts, sizeof(bool));

	if (!rows || !setups || !have)
		bench_die("out of memory");
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--n") && i + 1 < argc)
			n = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--n-large") && i + 1 < argc)
			n_large = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--only") && i + 1 < argc)
			only = argv[++i];
		else if (!strcmp(argv[i], "--bin") && i + 1 < argc)
			bin = argv[++i];
		else if (!strcmp(argv[i], "--mode") && i + 1 < argc)
			mode = mode_parse(argv[++i]);
		else if (!strcmp(argv[i], "--node") && i + 1 < argc)
			node_dir = argv[++i];
		else if (!strcmp(argv[i], "--callgrind"))
			callgrind = true;
		else
			usage();
	}
	if (n < 1 || n_large < 1 || (callgrind && (!only || mode < 0)))
		usage();

	if (callgrind) {
		for (int i = 0; i < nhosts; i++) {
			struct setup s;

			if (strcmp(hosts[i].name, only) || !prepare(&s, &hosts[i], node_dir))
				continue;
			prime_cache(&s);
			for (int k = 0; k < n; k++)
				decide_release(&s, (enum mode)mode, true, NULL, NULL);
			check_node(&s);
			printf("callgrind %s %s n=%d pus=%d carves=%d records=%d ledger_bytes=%ld misses=%d\n", only,
			       mode_name[mode], n, s.npus, s.prefilled, s.records, s.ledger_bytes, s.misses);
			teardown(&s);
			return 0;
		}
		bench_die("no host %s", only);
	}

	bench_print_machine();
	printf("decision latency: %d invocations per host and mode (%d above 256 PUs), modes interleaved\n", n,
	       n_large);
	for (int i = 0; i < nhosts; i++) {
		if (only && strcmp(hosts[i].name, only))
			continue;
		fprintf(stderr, "decide: %s: prefill...\n", hosts[i].name);
		if (!prepare(&setups[i], &hosts[i], NULL))
			continue;
		if (!any)
			printf("state directory on %s; default policy with irq: leave\n\n", bench_fstype(setups[i].dir));
		any = have[i] = true;
		fprintf(stderr, "decide: %s: %d carves, %d records, %ld bytes...\n", hosts[i].name, setups[i].prefilled,
			setups[i].records, setups[i].ledger_bytes);
		measure(&setups[i], setups[i].npus > 256 ? n_large : n, &rows[i]);
		if (setups[i].misses)
			printf("WARNING %s: %d warm invocations missed the cache\n", hosts[i].name, setups[i].misses);
	}
	if (!any)
		bench_die("no host to run on");
	print_tables(hosts, nhosts, setups, rows, have);
	if (bin) {
		for (int i = 0; i < nhosts; i++)
			if (have[i] && !strcmp(hosts[i].name, "F03")) {
				process_cost(bin, &setups[i], n < 200 ? n : 200);
				break;
			}
	}
	for (int i = 0; i < nhosts; i++)
		if (have[i])
			teardown(&setups[i]);
	free(rows);
	free(setups);
	free(have);
	return 0;
}
