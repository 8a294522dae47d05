/* placement-bench: what a placement class buys on this machine.
 *
 * The classic SMT placement experiment: run two busy threads pinned to
 *   siblings      two hardware threads of one core (what smt: full gives),
 *   same-socket   two cores of one package (smt: isolate, memory local),
 *   cross-socket  cores of two packages, memory on the first one's node
 *                 (what a carve spanning nodes, or memory: any, risks),
 * and compare each thread's throughput with one thread alone on a core
 * (solo).  Two workloads: a CPU-bound dependency chain (integer multiply,
 * add and xorshift: it shares the core's execution units with a sibling)
 * and a memory stream (a triad over buffers larger than the caches, all
 * first-touched on the anchor CPU's NUMA node, so a thread on another
 * socket reads remote memory).  Each figure is the median of --runs runs.
 *
 * It reads the topology from sysfs and uses only the CPUs this process may
 * run on (sched_getaffinity), so it can itself run under `corecarve exec
 * --carve`.  Placements this machine cannot offer are reported as skipped.
 *
 *   make && ./placement-bench [--runs 5] [--mem-mib 64] [--iters 200000000] [--anchor CPU] */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_CPUS 8192
#define MAX_RUNS 99

struct cpu {
	int package, core; /* physical_package_id, core_id */
	int node;          /* NUMA node, -1 when unknown */
};

static struct cpu cpus[MAX_CPUS];
static cpu_set_t allowed;

static int read_int(const char *fmt, int cpu, int *out)
{
	char path[256];
	FILE *f;
	int r;

	snprintf(path, sizeof(path), fmt, cpu);
	f = fopen(path, "r");
	if (!f)
		return -1;
	r = fscanf(f, "%d", out) == 1 ? 0 : -1;
	fclose(f);
	return r;
}

static int node_of(int cpu)
{
	for (int n = 0; n < 1024; n++) {
		char path[256];

		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/node%d", cpu, n);
		if (access(path, F_OK) == 0)
			return n;
	}
	return -1;
}

static int load_topology(void)
{
	int n = 0;

	if (sched_getaffinity(0, sizeof(allowed), &allowed) < 0) {
		perror("placement-bench: sched_getaffinity");
		return -1;
	}
	for (int c = 0; c < MAX_CPUS; c++) {
		cpus[c].package = cpus[c].core = -1;
		if (!CPU_ISSET(c, &allowed))
			continue;
		if (read_int("/sys/devices/system/cpu/cpu%d/topology/physical_package_id", c, &cpus[c].package) < 0 ||
		    read_int("/sys/devices/system/cpu/cpu%d/topology/core_id", c, &cpus[c].core) < 0) {
			fprintf(stderr, "placement-bench: no topology for CPU %d in sysfs\n", c);
			return -1;
		}
		cpus[c].node = node_of(c);
		n++;
	}
	return n;
}

static bool same_core(int a, int b)
{
	return cpus[a].package == cpus[b].package && cpus[a].core == cpus[b].core;
}

/* A partner of `a` for a placement, or -1. */
static int partner(int a, const char *kind)
{
	for (int b = 0; b < MAX_CPUS; b++) {
		if (b == a || !CPU_ISSET(b, &allowed))
			continue;
		if (!strcmp(kind, "siblings") && same_core(a, b))
			return b;
		if (!strcmp(kind, "same-socket") && cpus[b].package == cpus[a].package && !same_core(a, b))
			return b;
		if (!strcmp(kind, "cross-socket") && cpus[b].package != cpus[a].package)
			return b;
	}
	return -1;
}

/* ---- workloads ------------------------------------------------------------- */

struct job {
	int cpu;
	int workload; /* 0 cpu, 1 memory */
	long long iters;
	double *a, *b, *c;
	size_t n;
	pthread_barrier_t *start;
	double rate; /* result: Mops/s or MB/s */
	int err;
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int pin(int cpu)
{
	cpu_set_t s;

	CPU_ZERO(&s);
	CPU_SET(cpu, &s);
	return sched_setaffinity(0, sizeof(s), &s);
}

static volatile uint64_t sink;

static void *run_job(void *arg)
{
	struct job *j = arg;
	double t0, t;

	if (pin(j->cpu) < 0) {
		j->err = errno;
		pthread_barrier_wait(j->start);
		return NULL;
	}
	pthread_barrier_wait(j->start);
	t0 = now();
	if (j->workload == 0) {
		uint64_t x = 88172645463325252ull + (uint64_t)j->cpu, acc = 0;

		/* A chain of dependent integer ops: no memory traffic, all in
		 * the core's ALUs, which an SMT sibling competes for. */
		for (long long i = 0; i < j->iters; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			acc = acc * 6364136223846793005ull + x;
		}
		sink = acc;
		t = now() - t0;
		j->rate = (double)j->iters / t / 1e6;
	} else {
		/* STREAM's triad, twice over the buffers. */
		for (int pass = 0; pass < 2; pass++)
			for (size_t i = 0; i < j->n; i++)
				j->a[i] = j->b[i] + 3.0 * j->c[i];
		sink = (uint64_t)j->a[j->n / 2];
		t = now() - t0;
		j->rate = 2.0 * 3.0 * (double)(j->n * sizeof(double)) / t / 1e6;
	}
	return NULL;
}

/* Buffers first-touched on `cpu`: the kernel puts their pages on its node. */
static int alloc_on(int cpu, size_t n, double **a, double **b, double **c)
{
	cpu_set_t old;

	sched_getaffinity(0, sizeof(old), &old);
	if (pin(cpu) < 0)
		return -1;
	*a = malloc(n * sizeof(double));
	*b = malloc(n * sizeof(double));
	*c = malloc(n * sizeof(double));
	if (!*a || !*b || !*c)
		return -1;
	for (size_t i = 0; i < n; i++) {
		(*a)[i] = 0;
		(*b)[i] = (double)i;
		(*c)[i] = 1.0;
	}
	return sched_setaffinity(0, sizeof(old), &old);
}

static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return (a > b) - (a < b);
}

struct opts {
	int runs, anchor;
	long long iters;
	size_t n; /* doubles per buffer */
};

/* Median over runs of each thread's rate; *r0 for the anchor's thread, *r1
 * for the partner's (when partner >= 0). */
static int measure(const struct opts *o, int workload, int anchor, int other, double *bufs[2][3], double *r0,
		   double *r1)
{
	double v0[MAX_RUNS], v1[MAX_RUNS];
	int nthreads = other >= 0 ? 2 : 1;

	for (int r = 0; r < o->runs; r++) {
		pthread_barrier_t start;
		pthread_t th[2];
		struct job jobs[2];

		pthread_barrier_init(&start, NULL, (unsigned)nthreads);
		for (int k = 0; k < nthreads; k++) {
			jobs[k] = (struct job){ .cpu = k ? other : anchor, .workload = workload, .iters = o->iters,
						.a = bufs[k][0], .b = bufs[k][1], .c = bufs[k][2], .n = o->n,
						.start = &start };
			if (pthread_create(&th[k], NULL, run_job, &jobs[k]) != 0) {
				fprintf(stderr, "placement-bench: pthread_create failed\n");
				return -1;
			}
		}
		for (int k = 0; k < nthreads; k++)
			pthread_join(th[k], NULL);
		pthread_barrier_destroy(&start);
		for (int k = 0; k < nthreads; k++) {
			if (jobs[k].err) {
				fprintf(stderr, "placement-bench: pinning to CPU %d: %s\n", jobs[k].cpu, strerror(jobs[k].err));
				return -1;
			}
		}
		v0[r] = jobs[0].rate;
		v1[r] = nthreads > 1 ? jobs[1].rate : 0;
	}
	qsort(v0, (size_t)o->runs, sizeof(double), cmp_double);
	qsort(v1, (size_t)o->runs, sizeof(double), cmp_double);
	*r0 = v0[o->runs / 2];
	*r1 = v1[o->runs / 2];
	return 0;
}

static void usage(FILE *out)
{
	fprintf(out, "usage: placement-bench [--runs N] [--mem-mib M] [--iters N] [--anchor CPU]\n\n"
		     "Two busy threads on SMT siblings, on two cores of one socket, and on two sockets,\n"
		     "against one thread alone: a CPU-bound loop (Mops/s) and a memory triad (MB/s, memory\n"
		     "on the anchor CPU's node).  Medians of --runs (default 5) runs.  Only the CPUs this\n"
		     "process may use count; placements they cannot offer are skipped.\n");
}

static int parse_opt(int argc, char **argv, int *i, const char *name, long long min, long long max, long long *out)
{
	char *end;

	if (strcmp(argv[*i], name))
		return 0;
	if (*i + 1 >= argc) {
		fprintf(stderr, "placement-bench: %s: missing value\n", name);
		return -1;
	}
	errno = 0;
	*out = strtoll(argv[++*i], &end, 10);
	if (errno || *end || *out < min || *out > max) {
		fprintf(stderr, "placement-bench: %s: expected %lld to %lld, got \"%s\"\n", name, min, max, argv[*i]);
		return -1;
	}
	return 1;
}

int main(int argc, char **argv)
{
	static const char *const kinds[] = { "siblings", "same-socket", "cross-socket" };
	struct opts o = { .runs = 5, .anchor = -1, .iters = 200000000, .n = (64u << 20) / 3 / sizeof(double) };
	double *bufs[2][3] = { { 0 } };
	double solo[2], r1;
	int ncpus;

	for (int i = 1; i < argc; i++) {
		long long v;
		int r;

		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			usage(stdout);
			return 0;
		}
		if ((r = parse_opt(argc, argv, &i, "--runs", 1, MAX_RUNS, &v)) != 0) {
			if (r < 0)
				return 2;
			o.runs = (int)v;
		} else if ((r = parse_opt(argc, argv, &i, "--mem-mib", 1, 1 << 20, &v)) != 0) {
			if (r < 0)
				return 2;
			o.n = (size_t)v * (1u << 20) / 3 / sizeof(double);
		} else if ((r = parse_opt(argc, argv, &i, "--iters", 1000, 1ll << 40, &v)) != 0) {
			if (r < 0)
				return 2;
			o.iters = v;
		} else if ((r = parse_opt(argc, argv, &i, "--anchor", 0, MAX_CPUS - 1, &v)) != 0) {
			if (r < 0)
				return 2;
			o.anchor = (int)v;
		} else {
			fprintf(stderr, "placement-bench: unknown argument \"%s\" (see --help)\n", argv[i]);
			return 2;
		}
	}
	ncpus = load_topology();
	if (ncpus < 0)
		return 2;
	if (o.anchor >= 0 && !CPU_ISSET(o.anchor, &allowed)) {
		fprintf(stderr, "placement-bench: --anchor: CPU %d is not one this process may use\n", o.anchor);
		return 2;
	}
	/* The anchor: the given CPU, else the first that offers the most
	 * placements. */
	if (o.anchor < 0) {
		int best = -1;

		for (int c = 0; c < MAX_CPUS; c++) {
			int score = 0;

			if (!CPU_ISSET(c, &allowed))
				continue;
			for (int k = 0; k < 3; k++)
				score += partner(c, kinds[k]) >= 0;
			if (score > best) {
				best = score;
				o.anchor = c;
			}
		}
	}
	printf("placement-bench: %d usable CPUs, anchor CPU %d (package %d, core %d, node %d); "
	       "median of %d runs; memory %zu MiB per thread on node %d\n",
	       ncpus, o.anchor, cpus[o.anchor].package, cpus[o.anchor].core, cpus[o.anchor].node, o.runs,
	       (o.n * 3 * sizeof(double) + (1u << 19)) >> 20, cpus[o.anchor].node);
	for (int k = 0; k < 2; k++)
		if (alloc_on(o.anchor, o.n, &bufs[k][0], &bufs[k][1], &bufs[k][2]) < 0) {
			perror("placement-bench: buffers");
			return 2;
		}
	printf("%-13s %-7s %14s %14s %14s %14s\n", "placement", "cpus", "cpu Mops/s", "vs solo", "mem MB/s", "vs solo");
	for (int w = 0; w < 2; w++)
		if (measure(&o, w, o.anchor, -1, bufs, &solo[w], &r1) < 0)
			return 2;
	printf("%-13s %-7d %14.1f %13s %14.1f %13s\n", "solo", o.anchor, solo[0], "1.00", solo[1], "1.00");
	for (int k = 0; k < 3; k++) {
		int b = partner(o.anchor, kinds[k]);
		double cpu0, cpu1, mem0, mem1;
		char pair[32];

		if (b < 0) {
			printf("%-13s skipped: %s\n", kinds[k],
			       k == 0   ? "no SMT sibling of the anchor among the usable CPUs"
			       : k == 1 ? "no other core of the anchor's package among the usable CPUs"
					: "no usable CPU on another package");
			continue;
		}
		if (measure(&o, 0, o.anchor, b, bufs, &cpu0, &cpu1) < 0 || measure(&o, 1, o.anchor, b, bufs, &mem0, &mem1) < 0)
			return 2;
		snprintf(pair, sizeof(pair), "%d+%d", o.anchor, b);
		/* The partner's thread: the one that moved. */
		printf("%-13s %-7s %14.1f %14.2f %14.1f %14.2f\n", kinds[k], pair, cpu1, cpu1 / solo[0], mem1,
		       mem1 / solo[1]);
	}
	printf("(each row: the partner CPU's thread while both run; the anchor's own figures are alike)\n");
	return 0;
}
