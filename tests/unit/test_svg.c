/* The pictures: /proc/interrupts parsing (table-driven) and the SVG the
 * topology and status commands draw — well-formed XML (xmllint), one
 * element per CPU, owners, parked siblings and reserved CPUs as given,
 * text escaped, and rendered to PNG where rsvg-convert is installed. */
#define _GNU_SOURCE
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cleanup.h"
#include "interrupts.h"
#include "svg.h"
#include "testlib.h"
#include "topo.h"

/* ---- /proc/interrupts ----------------------------------------------------- */

static const char x86_text[] =
	"            CPU0       CPU1       CPU2       CPU3       \n"
	"   0:         36          0          0          0   IO-APIC   2-edge      timer\n"
	"   1:          0          9          0          0   IO-APIC   1-edge      i8042\n"
	"  24:       1000          0        500          2   PCI-MSIX-0000:00:03.0   0-edge      virtio0-input.0\n"
	" NMI:          1          2          3          4   Non-maskable interrupts\n"
	" LOC:      10000      20000      30000      40000   Local timer interrupts\n"
	" ERR:          0\n"
	" MIS:          0\n";

/* Offline CPUs are left out of the header: columns are CPU 0, 2 and 5. */
static const char sparse_text[] = "      CPU0  CPU2  CPU5\n"
				  " 10:   1   2   3   GICv3  27 Level  arch_timer\n"
				  "IPI0:  4   5   6   Rescheduling interrupts\n"
				  "Err:   0\n";

/* Device IRQs are summed per CPU; timer ticks, NMIs and IPIs are not
 * (they say nothing about where devices interrupt). */
static const struct {
	const char *text;
	int ncpus;
	unsigned long long want[6]; /* per CPU number */
	int nlines;
	unsigned long long max;
} good[] = {
	{ x86_text, 4, { 1036, 9, 500, 2 }, 3, 1036 },
	{ sparse_text, 6, { 1, 0, 2, 0, 0, 3 }, 1, 3 },
	{ "CPU0\n", 1, { 0 }, 0, 0 },
};

START_TEST(test_interrupts_good)
{
	struct cc_err err = CC_ERR_INIT;
	struct cc_interrupts in;

	ck_assert_msg(cc_interrupts_parse(good[_i].text, &in, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(in.ncpus, good[_i].ncpus);
	ck_assert_int_eq(in.nlines, good[_i].nlines);
	ck_assert_uint_eq(in.max, good[_i].max);
	for (int c = 0; c < in.ncpus; c++)
		ck_assert_msg(in.count[c] == good[_i].want[c], "CPU %d: %llu, want %llu", c, in.count[c],
			      good[_i].want[c]);
	cc_interrupts_fini(&in);
}
END_TEST

/* The reader's errors come through unchanged (its own suite tests them). */
START_TEST(test_interrupts_bad)
{
	struct cc_err err = CC_ERR_INIT;
	struct cc_interrupts in;

	ck_assert_int_eq(cc_interrupts_parse("CPU0\n 1 2 3\n", &in, &err), -1);
	ck_assert_msg(!strncmp(err.msg, "/proc/interrupts:2: ", 20), "%s", err.msg);
	ck_assert_ptr_null(in.count);
	ck_assert_int_eq(cc_interrupts_parse("", &in, &err), -1);
}
END_TEST

/* A real kernel's /proc/interrupts is parsed in the e2e guests, not here
 * (a unit test reads no host file: tests/unit/hostguard.c): 60-exec's
 * svg-irq-load on 6.1, 6.12 and 7.x. */
START_TEST(test_interrupts_missing)
{
	struct cc_err err = CC_ERR_INIT;
	_cleanup_root_ struct cc_root *root = cc_root_open("/tmp", &err);
	struct cc_interrupts in;

	ck_assert_ptr_nonnull(root);
	ck_assert_int_eq(cc_interrupts_read(root, &in, &err), -1);
	ck_assert_int_eq(err.code, ENOENT);
	ck_assert_msg(strstr(err.msg, "/proc/interrupts") != NULL, "%s", err.msg);
}
END_TEST

/* ---- SVG -------------------------------------------------------------------- */

static struct cc_topo *synthetic(const char *desc)
{
	struct cc_err err = CC_ERR_INIT;
	struct cc_topo_source src = { .kind = CC_TOPO_SYNTHETIC, .arg = desc };
	struct cc_topo *t = cc_topo_load(&src, &err);

	ck_assert_msg(t != NULL, "%s: %s", desc, err.msg);
	return t;
}

static struct cc_topo *fixture(const char *dir, const char *tarball, const char *sub)
{
	struct cc_err err = CC_ERR_INIT;
	const char *tree = cc_test_fixture_tree(dir, tarball);
	_cleanup_root_ struct cc_root *root = NULL;
	struct cc_topo_source src = { .kind = CC_TOPO_HOST };
	char path[PATH_MAX];
	struct cc_topo *t;

	if (!tree)
		return NULL;
	snprintf(path, sizeof(path), "%s/%s", tree, sub);
	root = cc_root_open(path, &err);
	ck_assert_msg(root != NULL, "%s", err.msg);
	src.root = root;
	t = cc_topo_load(&src, &err);
	ck_assert_msg(t != NULL, "%s: %s", path, err.msg);
	return t;
}

/* Render to a temporary file; returns its text (caller frees) and leaves
 * the path in `path`. */
static char *render(const struct cc_topo *t, const struct cc_svg_view *v, char path[PATH_MAX])
{
	struct cc_err err = CC_ERR_INIT;
	char *text = NULL;
	size_t len = 0;
	FILE *f;
	int fd;

	snprintf(path, PATH_MAX, "/tmp/cc-svg-XXXXXX");
	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	f = fdopen(fd, "w+");
	ck_assert_ptr_nonnull(f);
	ck_assert_msg(cc_svg_write(f, t, v, &err) == 0, "%s", err.msg);
	rewind(f);
	ck_assert_int_gt(getdelim(&text, &len, '\0', f), 0);
	fclose(f);
	return text;
}

static int count(const char *hay, const char *needle)
{
	int n = 0;

	for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
		n++;
	return n;
}

/* xmllint is a build dependency (scripts/deps.sh: libxml2-utils), so its
 * absence is a failure, not a skip. */
static void assert_well_formed(const char *path)
{
	_cleanup_free_ char *cmd = NULL;

	ck_assert_int_ge(asprintf(&cmd, "command -v xmllint >/dev/null || { echo 'xmllint missing: make deps'; exit 9; }; "
				  "xmllint --noout '%s'", path), 0);
	ck_assert_msg(cc_test_sh(NULL, "%s", cmd) == 0, "%s is not well-formed XML", path);
}

/* rsvg-convert (librsvg2-bin) actually renders it: a PNG comes out. */
static void assert_renders(const char *path)
{
	_cleanup_free_ char *cmd = NULL;
	char png[PATH_MAX + 8];
	unsigned char sig[8] = { 0 };
	struct stat st;
	FILE *f;

	if (cc_test_sh(NULL, "command -v rsvg-convert >/dev/null") != 0) {
		cc_test_skip("rsvg-convert not installed (make deps); only the XML of %s was checked", path);
		return;
	}
	snprintf(png, sizeof(png), "%s.png", path);
	ck_assert_int_ge(asprintf(&cmd, "rsvg-convert '%s' -o '%s'", path, png), 0);
	ck_assert_msg(cc_test_sh(NULL, "%s", cmd) == 0, "rsvg-convert failed on %s", path);
	ck_assert_int_eq(stat(png, &st), 0);
	ck_assert_int_gt(st.st_size, 1000);
	f = fopen(png, "rb");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(fread(sig, 1, 8, f), 8);
	fclose(f);
	ck_assert_mem_eq(sig, "\x89PNG\r\n\x1a\n", 8);
	unlink(png);
}

START_TEST(test_svg_synthetic_shapes)
{
	static const struct {
		const char *desc;
		int packages, numa_boxes, llcs, l2_clusters;
	} shapes[] = {
		{ "pack:2 numa:1 l3:1 l2:4 core:1 pu:2", 2, 0, 2, 0 },
		{ "pack:2 numa:2 l3:1 l2:3 core:1 pu:2", 2, 4, 4, 0 },
		{ "pack:1 l3:1 l2:4 core:4 pu:1", 1, 0, 1, 4 },
		{ "pack:1 core:6 pu:2 | performance=0-3 efficient=4-11", 1, 0, 0, 0 },
	};

	for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
		_cleanup_topo_ struct cc_topo *t = synthetic(shapes[i].desc);
		_cleanup_free_ char *svg = NULL;
		char path[PATH_MAX];

		svg = render(t, NULL, path);
		assert_well_formed(path);
		ck_assert_int_eq(count(svg, "data-cpu="), cc_topo_online_pus(t));
		ck_assert_int_eq(count(svg, "class=\"core\""), t->ncores);
		ck_assert_int_eq(count(svg, "class=\"package\""), shapes[i].packages);
		ck_assert_int_eq(count(svg, "class=\"numa\""), shapes[i].numa_boxes);
		ck_assert_int_eq(count(svg, "class=\"llc\""), shapes[i].llcs);
		ck_assert_int_eq(count(svg, "class=\"l2\""), shapes[i].l2_clusters);
		ck_assert_int_eq(count(svg, "class=\"cpu free\""), cc_topo_online_pus(t));
		for (int c = 0; c < t->nclasses; c++)
			ck_assert_msg(strstr(svg, t->classes[c].name) != NULL, "legend lacks %s", t->classes[c].name);
		ck_assert_ptr_nonnull(strstr(svg, "interrupt load: not known"));
		if (i == 3)
			assert_renders(path);
		unlink(path);
	}
}
END_TEST

/* Owners, parked siblings, reserved CPUs and IRQ bars as the view says;
 * an owner id with XML metacharacters comes out escaped. */
START_TEST(test_svg_view)
{
	_cleanup_topo_ struct cc_topo *t = synthetic("pack:2 numa:1 l3:1 l2:4 core:1 pu:2");
	enum cc_svg_role roles[16] = { 0 };
	const char *owners[16] = { 0 };
	unsigned long long counts[16] = { 0 };
	struct cc_interrupts irqs = { .ncpus = 16, .count = counts, .max = 900, .nlines = 3 };
	struct cc_svg_view v = { .title = "status <test> & more", .roles = roles, .owners = owners, .irqs = &irqs };
	_cleanup_free_ char *svg = NULL;
	char path[PATH_MAX];

	roles[0] = roles[1] = roles[8] = roles[9] = CC_SVG_RESERVED;
	roles[2] = roles[4] = CC_SVG_RUN;
	roles[3] = roles[5] = CC_SVG_PARKED;
	for (int i = 2; i <= 5; i++)
		owners[i] = "ctr<1>&\"x\"";
	counts[0] = 900;
	counts[2] = 450;
	svg = render(t, &v, path);
	assert_well_formed(path);
	ck_assert_int_eq(count(svg, "class=\"cpu runs\""), 2);
	ck_assert_int_eq(count(svg, "class=\"cpu parked\""), 2);
	ck_assert_int_eq(count(svg, "class=\"cpu reserved\""), 4);
	ck_assert_int_eq(count(svg, "class=\"cpu free\""), 8);
	ck_assert_int_eq(count(svg, "fill=\"url(#parked)\""), 2 + 1 /* legend */);
	ck_assert_ptr_nonnull(strstr(svg, "CPU 3: performance, parked for ctr&lt;1&gt;&amp;&quot;x&quot;"));
	ck_assert_ptr_nonnull(strstr(svg, "CPU 2: performance, carved by ctr&lt;1&gt;"));
	ck_assert_ptr_nonnull(strstr(svg, "status &lt;test&gt; &amp; more"));
	ck_assert_ptr_null(strstr(svg, "ctr<1>"));
	/* Bars: CPU 0 full width (42 px), CPU 2 half, idle CPUs none. */
	ck_assert_int_eq(count(svg, "class=\"irq\""), 2);
	ck_assert_ptr_nonnull(strstr(svg, "width=\"42\" height=\"4\" fill=\"#d62728\""));
	ck_assert_ptr_nonnull(strstr(svg, "width=\"21\" height=\"4\" fill=\"#d62728\""));
	ck_assert_ptr_nonnull(strstr(svg, "CPU 2: performance, carved by ctr&lt;1&gt;&amp;&quot;x&quot;, 450 interrupts"));
	ck_assert_ptr_nonnull(strstr(svg, "relative to the busiest CPU (900)"));
	assert_renders(path);
	unlink(path);
}
END_TEST

/* Labels fit their cell without making ids collide: exec:4343 stays whole
 * (it was cut to "exec:43"), a long kind:name keeps its name, a container
 * id its first characters. */
START_TEST(test_svg_owner_labels)
{
	_cleanup_topo_ struct cc_topo *t = synthetic("pack:1 core:4 pu:1");
	enum cc_svg_role roles[4] = { CC_SVG_RUN, CC_SVG_RUN, CC_SVG_RUN, CC_SVG_PARKED };
	const char *owners[4] = { "exec:4343", "vm:database-primary", "3f9c2a7be0d1aa", "exec:4343" };
	struct cc_svg_view v = { .title = "labels", .roles = roles, .owners = owners };
	_cleanup_free_ char *svg = NULL;
	char path[PATH_MAX];

	svg = render(t, &v, path);
	assert_well_formed(path);
	ck_assert_msg(strstr(svg, ">exec:4343</text>") && strstr(svg, ">database-</text>") &&
			      strstr(svg, ">3f9c2a7</text>") && strstr(svg, ">(4343)</text>") && !strstr(svg, ">exec:43<"),
		      "%s", svg);
	unlink(path);
}
END_TEST

/* Real hosts: a hybrid laptop with E-core L2 clusters, a 2-socket EPYC
 * with 8 NUMA nodes and 16 CCXs. */
START_TEST(test_svg_fixtures)
{
	static const struct {
		const char *dir, *tarball, *sub;
		int numa_boxes, llcs, l2_clusters;
	} fx[] = {
		{ "F03-intel-alderlake-p-4P8E", "test-data-sample1.tar.xz", "sample1", 0, 1, 2 },
		{ "F06-amd-epyc-7451-2s", "x86_64-epyc_7451.tar.gz", "x86_64-epyc_7451", 8, 16, 0 },
	};

	for (size_t i = 0; i < sizeof(fx) / sizeof(fx[0]); i++) {
		_cleanup_topo_ struct cc_topo *t = fixture(fx[i].dir, fx[i].tarball, fx[i].sub);
		_cleanup_free_ char *svg = NULL;
		char path[PATH_MAX];

		if (!t)
			continue;
		svg = render(t, NULL, path);
		assert_well_formed(path);
		ck_assert_int_eq(count(svg, "data-cpu="), cc_topo_online_pus(t));
		ck_assert_int_eq(count(svg, "class=\"numa\""), fx[i].numa_boxes);
		ck_assert_int_eq(count(svg, "class=\"llc\""), fx[i].llcs);
		ck_assert_int_eq(count(svg, "class=\"l2\""), fx[i].l2_clusters);
		assert_renders(path);
		unlink(path);
	}
}
END_TEST

/* ---- the commands ------------------------------------------------------------ */

static int run(const char *args, char *errout, size_t errlen)
{
	_cleanup_free_ char *cmd = NULL;
	FILE *p;
	size_t n;
	int st;

	/* An empty state directory: nothing carved (a missing one named by the
	 * variable would be an error). */
	ck_assert_int_ge(asprintf(&cmd, "d=$(mktemp -d) && CORECARVE_POLICY= CORECARVE_STATE_DIR=$d '%s' %s 2>&1 >/dev/null; "
				  "r=$?; rmdir $d; exit $r",
				  cc_test_bin("--svg CLI tests"), args), 0);
	p = popen(cmd, "r");
	ck_assert_ptr_nonnull(p);
	n = fread(errout, 1, errlen - 1, p);
	errout[n] = '\0';
	st = pclose(p);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

START_TEST(test_cli_svg)
{
	char dir[] = "/tmp/cc-svgcli-XXXXXX", file[PATH_MAX], args[2 * PATH_MAX], err[1024];

	if (!cc_test_bin("--svg CLI tests"))
		return;
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(file, sizeof(file), "%s/host.svg", dir);
	snprintf(args, sizeof(args), "topology --synthetic 'pack:2 numa:1 l2:2 core:2 pu:2' --svg '%s'", file);
	ck_assert_int_eq(run(args, err, sizeof(err)), 0);
	ck_assert_str_eq(err, "");
	assert_well_formed(file);
	unlink(file);
	/* status draws even when nothing is carved (an absent ledger is empty). */
	snprintf(args, sizeof(args), "status --synthetic 'pack:1 core:4 pu:2' --svg=%s", file);
	ck_assert_int_eq(run(args, err, sizeof(err)), 0);
	assert_well_formed(file);
	unlink(file);

	ck_assert_int_eq(run("topology --synthetic 'pack:1 pu:1' --json --svg -", err, sizeof(err)), 2);
	ck_assert_str_eq(err, "corecarve: topology: --svg - and --json both write stdout; write the picture to a file\n");
	ck_assert_int_eq(run("status --synthetic 'pack:1 pu:1' --json --svg -", err, sizeof(err)), 2);
	ck_assert_str_eq(err, "corecarve: status: --svg - and --json both write stdout; write the picture to a file\n");
	ck_assert_int_eq(run("topology --svg", err, sizeof(err)), 2);
	ck_assert_str_eq(err, "corecarve: --svg: missing file name\n");
	ck_assert_int_eq(run("status --svg=", err, sizeof(err)), 2);
	ck_assert_str_eq(err, "corecarve: --svg: missing file name\n");
	snprintf(args, sizeof(args), "topology --synthetic 'pack:1 core:2 pu:1' --svg '%s/no/such/dir.svg'", dir);
	ck_assert_int_eq(run(args, err, sizeof(err)), 2);
	ck_assert_msg(strstr(err, "corecarve: --svg: ") == err && strstr(err, "No such file or directory\n"), "%s", err);
	ck_assert_int_eq(rmdir(dir), 0); /* nothing left behind */
}
END_TEST

static Suite *svg_suite(void)
{
	Suite *s = suite_create("svg");
	TCase *tc = tcase_create("interrupts");

	tcase_add_loop_test(tc, test_interrupts_good, 0, sizeof(good) / sizeof(good[0]));
	tcase_add_test(tc, test_interrupts_bad);
	tcase_add_test(tc, test_interrupts_missing);
	suite_add_tcase(s, tc);
	tc = tcase_create("svg");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_svg_synthetic_shapes);
	tcase_add_test(tc, test_svg_view);
	tcase_add_test(tc, test_svg_owner_labels);
	tcase_add_test(tc, test_svg_fixtures);
	tcase_add_test(tc, test_cli_svg);
	suite_add_tcase(s, tc);
	return s;
}

CC_TEST_MAIN(svg_suite)
