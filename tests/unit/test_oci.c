#include <string.h>

#include "cleanup.h"
#include "oci.h"
#include "testlib.h"

START_TEST(test_state_ok)
{
	static const char s[] = "{\"ociVersion\":\"1.0\",\"id\":\"t2\",\"pid\":150,\"root\":\"rootfs\","
				"\"bundle\":\"/bundle\",\"status\":\"created\","
				"\"annotations\":{\"corecarve.io/placement\":\"{class: latency, cpus: 2}\"}}";
	struct cc_err err = CC_ERR_INIT;
	struct cc_oci_state st;

	ck_assert_int_eq(cc_oci_state_parse(s, strlen(s), &st, &err), 0);
	ck_assert_str_eq(st.id, "t2");
	ck_assert_int_eq(st.pid, 150);
	ck_assert_str_eq(st.bundle, "/bundle");
	ck_assert_str_eq(st.status, "created");
	ck_assert_str_eq(json_string_value(json_object_get(st.annotations, "corecarve.io/placement")),
			 "{class: latency, cpus: 2}");
	cc_oci_state_fini(&st);
}
END_TEST

static const struct {
	const char *json;
	const char *why;
} bad_states[] = {
	{ "", "invalid JSON" },
	{ "{\"id\":\"a\"", "invalid JSON" },
	{ "[1,2]", "expected a JSON object" },
	{ "{}", "id: missing" },
	{ "{\"id\":5}", "id: expected a string" },
	{ "{\"id\":\"\"}", "not a valid container id" },
	{ "{\"id\":\"../x\"}", "not a valid container id" },
	{ "{\"id\":\"..\"}", "not a valid container id" },
	/* The ledger's ids of other kinds: a container must not alias them. */
	{ "{\"id\":\"exec:4242\"}", "not a valid container id" },
	{ "{\"id\":\"vm:web\"}", "not a valid container id" },
	/* Log spoofing: a space, a bidi override (U+202E), a newline. */
	{ "{\"id\":\"a b\"}", "not a valid container id" },
	{ "{\"id\":\"ab\u202ecd\"}", "not a valid container id" },
	{ "{\"id\":\"a\\nb\"}", "not a valid container id" },
	{ "{\"id\":\".hidden\"}", "not a valid container id" },
	{ "{\"id\":\"-x\"}", "not a valid container id" },
	{ "{\"id\":\"a\",\"pid\":-1}", "pid: -1 is out of range" },
	{ "{\"id\":\"a\",\"pid\":\"12\"}", "pid: expected an integer" },
	{ "{\"id\":\"a\",\"pid\":99999999999}", "out of range" },
	{ "{\"id\":\"a\",\"annotations\":[]}", "annotations: expected an object" },
	{ "{\"id\":\"a\",\"annotations\":{\"k\":1}}", "annotations.k: expected a string" },
	{ "{\"id\":\"a\",\"id\":\"b\"}", "duplicate" },
	{ "{\"id\":\"a\",\"bundle\":7}", "bundle: expected a string" },
	{ "{\"id\":\"a\",\"status\":[]}", "status: expected a string" },
	/* A NUL byte in a field that is read would cut it short. */
	{ "{\"id\":\"a\\u0000b\"}", "id: holds a NUL byte" },
	{ "{\"id\":\"a\",\"bundle\":\"/b\\u0000/x\"}", "bundle: holds a NUL byte" },
	{ "{\"id\":\"a\",\"annotations\":{\"corecarve.io/placement\":\"{class: x}\\u0000\"}}",
	  "annotations.corecarve.io/placement: holds a NUL byte" },
	{ "{\"id\":\"a\",\"annotations\":{\"io.kubernetes.cri.container-name\":\"w\\u0000x\"}}",
	  "annotations.io.kubernetes.cri.container-name: holds a NUL byte" },
	{ "{\"id\":\"a\",\"annotations\":false}", "annotations: expected an object" },
};

START_TEST(test_state_bad)
{
	struct cc_err err = CC_ERR_INIT;
	struct cc_oci_state st;
	const char *j = bad_states[_i].json;

	ck_assert_int_eq(cc_oci_state_parse(j, strlen(j), &st, &err), -1);
	ck_assert_msg(strstr(err.msg, bad_states[_i].why), "%s: got \"%s\"", j, err.msg);
	ck_assert_msg(strncmp(err.msg, "OCI state", 9) == 0, "names the input: %s", err.msg);
	ck_assert_ptr_null(strchr(err.msg, '\n'));
}
END_TEST

/* What runc and containerd name containers is taken, up to the limit. */
START_TEST(test_state_ids)
{
	static const char *const good[] = { "t2", "0123abcdef", "k8s_POD_web-1.default_0", "a+b", "Z" };
	struct cc_err err = CC_ERR_INIT;
	struct cc_oci_state st;
	char json[CC_OCI_ID_MAX + 64], id[CC_OCI_ID_MAX + 2];

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		snprintf(json, sizeof(json), "{\"id\":\"%s\"}", good[i]);
		ck_assert_msg(cc_oci_state_parse(json, strlen(json), &st, &err) == 0, "%s: %s", good[i], err.msg);
		ck_assert_str_eq(st.id, good[i]);
		cc_oci_state_fini(&st);
	}
	memset(id, 'a', CC_OCI_ID_MAX);
	id[CC_OCI_ID_MAX] = '\0';
	snprintf(json, sizeof(json), "{\"id\":\"%s\"}", id);
	ck_assert_msg(cc_oci_state_parse(json, strlen(json), &st, &err) == 0, "%s", err.msg);
	cc_oci_state_fini(&st);
	id[CC_OCI_ID_MAX] = 'a';
	id[CC_OCI_ID_MAX + 1] = '\0';
	snprintf(json, sizeof(json), "{\"id\":\"%s\"}", id);
	ck_assert_int_eq(cc_oci_state_parse(json, strlen(json), &st, &err), -1);
	ck_assert_str_eq(err.msg, "OCI state: id: a 256-byte id is not a valid container id (want 1-255 of A-Z a-z 0-9 _ + - "
				  "., starting with a letter or digit, as runc and containerd name containers)");
}
END_TEST

START_TEST(test_state_huge)
{
	size_t n = CC_OCI_STATE_MAX + 2;
	_cleanup_free_ char *big = malloc(n);
	struct cc_err err = CC_ERR_INIT;
	struct cc_oci_state st;

	memset(big, ' ', n);
	ck_assert_int_eq(cc_oci_state_parse(big, n, &st, &err), -1);
	ck_assert_ptr_nonnull(strstr(err.msg, "larger than"));
}
END_TEST

/* What corecarve does not read is not its reason to refuse a container:
 * "annotations": null (runc's and crun's spec without any) is none, and a
 * NUL byte in another tool's annotation value is that tool's. */
START_TEST(test_state_unread)
{
	static const char null_ann[] = "{\"id\":\"c1\",\"annotations\":null}";
	static const char nul_other[] = "{\"id\":\"c1\",\"annotations\":{\"example.com/blob\":\"a\\u0000b\","
					"\"corecarve.io/placement\":\"{class: latency}\"}}";
	static const char cfg_null[] = "{\"ociVersion\":\"1.0.2\",\"annotations\":null}";
	struct cc_err err = CC_ERR_INIT;
	struct cc_oci_state st;
	struct cc_oci_config cfg;

	ck_assert_msg(cc_oci_state_parse(null_ann, strlen(null_ann), &st, &err) == 0, "%s", err.msg);
	ck_assert(json_is_object(st.annotations));
	ck_assert_int_eq(json_object_size(st.annotations), 0);
	cc_oci_state_fini(&st);
	ck_assert_msg(cc_oci_state_parse(nul_other, strlen(nul_other), &st, &err) == 0, "%s", err.msg);
	ck_assert_str_eq(json_string_value(json_object_get(st.annotations, "corecarve.io/placement")),
			 "{class: latency}");
	cc_oci_state_fini(&st);
	ck_assert_msg(cc_oci_config_parse(cfg_null, strlen(cfg_null), &cfg, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(json_object_size(cfg.annotations), 0);
	cc_oci_config_fini(&cfg);
}
END_TEST

START_TEST(test_config)
{
	static const char c[] = "{\"ociVersion\":\"1.0.2\",\"annotations\":{\"a\":\"b\"},"
				"\"linux\":{\"cgroupsPath\":\"/kubepods/pod1/c1\","
				"\"resources\":{\"cpu\":{\"quota\":50000,\"period\":100000,\"shares\":512}}}}";
	struct cc_err err = CC_ERR_INIT;
	struct cc_oci_config cfg;

	ck_assert_int_eq(cc_oci_config_parse(c, strlen(c), &cfg, &err), 0);
	ck_assert_str_eq(cfg.cgroups_path, "/kubepods/pod1/c1");
	ck_assert_int_eq(cfg.cpu_quota, 50000);
	ck_assert_int_eq(cfg.cpu_period, 100000);
	ck_assert_int_eq(cfg.cpu_shares, 512);
	ck_assert_str_eq(json_string_value(json_object_get(cfg.annotations, "a")), "b");
	cc_oci_config_fini(&cfg);
}
END_TEST

static const struct {
	const char *json;
	const char *why;
} bad_configs[] = {
	{ "{\"linux\":5}", "linux: expected an object" },
	{ "{\"linux\":{\"cgroupsPath\":1}}", "linux.cgroupsPath: expected a string" },
	{ "{\"linux\":{\"resources\":{\"cpu\":{\"quota\":\"x\"}}}}", "cpu.quota: expected an integer" },
	{ "{\"linux\":{\"resources\":{\"cpu\":{\"period\":-5}}}}", "cpu.period: must not be negative" },
	{ "{\"linux\":{\"resources\":{\"cpu\":{\"shares\":1.5}}}}", "cpu.shares: expected an integer" },
	{ "{\"linux\":{\"resources\":{\"cpu\":{\"shares\":-2}}}}", "cpu.shares: must not be negative" },
	{ "{\"annotations\":{\"x\":{}}}", "annotations.x: expected a string" },
	{ "{\"annotations\":", "invalid JSON" },
	{ "{\"linux\":{\"cgroupsPath\":\"/a\\u0000/b\"}}", "linux.cgroupsPath: holds a NUL byte" },
};

START_TEST(test_config_bad)
{
	struct cc_err err = CC_ERR_INIT;
	struct cc_oci_config cfg;
	const char *j = bad_configs[_i].json;

	ck_assert_int_eq(cc_oci_config_parse(j, strlen(j), &cfg, &err), -1);
	ck_assert_msg(strstr(err.msg, bad_configs[_i].why), "%s: got \"%s\"", j, err.msg);
	ck_assert_msg(strncmp(err.msg, "config.json", 11) == 0, "names the input: %s", err.msg);
}
END_TEST

static const struct {
	const char *text;
	const char *path; /* NULL: error */
} proc_cases[] = {
	{ "0::/kubepods/pod1/ctr1\n", "/kubepods/pod1/ctr1" },
	{ "12:cpuset:/docker/x\n0::/system.slice/crun-abc.scope\n", "/system.slice/crun-abc.scope" },
	{ "0::/\n", "/" },
	{ "1:name=systemd:/x\n", NULL },
	{ "0::\n", NULL },
	{ "0::/a/../b\n", NULL },
	{ "0::/a//b\n", NULL },
	{ "0::relative\n", NULL },
	{ "0::/gone (deleted)\n", NULL },
	{ "", NULL },
};

START_TEST(test_proc_cgroup)
{
	struct cc_err err = CC_ERR_INIT;
	char out[256];
	int r = cc_proc_cgroup_parse(proc_cases[_i].text, out, sizeof(out), &err);

	if (proc_cases[_i].path) {
		ck_assert_msg(r == 0, "%s", err.msg);
		ck_assert_str_eq(out, proc_cases[_i].path);
	} else {
		ck_assert_int_eq(r, -1);
		ck_assert_ptr_nonnull(strstr(err.msg, "/proc/<pid>/cgroup"));
	}
}
END_TEST

START_TEST(test_path_safe)
{
	ck_assert(cc_cgroup_path_safe("/a/b"));
	ck_assert(cc_cgroup_path_safe("/"));
	ck_assert(!cc_cgroup_path_safe("a/b"));
	ck_assert(!cc_cgroup_path_safe("/a/"));
	ck_assert(!cc_cgroup_path_safe("/a/./b"));
	ck_assert(!cc_cgroup_path_safe("/.."));
	ck_assert(!cc_cgroup_path_safe("/a\nb"));
	ck_assert(cc_cgroup_path_safe("/a/..b"));
}
END_TEST

static Suite *oci_suite(void)
{
	Suite *s = suite_create("oci");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_state_ok);
	tcase_add_loop_test(tc, test_state_bad, 0, sizeof(bad_states) / sizeof(bad_states[0]));
	tcase_add_test(tc, test_state_ids);
	tcase_add_test(tc, test_state_huge);
	tcase_add_test(tc, test_state_unread);
	tcase_add_test(tc, test_config);
	tcase_add_loop_test(tc, test_config_bad, 0, sizeof(bad_configs) / sizeof(bad_configs[0]));
	tcase_add_loop_test(tc, test_proc_cgroup, 0, sizeof(proc_cases) / sizeof(proc_cases[0]));
	tcase_add_test(tc, test_path_safe);
	suite_add_tcase(s, tc);
	return s;
}

CC_TEST_MAIN(oci_suite)
