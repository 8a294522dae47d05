/* Decision latency: the hook's whole decision path, timed in process.
 *
 * One invocation does what `corecarve hook createRuntime` does before and
 * after the cgroup writes (which need a live cgroup2 host and are timed in
 * the QEMU harness instead, tests/e2e/scenarios/95-bench.sh): parse the
 * runtime's state JSON, load the bundle's config.json and its annotation,
 * load the policy file, load the topology, lock the ledger, gc, allocate,
 * record the carve and commit the ledger (write, fsync, rename) in a
 * scratch state directory on tmpfs, unlock and free.  The ledger holds
 * carves for about half the machine, so the allocator and the ledger work
 * on a busy node.  After each invocation the carve is released (what
 * poststop does to the ledger), timed on its own.
 *
 * Topology "cold" is cc_topo_load (hwloc discovery, every hook before the
 * cache); "warm" is cc_topo_cache_load with a valid cache.  Cold and warm
 * invocations alternate, so drift and load on a shared machine hit both.
 *
 *   decide [--n N] [--n-large N] [--only HOST] [--bin CORECARVE]
 *       the tables: N invocations per mode (N-large above 256 PUs)
 *   decide --callgrind --only HOST --mode cold|warm|empty [--n N]
 *       N invocations and nothing else, for
 *       valgrind --tool=callgrind --toggle-collect=measured_decision
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
#include "cleanup.h"
#include "cpulist.h"
#include "ledger.h"
#include "oci.h"
#include "policy.h"
#include "topo_cache.h"

/* cold: discovery, busy ledger; warm: cached model, busy ledger; empty:
 * cached model, empty ledger (a node's first carve). */
enum mode { COLD, WARM, EMPTY, NMODES };
static const char *const mode_name[NMODES] = { "cold", "warm", "empty" };

enum { PH_READ, PH_POLICY, PH_TOPO, PH_LOCK, PH_ALLOC, PH_COMMIT, PH_FREE, NPH };
static const char *const phase_name[NPH] = { "read", "policy", "topology", "lock+gc", "allocate", "commit", "free" };

struct setup {
	const struct bench_host *h;
	struct cc_topo_source src;
	struct cc_root *root;
	struct cc_root *host;   /* gc looks for the prefill's cgroups under <dir>/cg, as on a host */
	char cgmount[PATH_MAX];
	char *dir;
	char state_dir[PATH_MAX], empty_dir[PATH_MAX], bundle[PATH_MAX + 8], policy[PATH_MAX + 16];
	char state_json[PATH_MAX + 128];
	char request[64];
	char *ledger_text; /* the busy ledger, put back after each invocation */
	int npus, ncores, nnuma, prefilled, taken_pus;
	int misses; /* warm invocations that did not hit the cache */
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
	"  \"linux\": { \"cgroupsPath\": \"/kubepods/pod1/bench\",\n"
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

static void mkdir_p(char *path)
{
	for (char *p = path + 1; *p; p++)
		if (*p == '/') {
			*p = '\0';
			if (mkdir(path, 0755) < 0 && errno != EEXIST)
				bench_die("%s: %s", path, strerror(errno));
			*p = '/';
		}
	if (mkdir(path, 0755) < 0 && errno != EEXIST)
		bench_die("%s: %s", path, strerror(errno));
}

/* Carve `req` into the ledger as a finished container carve, with a
 * container id and a cgroup that exists under the scratch directory's cg/
 * (each decision's gc looks for every one, as the hook's does in
 * /sys/fs/cgroup); false when refused. */
static bool prefill_one(const struct setup *s, struct cc_ledger *l, const struct cc_topo *t,
			const struct cc_policy *p, const char *yaml, int n)
{
	struct cc_err err = CC_ERR_INIT;
	struct cc_request req;
	struct cc_decision d;
	struct cc_carve c;
	_cleanup_bitmap_ hwloc_bitmap_t taken = cc_ledger_taken(l);
	char dir[PATH_MAX + 512];
	bool ok;

	if (!taken || !parse_request(yaml, &req) || cc_allocate(t, p, taken, &req, &d, &err) < 0)
		return false;
	ok = d.exclusive;
	if (ok) {
		cc_carve_init(&c);
		container_id(n, c.id, sizeof(c.id));
		snprintf(c.cgroup, sizeof(c.cgroup), "/kubepods/pod%d/%s", n, c.id);
		snprintf(dir, sizeof(dir), "%s/cg%s", s->dir, c.cgroup);
		mkdir_p(dir);
		snprintf(c.kind, sizeof(c.kind), "container");
		snprintf(c.class_name, sizeof(c.class_name), "%s", d.class_name);
		snprintf(c.core_class, sizeof(c.core_class), "%s", d.core_class);
		snprintf(c.mode, sizeof(c.mode), "remote-partition");
		hwloc_bitmap_copy(c.cpus, d.cpus);
		hwloc_bitmap_copy(c.parked, d.parked);
		hwloc_bitmap_copy(c.mems, d.mems);
		c.exclusive = true;
		if (cc_ledger_add(l, &c, &err) < 0)
			bench_die("prefill: %s", err.msg);
		cc_carve_fini(&c);
	}
	cc_decision_fini(&d);
	return ok;
}

/* The request this host can carve (the first that fits an empty node),
 * then carves for about half its CPUs, keeping room for the request. */
static bool prepare(struct setup *s, const struct bench_host *h)
{
	static const char *const tries[] = { "{class: latency, cpus: 2}", "{class: latency, cpus: 1}",
					     "{class: throughput, cpus: 2}", "{class: throughput, cpus: 1}" };
	static const char *const fill[] = { "{class: latency, cpus: 1}", "{class: throughput, cpus: 2}",
					    "{class: latency, cpus: 2}", "{class: throughput, cpus: 4}" };
	struct cc_err err = CC_ERR_INIT;
	_cleanup_policy_ struct cc_policy *p = NULL;
	_cleanup_topo_ struct cc_topo *t = NULL;
	_cleanup_ledger_ struct cc_ledger *l = NULL;
	_cleanup_bitmap_ hwloc_bitmap_t none = hwloc_bitmap_alloc();
	char path[PATH_MAX + 32];
	int n = 0;

	memset(s, 0, sizeof(*s));
	s->h = h;
	if (!bench_source(h, &s->src, &s->root))
		return false;
	s->dir = bench_tmpdir("decide");
	s->host = cc_root_open("/", &err);
	if (!s->host)
		bench_die("%s", err.msg);
	snprintf(s->cgmount, sizeof(s->cgmount), "%s/cg", s->dir);
	snprintf(s->state_dir, sizeof(s->state_dir), "%s/state", s->dir);
	snprintf(s->empty_dir, sizeof(s->empty_dir), "%s/state-empty", s->dir);
	snprintf(s->bundle, sizeof(s->bundle), "%s/bundle", s->dir);
	snprintf(s->policy, sizeof(s->policy), "%s/policy.yaml", s->dir);
	if (bench_write_file(s->policy, cc_policy_default_yaml) < 0)
		bench_die("%s: %s", s->policy, strerror(errno));
	p = load_policy(s);
	s->src.overrides = p->overrides;
	s->src.noverrides = p->noverrides;
	t = cc_topo_load(&s->src, &err);
	if (!t)
		bench_die("%s: %s", h->name, err.msg);
	s->npus = t->npus;
	s->ncores = t->ncores;
	s->nnuma = t->nnuma;
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
	l = cc_ledger_open(s->state_dir, &err);
	if (!l)
		bench_die("%s", err.msg);
	for (;;) {
		_cleanup_bitmap_ hwloc_bitmap_t taken = cc_ledger_taken(l);
		struct cc_request req;
		struct cc_decision d;
		bool fits;

		if (!taken || 2 * hwloc_bitmap_weight(taken) >= t->npus)
			break;
		if (!prefill_one(s, l, t, p, fill[n % 4], n)) {
			if (!prefill_one(s, l, t, p, fill[0], n))
				break;
		}
		/* Keep room for the measured request. */
		hwloc_bitmap_free(taken);
		taken = cc_ledger_taken(l);
		parse_request(s->request, &req);
		cc_err_clear(&err);
		fits = cc_allocate(t, p, taken, &req, &d, &err) == 0;
		if (fits)
			cc_decision_fini(&d);
		if (!fits) {
			char id[sizeof(((struct cc_carve *)0)->id)];

			container_id(n, id, sizeof(id));
			cc_ledger_remove(l, id);
			break;
		}
		n++;
	}
	s->prefilled = l->ncarves;
	{
		_cleanup_bitmap_ hwloc_bitmap_t taken = cc_ledger_taken(l);

		s->taken_pus = taken ? hwloc_bitmap_weight(taken) : 0;
	}
	if (cc_ledger_commit(l, &err) < 0)
		bench_die("%s", err.msg);
	/* NULL: nothing was carved, there is no ledger file. */
	s->ledger_text = l->snapshot ? strdup(l->snapshot) : NULL;
	if (l->snapshot && !s->ledger_text)
		bench_die("out of memory");
	write_bundle(s->bundle, s->request);
	snprintf(path, sizeof(path), "%s/rootfs", s->bundle);
	mkdir(path, 0700);
	snprintf(s->state_json, sizeof(s->state_json),
		 "{\"ociVersion\":\"1.0.2\",\"id\":\"bench-ctr\",\"status\":\"created\",\"pid\":4242,\"bundle\":\"%s\"}",
		 s->bundle);
	return true;
}

static void teardown(struct setup *s)
{
	free(s->ledger_text);
	bench_rmdir(s->dir);
	free(s->dir);
	cc_root_free(s->root);
	cc_root_free(s->host);
}

static const char *state_of(const struct setup *s, enum mode m)
{
	return m == EMPTY ? s->empty_dir : s->state_dir;
}

/* One hook decision.  Returns 1 when carved, 0 when refused. */
static int decide_once(struct setup *s, enum mode m, uint64_t *ph)
{
	const char *dir = state_of(s, m);
	bool warm = m != COLD;
	struct cc_err err = CC_ERR_INIT;
	struct cc_oci_state st = { 0 };
	struct cc_oci_config cfg = { 0 };
	struct cc_request req;
	struct cc_decision d = { 0 };
	struct cc_topo_cache_info info;
	struct cc_topo_source src = s->src;
	struct cc_policy *p;
	struct cc_topo *t;
	struct cc_ledger *l;
	hwloc_bitmap_t taken;
	const char *key = NULL;
	uint64_t t0 = bench_now(), t1, t2, t3, t4, t5, t6;
	int carved = 0;

	if (cc_oci_state_parse(s->state_json, strlen(s->state_json), &st, &err) < 0 ||
	    cc_oci_config_load(st.bundle, &cfg, &err) < 0)
		bench_die("%s", err.msg);
	if (cc_request_lookup(cfg.annotations, "app", &req, &key, &err) != 1)
		bench_die("annotation: %s", err.msg[0] ? err.msg : "missing");
	t1 = bench_now();
	p = load_policy(s);
	if (!cc_policy_class(p, req.class_name))
		bench_die("unknown class %s", req.class_name);
	t2 = bench_now();
	src.overrides = p->overrides;
	src.noverrides = p->noverrides;
	t = warm ? cc_topo_cache_load(&src, dir, &info, &err) : cc_topo_load(&src, &err);
	if (!t)
		bench_die("%s", err.msg);
	if (warm && !info.hit)
		s->misses++;
	t3 = bench_now();
	/* As the hook's create path: the ledger's index, gc of every carve's
	 * cgroup. */
	l = cc_ledger_open_index(dir, &err);
	if (!l || cc_ledger_gc(l, s->host, s->cgmount, NULL, NULL, &err) < 0)
		bench_die("%s", err.msg);
	if (cc_ledger_find(l, st.id))
		bench_die("%s: left in the ledger", st.id);
	taken = cc_ledger_taken(l);
	if (!taken)
		bench_die("out of memory");
	t4 = bench_now();
	if (cc_allocate(t, p, taken, &req, &d, &err) == 0)
		carved = d.exclusive;
	t5 = bench_now();
	if (carved) {
		struct cc_carve c;

		cc_carve_init(&c);
		snprintf(c.id, sizeof(c.id), "%s", st.id);
		snprintf(c.kind, sizeof(c.kind), "container");
		snprintf(c.cgroup, sizeof(c.cgroup), "/kubepods/pod1/bench");
		snprintf(c.class_name, sizeof(c.class_name), "%s", d.class_name);
		snprintf(c.core_class, sizeof(c.core_class), "%s", d.core_class);
		snprintf(c.mode, sizeof(c.mode), "remote-partition");
		hwloc_bitmap_copy(c.cpus, d.cpus);
		hwloc_bitmap_copy(c.parked, d.parked);
		hwloc_bitmap_copy(c.mems, d.mems);
		c.exclusive = true;
		if (cc_ledger_add(l, &c, &err) < 0 || cc_ledger_commit(l, &err) < 0)
			bench_die("%s", err.msg);
		cc_carve_fini(&c);
	}
	t6 = bench_now();
	cc_decision_fini(&d);
	hwloc_bitmap_free(taken);
	cc_ledger_close(l);
	cc_topo_free(t);
	cc_policy_free(p);
	cc_oci_config_fini(&cfg);
	cc_oci_state_fini(&st);
	if (ph) {
		uint64_t t7 = bench_now();

		ph[PH_READ] = t1 - t0;
		ph[PH_POLICY] = t2 - t1;
		ph[PH_TOPO] = t3 - t2;
		ph[PH_LOCK] = t4 - t3;
		ph[PH_ALLOC] = t5 - t4;
		ph[PH_COMMIT] = t6 - t5;
		ph[PH_FREE] = t7 - t6;
	}
	return carved;
}

/* The invocations callgrind counts (--toggle-collect=measured_decision);
 * priming the cache goes around it. */
static __attribute__((noinline)) int measured_decision(struct setup *s, enum mode m, uint64_t *ph)
{
	return decide_once(s, m, ph);
}

/* What poststop does to the ledger (a carve that was there: every carve
 * is loaded). */
static uint64_t release(struct setup *s, enum mode m)
{
	struct cc_err err = CC_ERR_INIT;
	uint64_t t0 = bench_now();
	struct cc_ledger *l = cc_ledger_open_index(state_of(s, m), &err);
	struct cc_carve *c;
	int found;

	if (!l)
		bench_die("%s", err.msg);
	found = cc_ledger_lookup(l, "bench-ctr", &c, &err);
	if (found < 0)
		bench_die("%s", err.msg);
	if (found) {
		cc_ledger_remove(l, "bench-ctr");
		if (cc_ledger_commit(l, &err) < 0)
			bench_die("%s", err.msg);
	}
	cc_ledger_close(l);
	return bench_now() - t0;
}

/* Put the ledger back as it was before an invocation, without timing a
 * release: the busy ledger's bytes, or no ledger at all. */
static void restore(struct setup *s, enum mode m)
{
	char path[PATH_MAX + 32], tmp[PATH_MAX + 32];
	int fd;

	snprintf(path, sizeof(path), "%s/" CC_LEDGER_FILE, state_of(s, m));
	if (m == EMPTY || !s->ledger_text) {
		if (unlink(path) < 0 && errno != ENOENT)
			bench_die("%s: %s", path, strerror(errno));
		return;
	}
	snprintf(tmp, sizeof(tmp), "%s/bench.tmp", state_of(s, m));
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, s->ledger_text, strlen(s->ledger_text)) != (ssize_t)strlen(s->ledger_text) ||
	    close(fd) < 0 || rename(tmp, path) < 0)
		bench_die("%s: %s", path, strerror(errno));
}

/* Write the cache files, outside what is measured. */
static void prime_cache(struct setup *s)
{
	decide_once(s, WARM, NULL);
	restore(s, WARM);
	decide_once(s, EMPTY, NULL);
	restore(s, EMPTY);
	s->misses = 0;
}

static double ms(double ns)
{
	return ns / 1e6;
}

struct row {
	struct bench_stats st[NMODES], miss, rel;
	double ph[NMODES][NPH];
	int carved[NMODES], n;
};

static void phase_medians(uint64_t *ph, int n, double *out)
{
	_cleanup_free_ uint64_t *col = malloc(sizeof(uint64_t) * (size_t)n);

	if (!col)
		bench_die("out of memory");
	for (int k = 0; k < NPH; k++) {
		for (int i = 0; i < n; i++)
			col[i] = ph[i * NPH + k];
		out[k] = bench_stats(col, n).median;
	}
}

static void measure(struct setup *s, int n, struct row *r)
{
	uint64_t *tot[NMODES], *ph[NMODES];
	_cleanup_free_ uint64_t *rel = calloc((size_t)n, sizeof(uint64_t));
	int nmiss = n < 50 ? n : 50;
	_cleanup_free_ uint64_t *miss = calloc((size_t)nmiss, sizeof(uint64_t));
	char cache[PATH_MAX + 32];

	memset(r, 0, sizeof(*r));
	for (int m = 0; m < NMODES; m++) {
		tot[m] = calloc((size_t)n, sizeof(uint64_t));
		ph[m] = calloc((size_t)n * NPH, sizeof(uint64_t));
		if (!tot[m] || !ph[m])
			bench_die("out of memory");
	}
	if (!rel || !miss)
		bench_die("out of memory");
	r->n = n;
	prime_cache(s);
	for (int i = 0; i < n; i++) {
		/* Rotate the order, so no mode always follows the same one
		 * (page cache, allocator state, the CPU's caches). */
		for (int k = 0; k < NMODES; k++) {
			enum mode m = (enum mode)((i + k) % NMODES);
			uint64_t t0 = bench_now();

			r->carved[m] += measured_decision(s, m, &ph[m][i * NPH]);
			tot[m][i] = bench_now() - t0;
			/* The warm one is released as poststop would (timed);
			 * the others are put back. */
			if (m == WARM)
				rel[i] = release(s, m);
			else
				restore(s, m);
		}
	}
	/* The first hook after a boot or hotplug: discovery and a new cache. */
	snprintf(cache, sizeof(cache), "%s/" CC_TOPO_CACHE_FILE, s->state_dir);
	for (int i = 0; i < nmiss; i++) {
		uint64_t t0;
		int misses = s->misses;

		unlink(cache);
		t0 = bench_now();
		decide_once(s, WARM, NULL);
		miss[i] = bench_now() - t0;
		restore(s, WARM);
		s->misses = misses;
	}
	for (int m = 0; m < NMODES; m++) {
		phase_medians(ph[m], n, r->ph[m]);
		r->st[m] = bench_stats(tot[m], n);
		free(tot[m]);
		free(ph[m]);
	}
	r->rel = bench_stats(rel, n);
	r->miss = bench_stats(miss, nmiss);
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
					execl(bin, "corecarve", "hook", "createRuntime", "--root", s->root->path, "--state",
					      s->state_dir, (char *)NULL);
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
			"       decide --callgrind --only HOST --mode cold|warm|empty [--n N]\n");
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
	printf("%-9s %5s %5s %4s %-30s %5s | %-17s | %-17s | %5s | %-17s | %7s\n", "host", "PUs", "cores", "NUMA",
	       "request (carves in the ledger)", "n", "cold median / p99", "warm median / p99", "c/w",
	       "empty median / p99", "miss");
	for (int i = 0; i < nhosts; i++) {
		const struct setup *s = &setups[i];
		const struct row *r = &rows[i];
		char req[64];

		if (!have[i])
			continue;
		snprintf(req, sizeof(req), "%s (%d)%s", s->request, s->prefilled, r->carved[WARM] ? "" : " refused");
		printf("%-9s %5d %5d %4d %-30s %5d | %7.3f / %7.3f | %7.3f / %7.3f | %4.0fx | %7.3f / %7.3f | %7.3f\n",
		       hosts[i].name, s->npus, s->ncores, s->nnuma, req, r->n, ms(r->st[COLD].median), ms(r->st[COLD].p99),
		       ms(r->st[WARM].median), ms(r->st[WARM].p99), r->st[COLD].median / r->st[WARM].median,
		       ms(r->st[EMPTY].median), ms(r->st[EMPTY].p99), ms(r->miss.median));
	}
	printf("(ms. cold: hwloc discovery, as every hook did before the cache; warm: the cached model; both with the\n"
	       " ledger holding the carves in brackets. empty: cached model, empty ledger. c/w: cold median / warm\n"
	       " median. miss: the first decision after a boot or hotplug (discovery + writing the cache).)\n\n");

	printf("where the time goes, warm (medians, ms); last columns: topology cold, and the empty-ledger lock+commit\n");
	printf("%-9s %5s %6s", "host", "PUs", "carves");
	for (int k = 0; k < NPH; k++)
		printf(" %8s", phase_name[k]);
	printf(" %8s | %9s %9s\n", "release", "topo cold", "ledger(0)");
	for (int i = 0; i < nhosts; i++) {
		const struct row *r = &rows[i];

		if (!have[i])
			continue;
		printf("%-9s %5d %6d", hosts[i].name, setups[i].npus, setups[i].prefilled);
		for (int k = 0; k < NPH; k++)
			printf(" %8.3f", ms(r->ph[WARM][k]));
		printf(" %8.3f | %9.3f %9.3f\n", ms(r->rel.median), ms(r->ph[COLD][PH_TOPO]),
		       ms(r->ph[EMPTY][PH_LOCK] + r->ph[EMPTY][PH_COMMIT]));
	}
	for (int i = 0; i < nhosts; i++) {
		const struct row *r = &rows[i];

		if (!have[i])
			continue;
		printf("BENCH decide host=%s pus=%d cores=%d carves=%d carved_pus=%d n=%d cold_median_ms=%.4f cold_p99_ms=%.4f "
		       "warm_median_ms=%.4f warm_p99_ms=%.4f empty_median_ms=%.4f empty_p99_ms=%.4f miss_median_ms=%.4f "
		       "topo_cold_ms=%.4f topo_warm_ms=%.4f alloc_ms=%.4f ledger_ms=%.4f release_ms=%.4f\n",
		       hosts[i].name, setups[i].npus, setups[i].ncores, setups[i].prefilled, setups[i].taken_pus, r->n,
		       ms(r->st[COLD].median),
		       ms(r->st[COLD].p99), ms(r->st[WARM].median), ms(r->st[WARM].p99), ms(r->st[EMPTY].median),
		       ms(r->st[EMPTY].p99), ms(r->miss.median), ms(r->ph[COLD][PH_TOPO]), ms(r->ph[WARM][PH_TOPO]),
		       ms(r->ph[WARM][PH_ALLOC]), ms(r->ph[WARM][PH_LOCK] + r->ph[WARM][PH_COMMIT]), ms(r->rel.median));
	}
}

int main(int argc, char **argv)
{
	int n = 1000, n_large = 200, nhosts, mode = -1;
	const char *only = NULL, *bin = NULL;
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

			if (strcmp(hosts[i].name, only) || !prepare(&s, &hosts[i]))
				continue;
			prime_cache(&s);
			for (int k = 0; k < n; k++) {
				measured_decision(&s, (enum mode)mode, NULL);
				restore(&s, (enum mode)mode);
			}
			printf("callgrind %s %s n=%d pus=%d carves=%d misses=%d\n", only, mode_name[mode], n, s.npus,
			       s.prefilled, s.misses);
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
		if (!prepare(&setups[i], &hosts[i]))
			continue;
		if (!any)
			printf("state directory on %s; default policy\n\n", bench_fstype(setups[i].dir));
		any = have[i] = true;
		fprintf(stderr, "decide: %s...\n", hosts[i].name);
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
