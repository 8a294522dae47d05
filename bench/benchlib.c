#define _GNU_SOURCE
#include "bench.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"

void bench_die(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fputs("bench: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

/* ---- hosts -------------------------------------------------------------- */

/* A synthetic host of `packs` packages (one NUMA node each) whose first
 * half of every package is performance cores and second half efficient
 * ones: the 2-class shape of the issue, scaled by the cache levels. */
static void two_class(char *buf, size_t len, int packs, int l3, int l2, int cores, int pu)
{
	int per = l3 * l2 * cores * pu, half = per / 2;
	size_t off = (size_t)snprintf(buf, len, "pack:%d numa:1 l3:%d l2:%d core:%d pu:%d |", packs, l3, l2, cores, pu);

	for (int k = 0; k < 2; k++) {
		off += (size_t)snprintf(buf + off, len - off, " %s=", k ? "efficient" : "performance");
		for (int p = 0; p < packs; p++) {
			int lo = p * per + k * half;

			off += (size_t)snprintf(buf + off, len - off, "%s%d-%d", p ? "," : "", lo, lo + half - 1);
		}
	}
}

struct bench_host *bench_hosts(int *n)
{
	static struct bench_host hosts[] = {
		{ "this-host", CC_TOPO_HOST, .what = "the machine running the benchmark" },
		{ "F11", CC_TOPO_HOST, "F11-arm-X3-A715-A710-A510", "arm-A510-A710-A715-X3.tar.gz",
		  "arm-A510-A710-A715-X3", .what = "Arm X3+A715/A710+A510, 3 classes", .placement = true },
		{ "F03", CC_TOPO_HOST, "F03-intel-alderlake-p-4P8E", "test-data-sample1.tar.xz", "sample1",
		  .what = "Alder Lake-P 4P+8E, E-clusters of 4", .placement = true },
		{ "F05", CC_TOPO_XML, "F05-amd-zen5-strixpoint-ryzen-ai9-hx370", "AMD-1Ah-Zen5StrixPoint-RyzenAI9HX370.xml",
		  .what = "Zen5 Strix Point 4+8 (hwloc XML)", .placement = true },
		{ "F10", CC_TOPO_HOST, "F10-intel-xeon-silver-4108-2s", "32intel64-2p8co2t+8ve.tar.bz2",
		  "32intel64-2p8co2t+8ve", .what = "2x Xeon Silver 4108, 2 NUMA", .placement = true },
		{ "F06", CC_TOPO_HOST, "F06-amd-epyc-7451-2s", "x86_64-epyc_7451.tar.gz", "x86_64-epyc_7451",
		  .what = "2x EPYC 7451, 8 NUMA, 16 CCX", .placement = true },
		{ "syn-224", CC_TOPO_SYNTHETIC, .desc = "pack:2 numa:2 l3:1 l2:28 core:1 pu:2",
		  .what = "2x56-core SMT, SNC2 (4 NUMA), 1 class", .placement = true },
		{ "syn-64", CC_TOPO_SYNTHETIC, .growth = true },
		{ "syn-128", CC_TOPO_SYNTHETIC, .growth = true },
		{ "syn-256", CC_TOPO_SYNTHETIC, .growth = true },
		{ "syn-512", CC_TOPO_SYNTHETIC, .growth = true },
		{ "syn-1024", CC_TOPO_SYNTHETIC, .growth = true, .placement = true },
		{ "syn-2048", CC_TOPO_SYNTHETIC, .growth = true },
		{ "syn-4096", CC_TOPO_SYNTHETIC, .growth = true, .placement = true },
	};
	/* packages (= NUMA nodes), L3s per package, L2s per L3, cores per L2, PUs per core */
	static const int shape[][5] = {
		{ 8, 1, 1, 4, 2 }, { 8, 2, 1, 4, 2 }, { 8, 2, 2, 4, 2 }, { 8, 4, 2, 4, 2 },
		{ 8, 4, 4, 4, 2 }, { 8, 4, 8, 4, 2 }, { 8, 4, 16, 4, 2 },
	};
	int g = 0;

	for (size_t i = 0; i < sizeof(hosts) / sizeof(hosts[0]); i++) {
		if (!hosts[i].growth || hosts[i].desc[0])
			continue;
		two_class(hosts[i].desc, sizeof(hosts[i].desc), shape[g][0], shape[g][1], shape[g][2], shape[g][3],
			  shape[g][4]);
		hosts[i].what = "8 NUMA nodes, 2 classes, L2 clusters of 4";
		g++;
	}
	*n = (int)(sizeof(hosts) / sizeof(hosts[0]));
	return hosts;
}

static const char *fixtures_dir(void)
{
	static char dir[PATH_MAX];
	const char *env = getenv("CC_SHARED_DIR");
	struct stat st;

	if (env && *env)
		snprintf(dir, sizeof(dir), "%s/fixtures", env);
	else
		snprintf(dir, sizeof(dir), "%s", CC_SOURCE_DIR "/../shared/fixtures");
	return stat(dir, &st) == 0 && S_ISDIR(st.st_mode) ? dir : NULL;
}

static const char *fixture_path(const struct bench_host *h, char *out, size_t len)
{
	const char *base = fixtures_dir();
	char src[PATH_MAX], dir[PATH_MAX], cmd[3 * PATH_MAX + 64];

	if (!base) {
		printf("SKIPPED %s: ../shared/fixtures not found (set CC_SHARED_DIR)\n", h->name);
		return NULL;
	}
	if (snprintf(src, sizeof(src), "%s/%s/%s", base, h->dir, h->file) >= (int)sizeof(src))
		bench_die("%s: fixture path too long", h->name);
	if (access(src, R_OK) != 0) {
		printf("SKIPPED %s: fixture %s not found\n", h->name, src);
		return NULL;
	}
	if (h->kind == CC_TOPO_XML) {
		if (snprintf(out, len, "%s", src) >= (int)len)
			bench_die("%s: fixture path too long", h->name);
		return out;
	}
	/* Extract once per user into /tmp; fixtures hold looping symlinks,
	 * which tar extracts as links and nothing here follows. */
	if (snprintf(dir, sizeof(dir), "/tmp/corecarve-bench-fixtures-%u/%s", (unsigned)getuid(), h->dir) >=
		    (int)sizeof(dir) ||
	    snprintf(out, len, "%s/.extracted", dir) >= (int)len)
		bench_die("%s: fixture path too long", h->name);
	if (access(out, F_OK) != 0) {
		if (snprintf(cmd, sizeof(cmd),
			     "rm -rf '%s' && mkdir -p '%s' && tar -xf '%s' -C '%s' 2>/dev/null && touch '%s/.extracted'",
			     dir, dir, src, dir, dir) >= (int)sizeof(cmd))
			bench_die("%s: fixture path too long", h->name);
		if (system(cmd) != 0) {
			printf("SKIPPED %s: could not extract %s\n", h->name, src);
			return NULL;
		}
	}
	if (snprintf(out, len, "%s/%s", dir, h->top) >= (int)len)
		bench_die("%s: fixture path too long", h->name);
	return out;
}

bool bench_source(const struct bench_host *h, struct cc_topo_source *src, struct cc_root **root)
{
	static char path[PATH_MAX];
	struct cc_err err = CC_ERR_INIT;
	const char *rootp = "/";

	memset(src, 0, sizeof(*src));
	src->kind = h->kind;
	if (h->dir) {
		if (!fixture_path(h, path, sizeof(path)))
			return false;
		if (h->kind == CC_TOPO_XML)
			src->arg = path;
		else
			rootp = path;
	} else if (h->kind == CC_TOPO_SYNTHETIC) {
		src->arg = h->desc;
	}
	*root = cc_root_open(rootp, &err);
	if (!*root)
		bench_die("%s: %s", h->name, err.msg);
	src->root = *root;
	return true;
}

/* ---- files and clocks ---------------------------------------------------- */

char *bench_tmpdir(const char *tag)
{
	struct stat st;
	const char *base = stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode) && access("/dev/shm", W_OK) == 0
				   ? "/dev/shm"
				   : (getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	char *d;

	if (asprintf(&d, "%s/corecarve-bench-%s-XXXXXX", base, tag) < 0 || !mkdtemp(d))
		bench_die("scratch directory under %s: %s", base, strerror(errno));
	return d;
}

void bench_rmdir(const char *dir)
{
	char cmd[PATH_MAX + 16];

	if (!dir || strncmp(dir, "/", 1) != 0 || !strstr(dir, "corecarve-bench-"))
		return;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "bench: could not remove %s\n", dir);
}

const char *bench_fstype(const char *dir)
{
	struct statfs s;

	if (statfs(dir, &s) < 0)
		return "?";
	switch ((unsigned long)s.f_type) {
	case 0x01021994:
		return "tmpfs";
	case 0xEF53:
		return "ext4";
	case 0x794c7630:
		return "overlayfs";
	case 0x9123683E:
		return "btrfs";
	case 0x58465342:
		return "xfs";
	default:
		return "other";
	}
}

int bench_write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -1;
	fputs(text, f);
	return fclose(f);
}

uint64_t bench_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

struct bench_stats bench_stats(uint64_t *ns, int n)
{
	struct bench_stats s = { 0 };
	int r;

	if (n <= 0)
		return s;
	qsort(ns, (size_t)n, sizeof(*ns), cmp_u64);
	s.n = n;
	s.median = n % 2 ? (double)ns[n / 2] : ((double)ns[n / 2 - 1] + (double)ns[n / 2]) / 2;
	/* Nearest rank: the smallest sample with at least 99% at or below it. */
	r = (99 * n + 99) / 100;
	s.p99 = (double)ns[(r < 1 ? 1 : r) - 1];
	s.min = (double)ns[0];
	s.max = (double)ns[n - 1];
	return s;
}

uint64_t bench_rand(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

unsigned bench_below(uint64_t *state, unsigned n)
{
	return n ? (unsigned)(bench_rand(state) % n) : 0;
}

void bench_print_machine(void)
{
	struct utsname u;
	double load[3] = { 0, 0, 0 };
	_cleanup_free_ char *model = NULL;
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[512];

	if (f) {
		while (fgets(line, sizeof(line), f))
			if (!strncmp(line, "model name", 10) && strchr(line, ':')) {
				model = strdup(strchr(line, ':') + 2);
				if (model)
					model[strcspn(model, "\n")] = '\0';
				break;
			}
		fclose(f);
	}
	uname(&u);
	getloadavg(load, 3);
	printf("machine: %s, %ld CPUs online, Linux %s; load average %.2f %.2f %.2f at start\n",
	       model ? model : "?", sysconf(_SC_NPROCESSORS_ONLN), u.release, load[0], load[1], load[2]);
}
