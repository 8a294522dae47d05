/* The VM list: what it accepts, its defaults, where it is read from, and
 * every refusal with its whole message. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cleanup.h"
#include "policy.h"
#include "testlib.h"
#include "vmconfig.h"

START_TEST(test_full)
{
	static const char text[] = "vms:\n"
				   "  web:\n"
				   "    class: latency\n"
				   "    libvirt: web-prod\n"
				   "    threads: 2\n"
				   "    emulator: reserved\n"
				   "    memory: spread\n"
				   "  db.1:\n"
				   "    class: throughput\n"
				   "    pidfile: /run/db.pid\n"
				   "  t: {class: latency, qemuName: \"t,,x\"}\n";
	struct cc_err err = CC_ERR_INIT;
	struct cc_vmconfig cfg;
	const struct cc_vm_spec *s;

	ck_assert_msg(cc_vmconfig_parse(text, strlen(text), "v.yaml", &cfg, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(cfg.n, 3);
	ck_assert_str_eq(cfg.source, "v.yaml");
	s = cc_vmconfig_find(&cfg, "web");
	ck_assert_ptr_nonnull(s);
	ck_assert_str_eq(s->class_name, "latency");
	ck_assert_str_eq(s->class_where, "v.yaml:3:5: vms.web.class");
	ck_assert_int_eq(s->find, CC_VM_FIND_LIBVIRT);
	ck_assert_str_eq(s->target, "web-prod");
	ck_assert_int_eq(s->threads, 2);
	ck_assert(s->threads_set);
	ck_assert_int_eq(s->emulator, CC_VM_EMU_RESERVED);
	ck_assert_int_eq(s->memory, CC_MEM_SPREAD);
	s = cc_vmconfig_find(&cfg, "db.1");
	ck_assert_int_eq(s->find, CC_VM_FIND_PIDFILE);
	ck_assert_str_eq(s->target, "/run/db.pid");
	s = cc_vmconfig_find(&cfg, "t");
	ck_assert_int_eq(s->find, CC_VM_FIND_NAME);
	/* The text as written: ",," is QEMU's escape, matched when reading
	 * the command line. */
	ck_assert_str_eq(s->target, "t,,x");
	/* Order is kept: the VM list's order is the carving order. */
	ck_assert_str_eq(cfg.vms[0].name, "web");
	ck_assert_str_eq(cfg.vms[2].name, "t");
	ck_assert_ptr_null(cc_vmconfig_find(&cfg, "nope"));
	cc_vmconfig_fini(&cfg);
}
END_TEST

START_TEST(test_defaults)
{
	static const char text[] = "vms:\n  guest-7:\n    class: latency\n";
	struct cc_err err = CC_ERR_INIT;
	struct cc_vmconfig cfg;

	ck_assert_msg(cc_vmconfig_parse(text, strlen(text), "v.yaml", &cfg, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(cfg.n, 1);
	/* Without a way to find it, the VM's name is its QEMU -name. */
	ck_assert_int_eq(cfg.vms[0].find, CC_VM_FIND_NAME);
	ck_assert_str_eq(cfg.vms[0].target, "guest-7");
	/* Not set: the class's smt decides (cc_vm_threads). */
	ck_assert(!cfg.vms[0].threads_set);
	ck_assert_int_eq(cfg.vms[0].threads, 1);
	ck_assert_int_eq(cfg.vms[0].emulator, CC_VM_EMU_SHARED);
	ck_assert_int_eq(cfg.vms[0].memory, CC_MEM_LOCAL);
	cc_vmconfig_fini(&cfg);

	ck_assert_msg(cc_vmconfig_parse("vms: {}\n", 8, "v.yaml", &cfg, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(cfg.n, 0);
	cc_vmconfig_fini(&cfg);
}
END_TEST

#define VM "vms:\n  web:\n    class: latency\n"

static const struct {
	const char *text;
	const char *msg;
} bad_cases[] = {
	{ VM "    threads: 3\n", "v.yaml:4:5: vms.web.threads: expected 1 or 2, got \"3\"" },
	{ VM "    threads: \"2\"\n", "v.yaml:4:5: vms.web.threads: expected 1 or 2, got the string \"2\"" },
	{ VM "    threads: 02\n", "v.yaml:4:5: vms.web.threads: expected 1 or 2, got \"02\"" },
	{ VM "    threads: [1]\n", "v.yaml:4:5: vms.web.threads: expected 1 or 2, got a sequence" },
	{ VM "    emulator: dedicated\n", "v.yaml:4:5: vms.web.emulator: expected shared or reserved, got \"dedicated\"" },
	{ VM "    memory: any\n", "v.yaml:4:5: vms.web.memory: expected local or spread, got \"any\"" },
	{ VM "    cpus: 4\n",
	  "v.yaml:4:5: vms.web.cpus: unknown key (expected one of class, libvirt, pidfile, qemuName, threads, emulator, memory)" },
	{ VM "    libvirt: web\n    pidfile: /run/web.pid\n",
	  "v.yaml:5:5: vms.web.pidfile: give one of qemuName, libvirt or pidfile (libvirt is given too)" },
	{ VM "    pidfile: run/web.pid\n", "v.yaml:4:5: vms.web.pidfile: expected an absolute path, got \"run/web.pid\"" },
	{ VM "    libvirt: ../etc/x\n",
	  "v.yaml:4:5: vms.web.libvirt: a libvirt domain name has no '/' and does not start with '.', got \"../etc/x\"" },
	{ VM "    qemuName: \"\"\n", "v.yaml:4:5: vms.web.qemuName: must not be empty" },
	{ VM "    qemuName: ~\n", "v.yaml:4:5: vms.web.qemuName: expected a string, got null" },
	{ "vms:\n  web:\n    threads: 1\n", "v.yaml:2:3: vms.web.class: required key is missing" },
	{ "vms:\n  web:\n    class: \"\"\n", "v.yaml:3:5: vms.web.class: must not be empty" },
	{ "vms:\n  web: latency\n", "v.yaml:2:3: vms.web: expected a mapping, got \"latency\"" },
	{ "vms:\n  \"web/1\": {class: latency}\n",
	  "v.yaml:2:3: vms.web/1: VM names are 1 to 63 characters of letters, digits, '.', '_' and '-', starting with a letter or digit" },
	{ "vms:\n  -web: {class: latency}\n",
	  "v.yaml:2:3: vms.-web: VM names are 1 to 63 characters of letters, digits, '.', '_' and '-', starting with a letter or digit" },
	{ VM "  web: {class: throughput}\n", "v.yaml:4:3: vms.web: duplicate key (first at line 2)" },
	{ "vms: [web]\n", "v.yaml:1:1: vms: expected a mapping, got a sequence" },
	{ "vm:\n  web: {class: latency}\n", "v.yaml:1:1: vm: unknown key (expected one of vms)" },
	{ "classes: {}\n", "v.yaml:1:1: classes: unknown key (expected one of vms)" },
	{ "", "v.yaml: empty document: expected a `vms:` mapping" },
	{ "web: &a {class: latency}\n", "v.yaml:1:6: web: anchors and aliases are not allowed (anchor &a)" },
};

START_TEST(test_bad_table)
{
	struct cc_err err = CC_ERR_INIT;
	struct cc_vmconfig cfg = { 0 };
	const char *text = bad_cases[_i].text;

	ck_assert_int_eq(cc_vmconfig_parse(text, strlen(text), "v.yaml", &cfg, &err), -1);
	ck_assert_str_eq(err.msg, bad_cases[_i].msg);
	ck_assert_int_eq(cfg.n, 0);
	ck_assert_ptr_null(cfg.vms);
}
END_TEST

/* The class must be one of the policy's; the message points at the key. */
START_TEST(test_unknown_class)
{
	static const char text[] = "vms:\n  web: {class: latency}\n  db:\n    class: fast\n";
	struct cc_err err = CC_ERR_INIT;
	_cleanup_policy_ struct cc_policy *p = cc_policy_default(&err);
	struct cc_vmconfig cfg;

	ck_assert_ptr_nonnull(p);
	ck_assert_int_eq(cc_vmconfig_parse(text, strlen(text), "v.yaml", &cfg, &err), 0);
	ck_assert_int_eq(cc_policy_check_vms(p, &cfg, &err), -1);
	ck_assert_str_eq(err.msg, "v.yaml:4:5: vms.db.class: unknown placement class \"fast\" "
				  "(known: latency, throughput, background, isolated)");
	cc_vmconfig_fini(&cfg);
}
END_TEST

/* A VM host may keep the list in its policy; the policy checks it whole. */
START_TEST(test_in_policy)
{
	static const char good[] = "classes:\n  latency: {coreType: performance}\n"
				   "vms:\n  web: {class: latency, threads: 2}\n";
	static const char bad[] = "classes:\n  latency: {coreType: performance}\n"
				  "vms:\n  web: {class: latency, threads: 4}\n";
	static const char unknown[] = "classes:\n  latency: {coreType: performance}\n"
				      "vms:\n  web: {class: fast}\n";
	struct cc_err err = CC_ERR_INIT;
	_cleanup_free_ char *path = cc_test_write_tmp(good);
	struct cc_policy *p;
	struct cc_vmconfig cfg;
	char want[512];

	p = cc_policy_parse(good, strlen(good), "p.yaml", &err);
	ck_assert_msg(p != NULL, "%s", err.msg);
	cc_policy_free(p);
	ck_assert_ptr_null(cc_policy_parse(bad, strlen(bad), "p.yaml", &err));
	ck_assert_str_eq(err.msg, "p.yaml:4:25: vms.web.threads: expected 1 or 2, got \"4\"");
	cc_err_clear(&err);
	ck_assert_ptr_null(cc_policy_parse(unknown, strlen(unknown), "p.yaml", &err));
	ck_assert_str_eq(err.msg, "p.yaml:4:9: vms.web.class: unknown placement class \"fast\" (known: latency)");
	cc_err_clear(&err);

	/* No --config and no /etc/corecarve/vms.yaml on a test machine: the
	 * policy's section is the list. */
	ck_assert_ptr_nonnull(path);
	if (access(CC_VMS_PATH, F_OK) == 0) {
		cc_test_skip("%s exists on this machine; the policy fallback is not tested", CC_VMS_PATH);
		unlink(path);
		return;
	}
	ck_assert_msg(cc_vmconfig_load(NULL, path, &cfg, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(cfg.n, 1);
	ck_assert_str_eq(cfg.source, path);
	ck_assert_int_eq(cfg.vms[0].threads, 2);
	snprintf(want, sizeof(want), "%s:4:9: vms.web.class", path);
	ck_assert_str_eq(cfg.vms[0].class_where, want);
	cc_vmconfig_fini(&cfg);
	unlink(path);
}
END_TEST

START_TEST(test_load_file)
{
	struct cc_err err = CC_ERR_INIT;
	_cleanup_free_ char *path = cc_test_write_tmp(VM "    threads: 3\n");
	_cleanup_free_ char *want = NULL;
	struct cc_vmconfig cfg;

	ck_assert_ptr_nonnull(path);
	ck_assert_int_eq(cc_vmconfig_load(path, NULL, &cfg, &err), -1);
	ck_assert_int_ge(asprintf(&want, "%s:4:5: vms.web.threads: expected 1 or 2, got \"3\"", path), 0);
	ck_assert_str_eq(err.msg, want);
	unlink(path);
	/* A --config that does not exist is an error, never "no VMs". */
	cc_err_clear(&err);
	ck_assert_int_eq(cc_vmconfig_load("/nonexistent/vms.yaml", NULL, &cfg, &err), -1);
	ck_assert_int_eq(err.code, ENOENT);
	ck_assert_str_eq(err.msg, "/nonexistent/vms.yaml: No such file or directory");
	cc_err_clear(&err);
	ck_assert_int_eq(cc_vmconfig_load("/tmp", NULL, &cfg, &err), -1);
	ck_assert_str_eq(err.msg, "/tmp: not a regular file");
}
END_TEST

START_TEST(test_id_name)
{
	ck_assert_str_eq(cc_vm_id_name("vm:web"), "web");
	ck_assert_ptr_null(cc_vm_id_name("vm:"));
	ck_assert_ptr_null(cc_vm_id_name("exec:12"));
	ck_assert_ptr_null(cc_vm_id_name(NULL));
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("vmconfig");
	TCase *tc = tcase_create("vmconfig");

	tcase_add_test(tc, test_full);
	tcase_add_test(tc, test_defaults);
	tcase_add_loop_test(tc, test_bad_table, 0, sizeof(bad_cases) / sizeof(bad_cases[0]));
	tcase_add_test(tc, test_unknown_class);
	tcase_add_test(tc, test_in_policy);
	tcase_add_test(tc, test_load_file);
	tcase_add_test(tc, test_id_name);
	suite_add_tcase(s, tc);
	return s;
}

CC_TEST_MAIN(suite)
