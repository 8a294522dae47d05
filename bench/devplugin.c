/* The device plugin's costs (docs/performance.md, "The device plugin"):
 *
 *   allocate  one Allocate of a free core, as the kubelet asks it: every
 *             ID checked against the resource's devices, the hooks' lock
 *             taken, the ledger (its index) read, the grant recorded and
 *             committed (cc_dp_allocate); the grant is taken out again
 *             between rounds, untimed;
 *   refresh   what every ListAndWatch stream does at each of its ticks:
 *             the ledger read whole, every device and its health
 *             (minShared included), the answer packed (cc_dp_list).  A
 *             ledger change reaches the kubelet within one tick
 *             (DP_TICK_MS, 200 ms) and one refresh: the figure printed as
 *             "change seen within".
 *   gc        the grant gc's round (cc_dp_release_unused) as PodResources
 *             answers it: with nothing to free it reads the ledger as a
 *             reader (no exclusive lock: a hook never waits on it); with
 *             the probe's grant to free it takes the hooks' lock, finds
 *             it again and removes it.
 *   lock      the longest the plugin holds the hooks' lock, bounded from
 *             above by the slowest whole Allocate and gc round that take
 *             it (each includes its checks before the lock).
 *
 * On a busy node: half of the first resource's cores granted already
 * (the ledger a node full of granted pods has), the default policy, the
 * state directory on tmpfs as /run/corecarve is.  Medians of N rounds;
 * nothing is asserted.
 *
 *   devplugin [--n N] [--only HOST]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"
#include "cleanup.h"
#include "devplugin.h"
#include "ledger.h"

#define TICK_MS 200

static const char *const hosts_default[] = { "F03", "syn-224", "syn-4096", NULL };

struct node {
	struct cc_topo *t;
	struct cc_policy *p;
	struct cc_dp_resource *res;
	int nres;
	char *dir;
	struct cc_devplugin dp;
	struct cc_dp_device *dev;
	int ndev;
};

static void grant(struct node *n, const struct cc_dp_resource *r, int cpu, char *id)
{
	struct cc_err err = CC_ERR_INIT;
	char name[32], grants[1][CC_DP_ID_MAX];
	char *ids[] = { name };
	char *const *req[] = { ids };
	int nids[] = { 1 };

	snprintf(name, sizeof(name), "cpu%d", cpu);
	if (cc_dp_allocate(&n->dp, r, req, nids, 1, grants, &err) < 0)
		bench_die("allocate %s: %s", name, err.msg);
	if (id)
		snprintf(id, CC_GRANT_ID_MAX, "%.*s", (int)(strrchr(grants[0], ':') - grants[0]), grants[0]);
}

static bool node_open(const struct bench_host *h, struct node *n)
{
	struct cc_err err = CC_ERR_INIT;
	struct cc_topo_source src;
	_cleanup_root_ struct cc_root *root = NULL;

	memset(n, 0, sizeof(*n));
	if (!bench_source(h, &src, &root))
		return false;
	n->t = cc_topo_load(&src, &err);
	n->p = cc_policy_parse(cc_policy_default_yaml, strlen(cc_policy_default_yaml), "default", &err);
	if (!n->t || !n->p)
		bench_die("%s: %s", h->name, err.msg);
	if (cc_dp_resources(n->t, n->p, &n->res, &n->nres, &err) < 0 || n->nres == 0)
		bench_die("%s: no resource: %s", h->name, err.msg);
	n->dir = bench_tmpdir("devplugin");
	n->dp = (struct cc_devplugin){ .t = n->t, .p = n->p, .state = n->dir, .res = n->res, .nres = n->nres };
	if (cc_dp_devices(n->t, n->p, &n->res[0], NULL, &n->dev, &n->ndev, &err) < 0)
		bench_die("%s: %s", h->name, err.msg);
	return true;
}

static void node_close(struct node *n)
{
	bench_rmdir(n->dir);
	free(n->dir);
	free(n->dev);
	free(n->res);
	cc_policy_free(n->p);
	cc_topo_free(n->t);
}

static void run(const struct bench_host *h, int rounds)
{
	struct node n;
	_cleanup_free_ uint64_t *alloc_ns = calloc((size_t)rounds, sizeof(uint64_t));
	_cleanup_free_ uint64_t *list_ns = calloc((size_t)rounds, sizeof(uint64_t));
	_cleanup_free_ uint64_t *look_ns = calloc((size_t)rounds, sizeof(uint64_t));
	_cleanup_free_ uint64_t *free_ns = calloc((size_t)rounds, sizeof(uint64_t));
	_cleanup_free_ struct cc_dp_inuse *inuse = NULL;
	_cleanup_free_ char (*names)[16] = NULL;
	struct bench_stats a, l, g0, g1;
	uint64_t lock_max = 0;
	int ninuse = 0;
	char id[CC_GRANT_ID_MAX];
	size_t bytes = 0;
	int held = 0, probe;

	if (!alloc_ns || !list_ns || !look_ns || !free_ns)
		bench_die("out of memory");
	if (!node_open(h, &n)) {
		printf("%-9s  (not available here)\n", h->name);
		return;
	}
	/* Half of the resource's cores granted: every other device, each
	 * held by a pod as PodResources lists it (and the probe's, for the
	 * round with nothing to free, last). */
	inuse = calloc((size_t)n.ndev + 2, sizeof(*inuse));
	names = calloc((size_t)n.ndev + 2, sizeof(*names));
	if (!inuse || !names)
		bench_die("out of memory");
	for (int i = 0; i < n.ndev; i += 2, held++) {
		grant(&n, &n.res[0], n.dev[i].cpu, NULL);
		snprintf(names[ninuse], sizeof(names[0]), "cpu%d", n.dev[i].cpu);
		inuse[ninuse] = (struct cc_dp_inuse){ n.res[0].name, names[ninuse] };
		ninuse++;
	}
	probe = n.ndev > 1 ? n.dev[1].cpu : n.dev[0].cpu;
	snprintf(names[ninuse], sizeof(names[0]), "cpu%d", probe);
	inuse[ninuse] = (struct cc_dp_inuse){ n.res[0].name, names[ninuse] };
	for (int i = 0; i < rounds; i++) {
		struct cc_err err = CC_ERR_INIT;
		uint8_t *out = NULL;
		uint64_t t0 = bench_now();

		grant(&n, &n.res[0], probe, id);
		alloc_ns[i] = bench_now() - t0;
		t0 = bench_now();
		if (cc_dp_list(&n.dp, &n.res[0], &out, &bytes, &err) < 0)
			bench_die("%s: list: %s", h->name, err.msg);
		list_ns[i] = bench_now() - t0;
		free(out);
		{
			int freed = -1;
			long long later = (long long)time(NULL) + 3600;

			/* Every grant held by a pod: a look, nothing freed. */
			t0 = bench_now();
			if (cc_dp_release_unused(&n.dp, inuse, ninuse + 1, later, 0, &freed, &err) < 0 || freed)
				bench_die("%s: gc look: %s (freed %d)", h->name, err.msg, freed);
			look_ns[i] = bench_now() - t0;
			/* The probe's pod gone: its grant freed under the lock. */
			t0 = bench_now();
			if (cc_dp_release_unused(&n.dp, inuse, ninuse, later, 0, &freed, &err) < 0 || freed != 1)
				bench_die("%s: gc free: %s (freed %d)", h->name, err.msg, freed);
			free_ns[i] = bench_now() - t0;
		}
		if (alloc_ns[i] > lock_max)
			lock_max = alloc_ns[i];
		if (free_ns[i] > lock_max)
			lock_max = free_ns[i];
	}
	a = bench_stats(alloc_ns, rounds);
	l = bench_stats(list_ns, rounds);
	g0 = bench_stats(look_ns, rounds);
	g1 = bench_stats(free_ns, rounds);
	printf("%-9s %5d PUs %5d devices %5d granted   allocate %8.1f us (p99 %8.1f)   refresh %8.1f us (p99 %8.1f, "
	       "%zu bytes)   change seen within %.1f ms\n",
	       h->name, n.t->npus, n.ndev, held, a.median / 1e3, a.p99 / 1e3, l.median / 1e3, l.p99 / 1e3, bytes,
	       TICK_MS + l.p99 / 1e6);
	printf("%-9s gc: a look (nothing to free, no exclusive lock) %8.1f us (p99 %8.1f)   freeing one grant %8.1f us "
	       "(p99 %8.1f)   the hooks' lock held at most %.1f us\n",
	       "", g0.median / 1e3, g0.p99 / 1e3, g1.median / 1e3, g1.p99 / 1e3, lock_max / 1e3);
	node_close(&n);
}

int main(int argc, char **argv)
{
	const char *only = NULL;
	int rounds = 200, nh;
	struct bench_host *hosts = bench_hosts(&nh);

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--n") && i + 1 < argc)
			rounds = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--only") && i + 1 < argc)
			only = argv[++i];
		else
			bench_die("usage: devplugin [--n N] [--only HOST]");
	}
	if (rounds < 1)
		bench_die("--n: expected at least 1");
	bench_print_machine();
	printf("default policy, the first resource (%s); medians of %d rounds; ListAndWatch ticks every %d ms\n\n",
	       "corecarve.io/latency-cores", rounds, TICK_MS);
	for (int i = 0; i < nh; i++) {
		bool want = false;

		for (int k = 0; hosts_default[k]; k++)
			want |= !strcmp(hosts[i].name, hosts_default[k]);
		if (only ? !strcmp(hosts[i].name, only) : want)
			run(&hosts[i], rounds);
	}
	return 0;
}
