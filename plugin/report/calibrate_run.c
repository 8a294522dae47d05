/* corecarve calibrate: the measurement.  Two workloads, each run alone on
 * CPU a, alone on CPU b, then on both at once; ratio = pair throughput /
 * solo throughput, per side, medians over rounds.  Solo and pair runs are
 * interleaved within a round so a frequency drift touches both alike.
 *
 * Threads are pinned with sched_setaffinity (pthread_setaffinity_np),
 * which no root prefix can redirect: only on the real host. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "calibrate.h"
#include "cleanup.h"

#define ROUNDS_MAX 101
/* Tries of one round whose ratios no placement gives (measure_pair). */
#define ROUND_TRIES 5

enum gate { GATE_WAIT, GATE_GO, GATE_ABORT };

struct run {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	enum gate gate;
	pthread_barrier_t bar;
	atomic_int stop;
	enum cc_work work;
};

struct worker {
	struct run *run;
	pthread_t th;
	int cpu;
	uint64_t *buf; /* the memory stream's buffer, first touched on `cpu` */
	size_t words;
	int err;       /* errno of a failed pin */
	double units, secs;
	uint64_t sink; /* keeps the loops' results alive */
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Dependent chains: each step waits for the one before, so the loop
 * measures the core's latency-bound pipeline, which an SMT sibling shares. */
static void cpu_loop(struct worker *w)
{
	uint64_t x = 0x9e3779b97f4a7c15ull + (uint64_t)w->cpu, n = 0;
	double f = 1.0;

	while (!atomic_load_explicit(&w->run->stop, memory_order_relaxed)) {
		for (int i = 0; i < 4096; i++) {
			x = x * 6364136223846793005ull + 1442695040888963407ull;
			x ^= x >> 29;
			f = f * 0.9999999 + 1e-7;
		}
		n += 4096;
	}
	w->sink = x + (uint64_t)f;
	w->units = (double)n * 1e-6; /* Mops */
}

/* A read stream with four accumulators, so it is bound by bandwidth, not
 * by the add chain. */
static void mem_loop(struct worker *w)
{
	const size_t chunk = 8192; /* 64 KiB between looks at the flag */
	uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0, bytes = 0;
	size_t pos = 0;

	while (!atomic_load_explicit(&w->run->stop, memory_order_relaxed)) {
		const uint64_t *p = w->buf + pos;

		for (size_t i = 0; i < chunk; i += 4) {
			s0 += p[i];
			s1 += p[i + 1];
			s2 += p[i + 2];
			s3 += p[i + 3];
		}
		bytes += chunk * sizeof(uint64_t);
		pos += chunk;
		if (pos + chunk > w->words)
			pos = 0;
	}
	w->sink = s0 + s1 + s2 + s3;
	w->units = (double)bytes * 1e-6; /* MB */
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct run *r = w->run;
	cpu_set_t set;
	double t0;
	int rc;

	CPU_ZERO(&set);
	CPU_SET((size_t)w->cpu, &set);
	/* Returns the error number; errno is not set. */
	if ((rc = pthread_setaffinity_np(pthread_self(), sizeof(set), &set)) != 0)
		w->err = rc;
	/* Warm: the pages are faulted in, on this CPU's node, before the clock. */
	if (r->work == CC_WORK_MEM)
		for (size_t i = 0; i < w->words; i += 512)
			w->buf[i] = i;
	pthread_mutex_lock(&r->mu);
	while (r->gate == GATE_WAIT)
		pthread_cond_wait(&r->cv, &r->mu);
	pthread_mutex_unlock(&r->mu);
	if (r->gate == GATE_ABORT)
		return NULL;
	pthread_barrier_wait(&r->bar);
	t0 = now_s();
	if (!w->err) {
		if (r->work == CC_WORK_CPU)
			cpu_loop(w);
		else
			mem_loop(w);
	}
	w->secs = now_s() - t0;
	return NULL;
}

static void open_gate(struct run *r, enum gate g)
{
	pthread_mutex_lock(&r->mu);
	r->gate = g;
	pthread_cond_broadcast(&r->cv);
	pthread_mutex_unlock(&r->mu);
}

/* One interval: the workers `w[0..n)` together, `ms` long.  Fills their
 * throughput (units per second) in w[i].units. */
static int interval(struct worker *w, int n, enum cc_work work, int ms, struct cc_err *err)
{
	struct run r = { .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER, .work = work };
	struct timespec d = { .tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L };
	int created = 0, rc;

	if ((rc = pthread_barrier_init(&r.bar, NULL, (unsigned)n + 1)) != 0)
		return cc_err_sys(err, rc, "calibrate: barrier");
	for (; created < n; created++) {
		w[created].run = &r;
		w[created].err = 0;
		if ((rc = pthread_create(&w[created].th, NULL, worker_main, &w[created])) != 0)
			break;
	}
	/* The barrier is entered only once every thread exists, so a failed
	 * create leaves no thread waiting on it. */
	open_gate(&r, created == n ? GATE_GO : GATE_ABORT);
	if (created == n) {
		pthread_barrier_wait(&r.bar);
		while (clock_nanosleep(CLOCK_MONOTONIC, 0, &d, &d) == EINTR)
			;
		atomic_store(&r.stop, 1);
	}
	for (int i = 0; i < created; i++)
		pthread_join(w[i].th, NULL);
	pthread_barrier_destroy(&r.bar);
	if (created < n)
		return cc_err_sys(err, rc, "calibrate: thread");
	for (int i = 0; i < n; i++) {
		if (w[i].err)
			return cc_err_sys(err, w[i].err,
					  "calibrate: cannot pin a thread to CPU %d (is it outside this process's cpuset?)",
					  w[i].cpu);
		w[i].units = w[i].secs > 0 ? w[i].units / w[i].secs : 0;
	}
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void unmap(uint64_t **p, size_t bytes)
{
	if (*p)
		munmap(*p, bytes);
	*p = NULL;
}

static int measure_pair(const struct cc_calib_pair *p, unsigned long long mem_bytes, const struct cc_calib_opts *o,
			struct cc_calib_entry *e, struct cc_err *err)
{
	size_t bytes = (size_t)mem_bytes;
	uint64_t *ba = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t *bb = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int rc = 0;

	if (ba == MAP_FAILED)
		ba = NULL;
	if (bb == MAP_FAILED)
		bb = NULL;
	if (!ba || !bb) {
		unmap(&ba, bytes);
		unmap(&bb, bytes);
		return cc_err_sys(err, ENOMEM, "calibrate: two %llu-byte stream buffers", mem_bytes);
	}
	memset(e, 0, sizeof(*e));
	e->pair = *p;
	for (int wk = 0; wk < CC_WORK_N && rc == 0; wk++) {
		double sa[ROUNDS_MAX], sb[ROUNDS_MAX], ra[ROUNDS_MAX], rb[ROUNDS_MAX], rr[ROUNDS_MAX];
		struct cc_calib_result *res = &e->res[wk];

		for (int k = 0; k < o->rounds && rc == 0; k++) {
			int tries = 0;

			/* A side that ran more than CC_CALIB_RATIO_MAX times
			 * faster paired than alone was descheduled while it was
			 * measured alone (another task on its CPU): the round
			 * says nothing about the placement, so it is measured
			 * again, and a busy host gets an error rather than a
			 * baseline its own reader refuses. */
			do {
				struct worker w[2] = { { .cpu = p->a, .buf = ba, .words = bytes / 8 },
						       { .cpu = p->b, .buf = bb, .words = bytes / 8 } };

				if ((rc = interval(&w[0], 1, (enum cc_work)wk, o->ms, err)) < 0)
					break;
				sa[k] = w[0].units;
				if ((rc = interval(&w[1], 1, (enum cc_work)wk, o->ms, err)) < 0)
					break;
				sb[k] = w[1].units;
				if ((rc = interval(w, 2, (enum cc_work)wk, o->ms, err)) < 0)
					break;
				ra[k] = sa[k] > 0 ? w[0].units / sa[k] : 0;
				rb[k] = sb[k] > 0 ? w[1].units / sb[k] : 0;
				rr[k] = (ra[k] + rb[k]) / 2;
			} while ((ra[k] > CC_CALIB_RATIO_MAX || rb[k] > CC_CALIB_RATIO_MAX) && ++tries < ROUND_TRIES);
			if (rc == 0 && (ra[k] > CC_CALIB_RATIO_MAX || rb[k] > CC_CALIB_RATIO_MAX))
				rc = cc_err_set(err, EAGAIN,
						"calibrate: %s: a side ran %.1fx faster paired than alone in %d tries "
						"(more than %.0fx: something else ran on CPU %d or %d while it was "
						"measured alone); calibrate a quiet node, or with a longer --ms",
						cc_work_name((enum cc_work)wk), ra[k] > rb[k] ? ra[k] : rb[k], ROUND_TRIES,
						CC_CALIB_RATIO_MAX, p->a, p->b);
		}
		if (rc < 0)
			break;
		res->solo_a = median(sa, o->rounds);
		res->solo_b = median(sb, o->rounds);
		res->ratio_a = median(ra, o->rounds);
		res->ratio_b = median(rb, o->rounds);
		res->ratio = median(rr, o->rounds);
	}
	unmap(&ba, bytes);
	unmap(&bb, bytes);
	return rc;
}

int cc_calib_measure(const struct cc_root *root, const struct cc_calib_plan *p, const struct cc_calib_opts *o,
		     FILE *progress, struct cc_baseline *b, struct cc_err *err)
{
	if (!root->is_host)
		return cc_err_set(err, EINVAL,
				  "calibrate: measuring needs the real host (--root %s is a captured tree: use --dry-run "
				  "there)",
				  root->path);
	if (o->rounds < 1 || o->rounds > ROUNDS_MAX)
		return cc_err_set(err, EINVAL, "--rounds: expected 1 to %d, got %d", ROUNDS_MAX, o->rounds);
	if (o->ms < 1 || o->ms > 10000)
		return cc_err_set(err, EINVAL, "--ms: expected 1 to 10000, got %d", o->ms);
	b->rounds = o->rounds;
	b->ms = o->ms;
	b->mem_bytes = p->mem_bytes;
	b->n = b->nskipped = 0;
	for (int r = 0; r < CC_REL_N; r++) {
		const struct cc_calib_pair *pr = &p->pairs[r];
		struct cc_calib_entry *e = &b->entries[b->n];

		if (!pr->present) {
			b->skipped[b->nskipped++] = *pr;
			continue;
		}
		if (measure_pair(pr, p->mem_bytes, o, e, err) < 0)
			return cc_err_prefix(err, "%s pair (CPUs %d, %d)", cc_rel_name(pr->rel), pr->a, pr->b);
		b->n++;
		if (progress) {
			fprintf(progress, "calibrate: %-7s %s: cpu %.2fx, mem %.2fx\n", cc_rel_name(pr->rel), pr->what,
				e->res[CC_WORK_CPU].ratio, e->res[CC_WORK_MEM].ratio);
			fflush(progress);
		}
	}
	return 0;
}

/* ---- facts -------------------------------------------------------------- */

static void read_into(const struct cc_root *root, const char *path, char *dst, size_t n)
{
	struct cc_err err = CC_ERR_INIT;
	_cleanup_free_ char *s = cc_root_read(root, path, 0, &err);

	snprintf(dst, n, "%s", s ? s : "");
}

/* The value of the first "key : value" line of /proc/cpuinfo. */
static void cpuinfo_field(const char *text, const char *key, char *dst, size_t n)
{
	size_t klen = strlen(key);

	dst[0] = '\0';
	for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		const char *colon;

		if (strncmp(l, key, klen) || (l[klen] != ' ' && l[klen] != '\t' && l[klen] != ':'))
			continue;
		colon = strchr(l, ':');
		if (!colon)
			return;
		colon++;
		while (*colon == ' ' || *colon == '\t')
			colon++;
		snprintf(dst, n, "%.*s", (int)strcspn(colon, "\n"), colon);
		return;
	}
}

void cc_calib_facts_read(const struct cc_root *root, int cpu, struct cc_calib_facts *f)
{
	struct cc_err err = CC_ERR_INIT;
	_cleanup_free_ char *info = cc_root_read(root, "/proc/cpuinfo", 8u << 20, &err);
	char rel[128], ver[128], path[128];
	unsigned v = hwloc_get_api_version();

	memset(f, 0, sizeof(*f));
	read_into(root, "/proc/sys/kernel/osrelease", rel, sizeof(rel));
	read_into(root, "/proc/sys/kernel/version", ver, sizeof(ver));
	snprintf(f->kernel, sizeof(f->kernel), "%s%s%s", rel, *rel && *ver ? " " : "", ver);
	if (info) {
		cpuinfo_field(info, "microcode", f->microcode, sizeof(f->microcode));
		cpuinfo_field(info, "model name", f->model, sizeof(f->model));
	}
	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/cpufreq/scaling_governor", cpu);
	read_into(root, path, f->governor, sizeof(f->governor));
	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/cpufreq/cpuinfo_max_freq", cpu);
	read_into(root, path, f->max_khz, sizeof(f->max_khz));
	read_into(root, "/sys/devices/system/cpu/smt/active", f->smt, sizeof(f->smt));
	read_into(root, "/sys/devices/system/cpu/online", f->online, sizeof(f->online));
	snprintf(f->hwloc, sizeof(f->hwloc), "%u.%u.%u", v >> 16, (v >> 8) & 0xff, v & 0xff);
}
