/* effect-probe: the workload of `make bench-effect` (bench/effect.sh,
 * tests/e2e/scenarios/96-effect.sh), statically linked so it runs in the
 * busybox container rootfs of the e2e guest and of the native run alike.
 *
 *   effect-probe probe [--wakeups N] [--interval-us U] [--cpu-ms M]
 *                      [--stream-ms M] [--buf-mb B]
 *       1. wakeup latency, the cyclictest method: clock_nanosleep() to
 *          absolute deadlines U apart (TIMER_ABSTIME, CLOCK_MONOTONIC), N
 *          times; latency = when it woke minus the deadline.  SCHED_OTHER:
 *          a container gets no real-time priority (no CAP_SYS_NICE, and
 *          cgroup v2's cpu controller takes no RT tasks without
 *          RT_GROUP_SCHED), and a latency service runs as that.
 *       2. CPU loop throughput for M ms: a dependent integer recurrence
 *          (no memory traffic), millions of iterations per second.
 *       3. memory stream for M ms: read-modify-write of a B MiB buffer
 *          (larger than L2, and than the L3 of the guest's CPU model),
 *          MB/s moved (read plus write).
 *       Prints one line:
 *       PROBE wakeups=N p50_us= p99_us= p999_us= max_us= cpu_mips= stream_mbs= cpus=
 *   effect-probe hog                 spin forever (a CPU-hog neighbour)
 *   effect-probe stream [--buf-mb B] stream over B MiB forever (a memory
 *                                    neighbour)
 *
 *   --wait-file PATH (any mode): poll every 20 ms until PATH exists, then
 *       start: the bench starts its containers with the node idle (a crun
 *       start among 18 busy vCPUs under TCG takes minutes) and lets them
 *       go together.
 *
 * The phases run one after the other in one thread, so each measures the
 * probe's CPU alone and not the probe's own other phase. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* The value at quantile q of sorted v (nearest rank). */
static uint64_t quantile(const uint64_t *v, size_t n, double q)
{
	size_t k = (size_t)(q * (double)n + 0.999999);
	if (k < 1)
		k = 1;
	if (k > n)
		k = n;
	return v[k - 1];
}

static void ts_add_ns(struct timespec *ts, uint64_t ns)
{
	uint64_t t = (uint64_t)ts->tv_nsec + ns;
	ts->tv_sec += (time_t)(t / 1000000000u);
	ts->tv_nsec = (long)(t % 1000000000u);
}

/* A volatile sink keeps the loops from being optimised away. */
static volatile uint64_t sink;

static double cpu_loop(unsigned ms)
{
	uint64_t x = 88172645463325252u, iters = 0;
	uint64_t end = now_ns() + (uint64_t)ms * 1000000u, t0 = now_ns(), t;
	do {
		for (int i = 0; i < 100000; i++) {
			/* xorshift: each step depends on the last */
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
		}
		iters += 100000;
	} while ((t = now_ns()) < end);
	sink = x;
	return (double)iters / ((double)(t - t0) / 1e3); /* per microsecond = millions/s */
}

/* Stream over buf until end_ns (0: forever); returns MB/s. */
static double stream(uint64_t *buf, size_t words, uint64_t end_ns)
{
	uint64_t bytes = 0, t0 = now_ns(), t;
	do {
		for (size_t i = 0; i < words; i += 8) /* one 64-byte line a step */
			buf[i] += i;
		bytes += 2 * words * sizeof(*buf); /* read and write of every line */
		t = now_ns();
	} while (!end_ns || t < end_ns);
	return (double)bytes / ((double)(t - t0) / 1e3); /* bytes per us = MB/s */
}

static uint64_t *alloc_buf(unsigned mb, size_t *words)
{
	*words = (size_t)mb * 1024 * 1024 / sizeof(uint64_t);
	uint64_t *b = malloc(*words * sizeof(uint64_t));
	if (!b) {
		fprintf(stderr, "effect-probe: cannot allocate --buf-mb %u MiB: lower --buf-mb\n", mb);
		exit(1);
	}
	memset(b, 1, *words * sizeof(uint64_t)); /* fault every page in before timing */
	return b;
}

static void cpus_allowed(char *out, size_t len)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[4096];
	snprintf(out, len, "?");
	if (!f)
		return;
	while (fgets(line, sizeof line, f))
		if (!strncmp(line, "Cpus_allowed_list:", 18)) {
			char *p = line + 18;
			p += strspn(p, " \t");
			p[strcspn(p, "\n")] = 0;
			snprintf(out, len, "%s", p);
		}
	fclose(f);
}

static unsigned arg_uint(int argc, char **argv, int *i, const char *name)
{
	if (*i + 1 >= argc) {
		fprintf(stderr, "effect-probe: %s needs a number\n", name);
		exit(2);
	}
	char *end;
	errno = 0;
	unsigned long v = strtoul(argv[++*i], &end, 10);
	if (errno || *end || v == 0 || v > 100000000ul) {
		fprintf(stderr, "effect-probe: %s '%s' is not a positive integer: give e.g. %s 1000\n",
			name, argv[*i], name);
		exit(2);
	}
	return (unsigned)v;
}

int main(int argc, char **argv)
{
	unsigned wakeups = 2000, interval_us = 1000, cpu_ms = 1000, stream_ms = 1000, buf_mb = 32;
	const char *wait_file = NULL;
	if (argc < 2) {
		fprintf(stderr, "usage: effect-probe probe|hog|stream [options] (see bench/effect-probe.c)\n");
		return 2;
	}
	for (int i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--wakeups"))
			wakeups = arg_uint(argc, argv, &i, "--wakeups");
		else if (!strcmp(argv[i], "--interval-us"))
			interval_us = arg_uint(argc, argv, &i, "--interval-us");
		else if (!strcmp(argv[i], "--cpu-ms"))
			cpu_ms = arg_uint(argc, argv, &i, "--cpu-ms");
		else if (!strcmp(argv[i], "--stream-ms"))
			stream_ms = arg_uint(argc, argv, &i, "--stream-ms");
		else if (!strcmp(argv[i], "--wait-file") && i + 1 < argc)
			wait_file = argv[++i];
		else if (!strcmp(argv[i], "--buf-mb"))
			buf_mb = arg_uint(argc, argv, &i, "--buf-mb");
		else {
			fprintf(stderr, "effect-probe: unknown option '%s': see bench/effect-probe.c\n", argv[i]);
			return 2;
		}
	}
	if (wait_file) {
		struct stat st;
		struct timespec poll = {0, 20 * 1000 * 1000};
		/* Says it is in place (the bench reads the carve then). */
		printf("WAITING for %s\n", wait_file);
		fflush(stdout);
		while (stat(wait_file, &st))
			nanosleep(&poll, NULL);
	}
	if (!strcmp(argv[1], "hog")) {
		uint64_t x = 1;
		for (;;) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			sink = x;
		}
	}
	size_t words;
	if (!strcmp(argv[1], "stream")) {
		uint64_t *b = alloc_buf(buf_mb, &words);
		stream(b, words, 0);
		return 0;
	}
	if (strcmp(argv[1], "probe")) {
		fprintf(stderr, "effect-probe: unknown mode '%s': want probe, hog or stream\n", argv[1]);
		return 2;
	}

	uint64_t *buf = alloc_buf(buf_mb, &words);
	uint64_t *lat = calloc(wakeups, sizeof(*lat));
	if (!lat) {
		fprintf(stderr, "effect-probe: cannot allocate --wakeups %u samples: lower --wakeups\n", wakeups);
		return 1;
	}
	struct timespec next;
	clock_gettime(CLOCK_MONOTONIC, &next);
	ts_add_ns(&next, (uint64_t)interval_us * 1000u);
	for (unsigned k = 0; k < wakeups; k++) {
		int rc;
		while ((rc = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL)) == EINTR)
			;
		if (rc) {
			fprintf(stderr, "effect-probe: clock_nanosleep: %s\n", strerror(rc));
			return 1;
		}
		uint64_t woke = now_ns();
		uint64_t due = (uint64_t)next.tv_sec * 1000000000u + (uint64_t)next.tv_nsec;
		lat[k] = woke > due ? woke - due : 0;
		ts_add_ns(&next, (uint64_t)interval_us * 1000u);
		/* A wakeup later than the next deadline: start from now, as
		 * cyclictest does not skip either, but never sleep into the
		 * past twice in a row (a burst of zero-sleep wakeups would
		 * pull the percentiles down). */
		uint64_t nn = (uint64_t)next.tv_sec * 1000000000u + (uint64_t)next.tv_nsec;
		if (nn <= woke) {
			next.tv_sec = (time_t)(woke / 1000000000u);
			next.tv_nsec = (long)(woke % 1000000000u);
			ts_add_ns(&next, (uint64_t)interval_us * 1000u);
		}
	}
	qsort(lat, wakeups, sizeof(*lat), cmp_u64);
	double mips = cpu_loop(cpu_ms);
	double mbs = stream(buf, words, now_ns() + (uint64_t)stream_ms * 1000000u);
	char cpus[256];
	cpus_allowed(cpus, sizeof cpus);
	printf("PROBE wakeups=%u p50_us=%.1f p99_us=%.1f p999_us=%.1f max_us=%.1f cpu_mips=%.1f stream_mbs=%.1f cpus=%s\n",
	       wakeups, quantile(lat, wakeups, 0.50) / 1e3, quantile(lat, wakeups, 0.99) / 1e3,
	       quantile(lat, wakeups, 0.999) / 1e3, lat[wakeups - 1] / 1e3, mips, mbs, cpus);
	fflush(stdout);
	free(lat);
	free(buf);
	return 0;
}
