/* irqbalance's environment file: reading and rewriting the banned-CPU
 * variables, the operator's own set, giving their lines back byte for
 * byte, and the control-socket message. */
#define _GNU_SOURCE
#include <string.h>

#include "cleanup.h"
#include "cpulist.h"
#include "irqbalance.h"
#include "testlib.h"

static hwloc_bitmap_t L(const char *list)
{
	struct cc_err err = CC_ERR_INIT;
	hwloc_bitmap_t b = hwloc_bitmap_alloc();

	ck_assert_ptr_nonnull(b);
	ck_assert_msg(cc_cpulist_parse(list, b, "test", &err) == 0, "%s", err.msg);
	return b;
}

static void eq_list(hwloc_const_bitmap_t b, const char *want)
{
	_cleanup_free_ char *s = cc_cpulist_format(b);

	ck_assert_str_eq(s, want);
}

/* ---- cc_env_get ------------------------------------------------------------- */

static const struct {
	const char *text;
	const char *raw;   /* NULL: absent */
	const char *value;
} get_cases[] = {
	{ "", NULL, NULL },
	{ "#IRQBALANCE_BANNED_CPULIST=1\n", NULL, NULL },
	{ "IRQBALANCE_BANNED_CPULIST=1-3\n", "1-3", "1-3" },
	{ "IRQBALANCE_BANNED_CPULIST=\"1-3\"\n", "\"1-3\"", "1-3" },
	{ "  export IRQBALANCE_BANNED_CPULIST='0,4'\n", "'0,4'", "0,4" },
	{ "IRQBALANCE_BANNED_CPULIST=1\nIRQBALANCE_BANNED_CPULIST=2\n", "2", "2" }, /* the last wins */
	{ "IRQBALANCE_BANNED_CPULISTX=1\n", NULL, NULL },
	{ "XIRQBALANCE_BANNED_CPULIST=1\n", NULL, NULL },
	{ "IRQBALANCE_BANNED_CPULIST=7\r\n", "7", "7" },
	{ "IRQBALANCE_BANNED_CPULIST=", "", "" },
	{ "A=1\nIRQBALANCE_BANNED_CPULIST= 5 ", " 5 ", "5" },
};

START_TEST(test_env_get)
{
	struct cc_err err = CC_ERR_INIT;
	_cleanup_free_ char *raw = NULL;
	_cleanup_free_ char *value = NULL;

	ck_assert_int_eq(cc_env_get(get_cases[_i].text, CC_IRQBALANCE_LIST, &raw, &value, &err), 0);
	if (!get_cases[_i].raw) {
		ck_assert_ptr_null(raw);
		return;
	}
	ck_assert_msg(raw != NULL, "case %d", _i);
	ck_assert_str_eq(raw, get_cases[_i].raw);
	ck_assert_str_eq(value, get_cases[_i].value);
}
END_TEST

/* ---- cc_env_set ------------------------------------------------------------- */

static const struct {
	const char *text;
	const char *raw; /* NULL: remove */
	const char *want;
} set_cases[] = {
	{ "# c\n#IRQBALANCE_BANNED_CPULIST=\nIRQBALANCE_ARGS=-j\n", "2-5",
	  "# c\n#IRQBALANCE_BANNED_CPULIST=\nIRQBALANCE_ARGS=-j\nIRQBALANCE_BANNED_CPULIST=2-5\n" },
	{ "IRQBALANCE_ARGS=-j", "2-5", "IRQBALANCE_ARGS=-j\nIRQBALANCE_BANNED_CPULIST=2-5\n" },
	{ "", "2-5", "IRQBALANCE_BANNED_CPULIST=2-5\n" },
	{ "a\n  export IRQBALANCE_BANNED_CPULIST=\"0\"\nb\n", "0,2-5", "a\n  export IRQBALANCE_BANNED_CPULIST=0,2-5\nb\n" },
	{ "a\nIRQBALANCE_BANNED_CPULIST=0\nb\nIRQBALANCE_BANNED_CPULIST=1", "\"0\"",
	  "a\nIRQBALANCE_BANNED_CPULIST=\"0\"\nb\nIRQBALANCE_BANNED_CPULIST=\"0\"" },
	{ "a\nIRQBALANCE_BANNED_CPULIST=0\nb\n", NULL, "a\nb\n" },
	{ "a\n#IRQBALANCE_BANNED_CPULIST=0\n", NULL, "a\n#IRQBALANCE_BANNED_CPULIST=0\n" },
};

START_TEST(test_env_set)
{
	struct cc_err err = CC_ERR_INIT;
	_cleanup_free_ char *out = cc_env_set(set_cases[_i].text, CC_IRQBALANCE_LIST, set_cases[_i].raw, &err);

	ck_assert_ptr_nonnull(out);
	ck_assert_str_eq(out, set_cases[_i].want);
}
END_TEST

/* ---- render ---------------------------------------------------------------- */

/* The shape of Debian 12's /etc/default/irqbalance: comments, every
 * variable commented out. */
static const char debian[] = "# irqbalance's environment file (systemd EnvironmentFile)\n"
			     "#\n#IRQBALANCE_ONESHOT=\n"
			     "#\n# IRQBALANCE_BANNED_CPUS\n#    64 bit bitmask\n#IRQBALANCE_BANNED_CPUS=\n"
			     "#\n# IRQBALANCE_BANNED_CPULIST\n#IRQBALANCE_BANNED_CPULIST=\n"
			     "#\n#IRQBALANCE_ARGS=\n";

struct run {
	struct cc_irqbalance_pending p;
	char *text; /* the file after this step */
};

static void render(const char *text, const struct cc_irqbalance_rec *rec, const char *avoid, const char *autoban,
		   struct run *r)
{
	struct cc_err err = CC_ERR_INIT;
	_cleanup_bitmap_ hwloc_bitmap_t a = L(avoid);
	_cleanup_bitmap_ hwloc_bitmap_t ab = L(autoban);

	memset(r, 0, sizeof(*r));
	snprintf(r->p.file, sizeof(r->p.file), "/etc/default/irqbalance");
	ck_assert_msg(cc_irqbalance_render(text, rec, a, ab, &r->p, &err) == 0, "%s", err.msg);
	r->text = strdup(r->p.new_text ? r->p.new_text : text);
}

static void run_fini(struct run *r)
{
	cc_irqbalance_pending_fini(&r->p);
	free(r->text);
}

START_TEST(test_render_debian_roundtrip)
{
	struct cc_irqbalance_rec none;
	struct run a, b, c;

	cc_irqbalance_rec_init(&none);
	render(debian, &none, "2-5", "", &a);
	ck_assert(a.p.next.active);
	ck_assert_ptr_null(a.p.next.cpulist);
	ck_assert_ptr_null(a.p.next.cpus);
	ck_assert_ptr_nonnull(strstr(a.text, "\nIRQBALANCE_BANNED_CPULIST=2-5\n"));
	ck_assert_ptr_nonnull(strstr(a.text, "\nIRQBALANCE_BANNED_CPUS=0000003c\n"));
	ck_assert_ptr_nonnull(strstr(a.text, "#IRQBALANCE_BANNED_CPULIST=\n")); /* comments kept */
	ck_assert(a.p.tell);
	eq_list(a.p.list, "2-5");

	/* A second carve: the union. */
	render(a.text, &a.p.next, "2-5,10-13", "", &b);
	ck_assert_ptr_nonnull(strstr(b.text, "IRQBALANCE_BANNED_CPULIST=2-5,10-13\n"));
	ck_assert_ptr_nonnull(strstr(b.text, "IRQBALANCE_BANNED_CPUS=00003c3c\n"));
	eq_list(b.p.next.banned, "2-5,10-13");

	/* The last carve goes: the file is Debian's again, byte for byte. */
	render(b.text, &b.p.next, "", "", &c);
	ck_assert_str_eq(c.text, debian);
	ck_assert(!c.p.next.active);
	ck_assert(c.p.tell);
	ck_assert(hwloc_bitmap_iszero(c.p.list)); /* drop the daemon's override */
	run_fini(&a);
	run_fini(&b);
	run_fini(&c);
	cc_irqbalance_rec_fini(&none);
}
END_TEST

START_TEST(test_render_operator_values)
{
	static const char mine[] = "IRQBALANCE_ARGS=\"--journal\"\nexport IRQBALANCE_BANNED_CPULIST=\"0\"\n";
	struct cc_irqbalance_rec none;
	struct run a, b;

	cc_irqbalance_rec_init(&none);
	render(mine, &none, "2-5", "14-15", &a);
	ck_assert_str_eq(a.p.next.cpulist, "\"0\"");
	eq_list(a.p.list, "0,2-5"); /* theirs plus the carve; not irqbalance's own bans */
	ck_assert_ptr_nonnull(strstr(a.text, "export IRQBALANCE_BANNED_CPULIST=0,2-5\n"));
	render(a.text, &a.p.next, "", "14-15", &b);
	ck_assert_str_eq(b.text, mine);
	eq_list(b.p.list, "0"); /* the daemon gets the operator's set back */
	run_fini(&a);
	run_fini(&b);
	cc_irqbalance_rec_fini(&none);
}
END_TEST

/* Neither variable set: irqbalance bans isolated and nohz_full CPUs by
 * itself, and setting one turns that off, so they are kept. */
START_TEST(test_render_keeps_autoban)
{
	struct cc_irqbalance_rec none;
	struct run a;

	cc_irqbalance_rec_init(&none);
	render(debian, &none, "2-5", "14-15", &a);
	eq_list(a.p.list, "2-5,14-15");
	run_fini(&a);
	cc_irqbalance_rec_fini(&none);
}
END_TEST

/* The old mask wins over the list when both are set (1.8, 1.9). */
START_TEST(test_render_mask_wins)
{
	static const char both[] = "IRQBALANCE_BANNED_CPUS=00000001\nIRQBALANCE_BANNED_CPULIST=7\n";
	struct cc_irqbalance_rec none;
	struct run a;

	cc_irqbalance_rec_init(&none);
	render(both, &none, "2-5", "", &a);
	eq_list(a.p.list, "0,2-5");
	ck_assert_str_eq(a.text, "IRQBALANCE_BANNED_CPUS=0000003d\nIRQBALANCE_BANNED_CPULIST=0,2-5\n");
	run_fini(&a);
	cc_irqbalance_rec_fini(&none);
}
END_TEST

/* Edited by hand while corecarve manages it: the new value is the
 * operator's, kept under the carves and given back at the end. */
START_TEST(test_render_adopts_edit)
{
	struct cc_irqbalance_rec none;
	struct run a, b, c;
	char *edited;

	cc_irqbalance_rec_init(&none);
	render(debian, &none, "2-5", "", &a);
	edited = cc_env_set(a.text, CC_IRQBALANCE_LIST, "1", &(struct cc_err)CC_ERR_INIT);
	ck_assert_ptr_nonnull(edited);
	render(edited, &a.p.next, "2-5", "", &b);
	ck_assert_str_eq(b.p.next.cpulist, "1");
	eq_list(b.p.list, "1-5");
	render(b.text, &b.p.next, "", "", &c);
	ck_assert_ptr_nonnull(strstr(c.text, "\nIRQBALANCE_BANNED_CPULIST=1\n"));
	ck_assert_ptr_null(strstr(c.text, "IRQBALANCE_BANNED_CPUS=0"));
	free(edited);
	run_fini(&a);
	run_fini(&b);
	run_fini(&c);
	cc_irqbalance_rec_fini(&none);
}
END_TEST

static const struct {
	const char *text;
	const char *why;
} bad_files[] = {
	{ "IRQBALANCE_BANNED_CPULIST=5-2\n",
	  "/etc/default/irqbalance: IRQBALANCE_BANNED_CPULIST: invalid cpu list \"5-2\": range 5-2 is reversed" },
	{ "IRQBALANCE_BANNED_CPULIST=\"0,,1\"\n", "/etc/default/irqbalance: IRQBALANCE_BANNED_CPULIST: invalid cpu list" },
	{ "IRQBALANCE_BANNED_CPUS=0xff\n", "/etc/default/irqbalance: IRQBALANCE_BANNED_CPUS: invalid cpumask \"0xff\"" },
	{ "IRQBALANCE_BANNED_CPUS=fg\n", "/etc/default/irqbalance: IRQBALANCE_BANNED_CPUS: invalid cpumask \"fg\"" },
};

START_TEST(test_render_bad_table)
{
	struct cc_err err = CC_ERR_INIT;
	struct cc_irqbalance_rec none;
	struct cc_irqbalance_pending p = { .file = "/etc/default/irqbalance" };
	_cleanup_bitmap_ hwloc_bitmap_t a = L("2-5");
	_cleanup_bitmap_ hwloc_bitmap_t ab = hwloc_bitmap_alloc();

	cc_irqbalance_rec_init(&none);
	ck_assert_int_eq(cc_irqbalance_render(bad_files[_i].text, &none, a, ab, &p, &err), -1);
	ck_assert_msg(strstr(err.msg, bad_files[_i].why), "case %d: got \"%s\"", _i, err.msg);
	ck_assert_ptr_null(p.new_text);
	cc_irqbalance_pending_fini(&p);
	cc_irqbalance_rec_fini(&none);
}
END_TEST

/* Giving the lines back never fails on a value irqbalance cannot read. */
START_TEST(test_render_restore_bad_value)
{
	static const char bad[] = "IRQBALANCE_BANNED_CPULIST=\"5-2\"\n";
	struct cc_irqbalance_rec rec;
	struct run r;

	cc_irqbalance_rec_init(&rec);
	rec.active = true;
	snprintf(rec.file, sizeof(rec.file), "/etc/default/irqbalance");
	rec.cpulist = strdup("\"5-2\"");
	hwloc_bitmap_set_range(rec.banned, 2, 5);
	render("IRQBALANCE_BANNED_CPULIST=2-5\nIRQBALANCE_BANNED_CPUS=0000003c\n", &rec, "", "", &r);
	ck_assert_str_eq(r.text, bad);
	ck_assert(hwloc_bitmap_iszero(r.p.list));
	run_fini(&r);
	cc_irqbalance_rec_fini(&rec);
}
END_TEST

/* A hook killed between its journal and the end: the file holds the old
 * list or the one being written; neither is mistaken for the operator's. */
START_TEST(test_render_after_crash)
{
	static const char before[] = "IRQBALANCE_BANNED_CPULIST=10-13\nIRQBALANCE_BANNED_CPUS=00003c00\n";
	static const char after[] = "IRQBALANCE_BANNED_CPULIST=2-5,10-13\nIRQBALANCE_BANNED_CPUS=00003c3c\n";
	struct cc_irqbalance_rec rec;
	struct run a, b;

	cc_irqbalance_rec_init(&rec);
	rec.active = true;
	snprintf(rec.file, sizeof(rec.file), "/etc/default/irqbalance");
	hwloc_bitmap_set_range(rec.banned, 10, 13);
	rec.pending = L("2-5,10-13");
	render(before, &rec, "10-13", "", &a);
	ck_assert_ptr_null(a.p.next.cpulist);
	ck_assert_ptr_null(a.p.next.cpus);
	ck_assert_ptr_null(a.p.new_text);
	ck_assert_ptr_null(a.p.next.pending);
	render(after, &rec, "10-13", "", &b);
	ck_assert_ptr_null(b.p.next.cpulist);
	ck_assert_str_eq(b.text, before);
	run_fini(&a);
	run_fini(&b);
	cc_irqbalance_rec_fini(&rec);
}
END_TEST

START_TEST(test_message)
{
	_cleanup_bitmap_ hwloc_bitmap_t empty = hwloc_bitmap_alloc();
	_cleanup_bitmap_ hwloc_bitmap_t some = L("2-5,10-13");
	_cleanup_bitmap_ hwloc_bitmap_t sparse = hwloc_bitmap_alloc();
	_cleanup_free_ char *a = cc_irqbalance_message(empty);
	_cleanup_free_ char *b = cc_irqbalance_message(some);
	_cleanup_free_ char *c = NULL;

	ck_assert_str_eq(a, "settings cpus NULL");
	ck_assert_str_eq(b, "settings cpus 2-5,10-13");
	/* Every other CPU of a large host: longer than irqbalance reads. */
	for (int i = 0; i < 400; i += 2)
		hwloc_bitmap_set(sparse, (unsigned)i);
	c = cc_irqbalance_message(sparse);
	ck_assert_ptr_null(c);
}
END_TEST

static Suite *irqbalance_suite(void)
{
	Suite *s = suite_create("irqbalance");
	TCase *env = tcase_create("env");
	TCase *r = tcase_create("render");

	tcase_add_loop_test(env, test_env_get, 0, sizeof(get_cases) / sizeof(get_cases[0]));
	tcase_add_loop_test(env, test_env_set, 0, sizeof(set_cases) / sizeof(set_cases[0]));
	suite_add_tcase(s, env);
	tcase_add_test(r, test_render_debian_roundtrip);
	tcase_add_test(r, test_render_operator_values);
	tcase_add_test(r, test_render_keeps_autoban);
	tcase_add_test(r, test_render_mask_wins);
	tcase_add_test(r, test_render_adopts_edit);
	tcase_add_loop_test(r, test_render_bad_table, 0, sizeof(bad_files) / sizeof(bad_files[0]));
	tcase_add_test(r, test_render_restore_bad_value);
	tcase_add_test(r, test_render_after_crash);
	tcase_add_test(r, test_message);
	suite_add_tcase(s, r);
	return s;
}

CC_TEST_MAIN(irqbalance_suite)
