/* corecarve benchmarks: what the programs in bench/ share — the hosts they
 * run on, statistics, clocks and scratch directories.  The programs link
 * the library exactly as the corecarve binary does; nothing here is used
 * by the product. */
#ifndef CC_BENCH_H
#define CC_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy.h"
#include "root.h"
#include "topo.h"

/* A host a benchmark runs on: a real fixture (../shared/fixtures), this
 * machine, or an hwloc synthetic description. */
struct bench_host {
	const char *name;
	enum cc_topo_kind kind;
	const char *dir, *file, *top; /* fixture directory, archive or XML, tree top */
	char desc[512];               /* synthetic description ("| classes" included) */
	const char *what;             /* what it stands for */
	bool growth;                  /* in the 64 -> 4096 PU series */
	bool placement;               /* in the placement-quality set */
};

/* Every host, in increasing size; *n receives the count. */
struct bench_host *bench_hosts(int *n);

/* The topology source of a host; false (and a loud "skipped" line) when its
 * fixture is absent.  *root is opened for host kinds and for "/" otherwise;
 * the caller frees it. */
bool bench_source(const struct bench_host *h, struct cc_topo_source *src, struct cc_root **root);

/* A fresh private directory (0700) on tmpfs when there is one (/dev/shm),
 * as /run/corecarve is in production; removed by bench_rmdir. */
char *bench_tmpdir(const char *tag);
void bench_rmdir(const char *dir);
/* The filesystem type of a directory, for the report ("tmpfs"). */
const char *bench_fstype(const char *dir);

int bench_write_file(const char *path, const char *text);

/* Nanoseconds on the monotonic clock. */
uint64_t bench_now(void);

/* Median and 99th percentile (nearest rank) of n samples; sorts them. */
struct bench_stats {
	double median, p99, min, max;
	int n;
};
struct bench_stats bench_stats(uint64_t *ns, int n);

/* splitmix64: a small, seedable, portable generator, so a stream is the
 * same on every machine. */
uint64_t bench_rand(uint64_t *state);
unsigned bench_below(uint64_t *state, unsigned n);

/* The machine the numbers were taken on, for the report header. */
void bench_print_machine(void);

/* Die with "bench: <msg>" (benchmarks are entry points). */
void bench_die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

#endif
