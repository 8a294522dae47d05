/* Finding a VM's QEMU and its threads (plugin/flows/vm_find.c): the pure parsers,
 * then the finder reading a small /proc and /run tree under --root (read
 * only: the kernel's behaviour is the e2e scenario's business). */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "cpulist.h"
#include "testlib.h"
#include "vm.h"

static const struct {
	const char *value;
	const char *name; /* NULL: none */
} names[] = {
	{ "t,debug-threads=on", "t" },
	{ "guest=web,debug-threads=on", "web" },
	{ "debug-threads=on,guest=x", "x" },
	{ "a,,b,process=q", "a,b" },
	{ "guest=a,,b", "a,b" },
	{ "t", "t" },
	{ "process=q", NULL },
	{ "guest=", NULL },
	{ "", NULL },
};

START_TEST(test_qemu_name)
{
	char out[64] = "";
	int r = cc_vm_qemu_name(names[_i].value, out, sizeof(out));

	if (names[_i].name) {
		ck_assert_msg(r == 0, "\"%s\" names nothing", names[_i].value);
		ck_assert_str_eq(out, names[_i].name);
	} else {
		ck_assert_msg(r == -1, "\"%s\" named \"%s\"", names[_i].value, out);
	}
}
END_TEST

static const struct {
	const char *comm;
	int vcpu;
	const char *accel;
} comms[] = {
	{ "CPU 0/KVM", 0, "KVM" },  { "CPU 12/TCG", 12, "TCG" }, { "CPU 8191/KVM", 8191, "KVM" },
	{ "CPU 8192/KVM", -1, "" }, { "CPU 01/KVM", -1, "" },    { "CPU 1/HVF", -1, "" },
	{ "CPU /KVM", -1, "" },     { "CPU 3/KVM ", -1, "" },    { "IO mon_iothread", -1, "" },
	{ "qemu-system-x86", -1, "" }, { "CPU -1/KVM", -1, "" },
};

START_TEST(test_vcpu_of_comm)
{
	char accel[8] = "";

	ck_assert_int_eq(cc_vm_vcpu_of_comm(comms[_i].comm, accel), comms[_i].vcpu);
	ck_assert_str_eq(accel, comms[_i].accel);
}
END_TEST

/* ---- a captured tree ------------------------------------------------------------- */

static char tree[PATH_MAX];

static void put(const char *rel, const char *data, size_t len)
{
	char path[2 * PATH_MAX], cmd[3 * PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tree, rel);
	snprintf(cmd, sizeof(cmd), "mkdir -p \"$(dirname '%s')\"", path);
	ck_assert_int_eq(system(cmd), 0);
	f = fopen(path, "we");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(data, 1, len, f), len);
	fclose(f);
}

static void puts_(const char *rel, const char *text)
{
	put(rel, text, strlen(text));
}

/* A process: its cmdline (NUL-separated, given with '|'), start time,
 * threads "tid:comm:cpus:cgroup", owner (real, effective, saved and fs
 * uid), executable (/proc/<pid>/exe) and cgroup (the first thread's). */
static void process_as(int pid, const char *cmdline, unsigned long start, const char *const *threads, unsigned uid,
		       const char *exe)
{
	char rel[128], buf[4096], path[2 * PATH_MAX], pcg[256];
	size_t n = strlen(cmdline);

	snprintf(rel, sizeof(rel), "proc/%d/status", pid);
	snprintf(buf, sizeof(buf), "Name:\tqemu\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t%d\nUid:\t%u\t%u\t%u\t%u\n"
		 "Gid:\t0\t0\t0\t0\n", pid, uid, uid, uid, uid);
	puts_(rel, buf);
	snprintf(path, sizeof(path), "%s/proc/%d/exe", tree, pid);
	ck_assert_int_eq(symlink(exe, path), 0);
	ck_assert_int_eq(sscanf(threads[0], "%*[^:]:%*[^:]:%*[^:]:%255s", pcg), 1);
	snprintf(rel, sizeof(rel), "proc/%d/cgroup", pid);
	snprintf(buf, sizeof(buf), "0::%s\n", pcg);
	puts_(rel, buf);

	memcpy(buf, cmdline, n + 1);
	for (size_t i = 0; i < n; i++)
		if (buf[i] == '|')
			buf[i] = '\0';
	snprintf(rel, sizeof(rel), "proc/%d/cmdline", pid);
	put(rel, buf, n + 1);
	/* The command name may hold spaces and parentheses. */
	snprintf(rel, sizeof(rel), "proc/%d/stat", pid);
	snprintf(buf, sizeof(buf), "%d (qemu (x) y) S 1 %d %d 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 5 0 %lu 1234 5\n",
		 pid, pid, pid, start);
	puts_(rel, buf);
	for (int i = 0; threads[i]; i++) {
		char tid[16], comm[32], cpus[32], cg[256];

		ck_assert_int_eq(sscanf(threads[i], "%15[^:]:%31[^:]:%31[^:]:%255s", tid, comm, cpus, cg), 4);
		if (tid[0] == '+') /* "+N": the pid plus N */
			snprintf(tid, sizeof(tid), "%d", pid + atoi(tid + 1));
		snprintf(rel, sizeof(rel), "proc/%d/task/%s/comm", pid, tid);
		snprintf(buf, sizeof(buf), "%s\n", comm);
		puts_(rel, buf);
		snprintf(rel, sizeof(rel), "proc/%d/task/%s/status", pid, tid);
		snprintf(buf, sizeof(buf), "Name:\t%s\nCpus_allowed:\tffff\nCpus_allowed_list:\t%s\nMems_allowed_list:\t0-1\n",
			 comm, cpus);
		puts_(rel, buf);
		snprintf(rel, sizeof(rel), "proc/%d/task/%s/cgroup", pid, tid);
		snprintf(buf, sizeof(buf), "0::%s\n", cg);
		puts_(rel, buf);
	}
}

/* Root's QEMU, installed where the distribution puts it. */
static void process(int pid, const char *cmdline, unsigned long start, const char *const *threads)
{
	process_as(pid, cmdline, start, threads, 0, "/usr/bin/qemu-system-x86_64");
}

#define LV "/machine.slice/machine-qemu-1-web.scope/libvirt"
#define LV2 "/machine.slice/machine-qemu-2-lvq.scope/libvirt"

static void build_tree(void)
{
	static const char *const t_threads[] = { "100:qemu-system-x86:0-15:/", "101:call_rcu:0-15:/",
						 "103:CPU 1/TCG:0-15:/", "102:CPU 0/TCG:4:/", NULL };
	static const char *const web_threads[] = { "200:qemu-system-x86:0-15:" LV "/emulator",
						   "201:CPU 0/KVM:0-15:" LV "/vcpu0",
						   "202:CPU 1/KVM:0-15:" LV "/vcpu1", "203:worker:0-15:" LV "/emulator",
						   "204:IO iothread1:6:" LV "/iothread1", NULL };
	static const char *const plain[] = { "300:bash:0-15:/", NULL };
	static const char *const nodbg[] = { "400:qemu-system-x86:0-15:/", "401:qemu-system-x86:0-15:/", NULL };
	static const char *const vm_root[] = { "+0:qemu-system-x86:0-15:/", "+1:CPU 0/KVM:0-15:/", NULL };
	static const char *const vm_pod[] = { "+0:qemu-system-x86:0-15:/kubepods/burstable/pod1/ctr",
					      "+1:CPU 0/KVM:0-15:/kubepods/burstable/pod1/ctr", NULL };
	static const char *const vm_libpod[] = { "+0:qemu-system-x86:0-15:/machine.slice/libpod-ab12.scope/container",
						 "+1:CPU 0/KVM:0-15:/machine.slice/libpod-ab12.scope/container", NULL };
	static const char *const vm_lvq[] = { "+0:qemu-system-x86:0-15:" LV2 "/emulator", "+1:CPU 0/KVM:0-15:" LV2 "/vcpu0",
					      NULL };
	static const char *const twice[] = { "600:qemu-system-x86:0-15:/", "601:CPU 0/KVM:0-15:/",
					     "602:CPU 0/KVM:0-15:/", NULL };

	if (tree[0])
		return;
	snprintf(tree, sizeof(tree), "/tmp/cc-test-vmtree-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tree));
	process(100, "qemu-system-x86_64|-S|-smp|2|-name|t,debug-threads=on", 4242, t_threads);
	process(200, "/usr/bin/qemu-system-x86_64|-name|guest=web,debug-threads=on|-S", 5151, web_threads);
	process(300, "bash|-name|t", 77, plain);
	process(400, "qemu-system-x86_64|-name|nodbg", 88, nodbg);
	process(500, "qemu-kvm|--name|dup", 90, nodbg);
	process(501, "qemu-kvm|-name|guest=dup", 91, nodbg);
	process(600, "qemu-system-x86_64|-name|twice,debug-threads=on", 92, twice);
	/* Issue #26: a process named qemu with the VM's -name is not a VM
	 * unless root or libvirt's QEMU user runs an installed QEMU outside
	 * any container's cgroup. */
	process_as(700, "qemu-system-x86_64|-name|evil,debug-threads=on", 93, vm_root, 1000, "/usr/bin/qemu-system-x86_64");
	process_as(710, "qemu-system-x86_64|-name|evil2,debug-threads=on", 94, vm_root, 0, "/home/u/qemu-system-x86_64");
	process_as(720, "qemu-system-x86_64|-name|evil3,debug-threads=on", 95, vm_pod, 0, "/usr/bin/qemu-system-x86_64");
	process_as(730, "qemu-system-x86_64|-name|evil4,debug-threads=on", 96, vm_libpod, 0, "/usr/bin/qemu-system-x86_64");
	process_as(740, "qemu-system-x86_64|-name|guest=lvq,debug-threads=on", 97, vm_lvq, 64055,
		   "/usr/bin/qemu-system-x86_64 (deleted)");
	process_as(750, "qemu-kvm|-name|dup2,debug-threads=on", 98, vm_root, 0, "/usr/libexec/qemu-kvm");
	process_as(760, "qemu-kvm|-name|dup2,debug-threads=on", 99, vm_root, 1000, "/usr/libexec/qemu-kvm");
	puts_("etc/passwd", "root:x:0:0:root:/root:/bin/bash\n"
			    "libvirt-qemu:x:64055:108:Libvirt Qemu,,,:/var/lib/libvirt:/usr/sbin/nologin\n");
	puts_("run/evil.pid", "700\n");
	puts_("run/libvirt/qemu/web.pid", "200");
	puts_("run/libvirt/qemu/gone.pid", "999\n");
	puts_("run/libvirt/qemu/t.pid", "200\n");
	puts_("run/stale.pid", "300\n");
	puts_("run/bad.pid", "12ab\n");
	puts_("sys/fs/cgroup" LV "/vcpu0/cpuset.cpus", "\n");
	puts_("sys/fs/cgroup" LV "/vcpu0/cpuset.mems", "\n");
	puts_("sys/fs/cgroup" LV "/vcpu1/cpuset.cpus", "6\n");
	puts_("sys/fs/cgroup" LV "/vcpu1/cpuset.mems", "0\n");
	puts_("sys/fs/cgroup" LV "/emulator/cpuset.cpus", "0-15\n");
	puts_("sys/fs/cgroup" LV "/emulator/cpuset.mems", "\n");
}

static void remove_tree(void)
{
	char cmd[PATH_MAX + 16];

	if (!tree[0])
		return;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tree);
	if (system(cmd) != 0)
		printf("could not remove %s\n", tree);
}

static struct cc_root *open_tree(void)
{
	struct cc_err err = CC_ERR_INIT;
	struct cc_root *root;

	build_tree();
	root = cc_root_open(tree, &err);
	ck_assert_msg(root != NULL, "%s", err.msg);
	return root;
}

static struct cc_vm_spec spec(const char *name, enum cc_vm_find find, const char *target)
{
	struct cc_vm_spec s;

	memset(&s, 0, sizeof(s));
	snprintf(s.name, sizeof(s.name), "%s", name);
	snprintf(s.class_name, sizeof(s.class_name), "latency");
	s.find = find;
	snprintf(s.target, sizeof(s.target), "%s", target);
	s.threads = 1;
	return s;
}

static void assert_set(hwloc_const_bitmap_t b, const char *want)
{
	_cleanup_free_ char *s = cc_cpulist_format(b);

	ck_assert_str_eq(s, want);
}

START_TEST(test_find_by_name)
{
	_cleanup_root_ struct cc_root *root = open_tree();
	struct cc_vm_spec s = spec("t", CC_VM_FIND_NAME, "t");
	struct cc_vm_proc p;
	struct cc_err err = CC_ERR_INIT;
	char why[256];

	ck_assert_msg(cc_vm_find(root, &s, &p, why, sizeof(why), &err) == 1, "%s", err.msg);
	/* bash with "-name t" in its arguments is not QEMU. */
	ck_assert_int_eq(p.pid, 100);
	ck_assert_uint_eq(p.start, 4242);
	ck_assert_str_eq(p.accel, "TCG");
	ck_assert_int_eq(p.nvcpus, 2);
	ck_assert_int_eq(p.vcpus[0].vcpu, 0);
	ck_assert_int_eq(p.vcpus[0].tid, 102);
	assert_set(p.vcpus[0].affinity, "4");
	ck_assert_int_eq(p.vcpus[1].tid, 103);
	ck_assert_int_eq(p.nemu, 2);
	ck_assert_int_eq(p.emu[0].tid, 100);
	ck_assert_int_eq(p.emu[1].tid, 101);
	/* In the root cgroup: no libvirt cgroup to keep in line. */
	ck_assert_str_eq(p.vcpus[0].cgroup, "");
	ck_assert_ptr_null(p.vcpus[0].cg_cpus);
	cc_vm_proc_fini(&p);

	s = spec("t2", CC_VM_FIND_NAME, "other");
	ck_assert_int_eq(cc_vm_find(root, &s, &p, why, sizeof(why), &err), 0);
	ck_assert_str_eq(why, "no QEMU named other");
}
END_TEST

START_TEST(test_find_libvirt)
{
	_cleanup_root_ struct cc_root *root = open_tree();
	struct cc_vm_spec s = spec("web", CC_VM_FIND_LIBVIRT, "web");
	struct cc_vm_proc p;
	struct cc_err err = CC_ERR_INIT;
	char why[256];

	ck_assert_msg(cc_vm_find(root, &s, &p, why, sizeof(why), &err) == 1, "%s", err.msg);
	ck_assert_int_eq(p.pid, 200);
	ck_assert_str_eq(p.accel, "KVM");
	ck_assert_int_eq(p.nvcpus, 2);
	ck_assert_str_eq(p.vcpus[0].cgroup, LV "/vcpu0");
	assert_set(p.vcpus[0].cg_cpus, "");
	ck_assert_str_eq(p.vcpus[1].cgroup, LV "/vcpu1");
	assert_set(p.vcpus[1].cg_cpus, "6");
	assert_set(p.vcpus[1].cg_mems, "0");
	/* The main thread carries the emulator cgroup; other emulator
	 * threads are in it too and are not read again. */
	ck_assert_int_eq(p.emu[0].tid, 200);
	ck_assert_str_eq(p.emu[0].cgroup, LV "/emulator");
	assert_set(p.emu[0].cg_cpus, "0-15");
	ck_assert_str_eq(p.emu[1].cgroup, "");
	ck_assert(!p.emu[1].foreign);
	/* libvirt's iothread cgroup: its <iothreadpin> owns that thread. */
	ck_assert_int_eq(p.nemu, 3);
	ck_assert_int_eq(p.emu[2].tid, 204);
	ck_assert(p.emu[2].foreign);
	cc_vm_proc_fini(&p);

	s = spec("gone", CC_VM_FIND_LIBVIRT, "gone");
	ck_assert_int_eq(cc_vm_find(root, &s, &p, why, sizeof(why), &err), 0);
	ck_assert_str_eq(why, "/run/libvirt/qemu/gone.pid names process 999, which is not running");
	s = spec("nope", CC_VM_FIND_LIBVIRT, "nope");
	ck_assert_int_eq(cc_vm_find(root, &s, &p, why, sizeof(why), &err), 0);
	ck_assert_str_eq(why, "no pid file /run/libvirt/qemu/nope.pid");
	/* The pid file of domain web names a QEMU of another domain. */
	s = spec("t", CC_VM_FIND_LIBVIRT, "t");
	ck_assert_int_eq(cc_vm_find(root, &s, &p, why, sizeof(why), &err), 0);
	ck_assert_str_eq(why, "/run/libvirt/qemu/t.pid names process 200, which is not the QEMU of domain t (a stale pid file)");
}
END_TEST

START_TEST(test_find_pidfile)
{
	_cleanup_root_ struct cc_root *root = open_tree();
	struct cc_vm_spec s = spec("x", CC_VM_FIND_PIDFILE, "/run/stale.pid");
	struct cc_vm_proc p;
	struct cc_err err = CC_ERR_INIT;
	char why[256];

	ck_assert_int_eq(cc_vm_find(root, &s, &p, why, sizeof(why), &err), 0);
	ck_assert_str_eq(why, "/run/stale.pid names process 300, which is not QEMU (a stale pid file)");
	s = spec("x", CC_VM_FIND_PIDFILE, "/run/bad.pid");
	ck_assert_int_eq(cc_vm_find(root, &s, &p, why, sizeof(why), &err), -1);
	ck_assert_str_eq(err.msg, "/run/bad.pid: expected a process id, got \"12ab\"");
	cc_err_clear(&err);
	s = spec("x", CC_VM_FIND_PIDFILE, "/run/libvirt/qemu/web.pid");
	ck_assert_msg(cc_vm_find(root, &s, &p, why, sizeof(why), &err) == 1, "%s", err.msg);
	ck_assert_int_eq(p.pid, 200);
	cc_vm_proc_fini(&p);
}
END_TEST

START_TEST(test_find_errors)
{
	_cleanup_root_ struct cc_root *root = open_tree();
	struct cc_vm_spec s = spec("nodbg", CC_VM_FIND_NAME, "nodbg");
	struct cc_vm_proc p;
	struct cc_err err = CC_ERR_INIT;
	char why[256];

	ck_assert_int_eq(cc_vm_find(root, &s, &p, why, sizeof(why), &err), -1);
	ck_assert_str_eq(err.msg, "VM nodbg (pid 400): no thread is named \"CPU <n>/KVM\" or \"CPU <n>/TCG\"; start "
				  "QEMU with -name nodbg,debug-threads=on (libvirt does)");
	cc_err_clear(&err);
	s = spec("dup", CC_VM_FIND_NAME, "dup");
	ck_assert_int_eq(cc_vm_find(root, &s, &p, why, sizeof(why), &err), -1);
	ck_assert_msg(!strncmp(err.msg, "VM dup: 2 QEMU processes are named dup (pids ", 45), "%s", err.msg);
	cc_err_clear(&err);
	s = spec("twice", CC_VM_FIND_NAME, "twice");
	ck_assert_int_eq(cc_vm_find(root, &s, &p, why, sizeof(why), &err), -1);
	ck_assert_str_eq(err.msg, "VM twice (pid 600): threads 601 and 602 are both vCPU 0");
}
END_TEST

/* Issue #26: any user could start a process named qemu-system-x86_64 with
 * the VM's -name, in a pod's cgroup or from their home directory, and have
 * its threads pinned as the VM's.  Now such a process is left out (and
 * named in the why), and cannot make a name ambiguous either. */
START_TEST(test_find_untrusted)
{
	static const struct {
		const char *name, *why;
	} left_out[] = {
		{ "evil", "no QEMU named evil; left out: process 700 runs as uid 1000 (a VM's QEMU runs as root or "
			  "libvirt's QEMU user)" },
		{ "evil2", "no QEMU named evil2; left out: process 710 runs /home/u/qemu-system-x86_64, not an installed "
			   "QEMU (/usr/bin/qemu-system-*, /usr/libexec/qemu-kvm, /usr/bin/kvm)" },
		{ "evil3", "no QEMU named evil3; left out: process 720 runs in container cgroup /kubepods/burstable/pod1/ctr" },
		{ "evil4", "no QEMU named evil4; left out: process 730 runs in container cgroup "
			   "/machine.slice/libpod-ab12.scope/container" },
	};
	_cleanup_root_ struct cc_root *root = open_tree();
	struct cc_vm_proc p;
	struct cc_err err = CC_ERR_INIT;
	struct cc_vm_spec s;
	char why[512];

	for (size_t i = 0; i < sizeof(left_out) / sizeof(left_out[0]); i++) {
		s = spec(left_out[i].name, CC_VM_FIND_NAME, left_out[i].name);
		ck_assert_msg(cc_vm_find(root, &s, &p, why, sizeof(why), &err) == 0, "%s: %s", left_out[i].name, err.msg);
		ck_assert_str_eq(why, left_out[i].why);
	}
	/* A pid file naming another user's QEMU names no VM. */
	s = spec("x", CC_VM_FIND_PIDFILE, "/run/evil.pid");
	ck_assert_int_eq(cc_vm_find(root, &s, &p, why, sizeof(why), &err), 0);
	ck_assert_str_eq(why, "/run/evil.pid names process 700, which runs as uid 1000 (a VM's QEMU runs as root or "
			      "libvirt's QEMU user)");
	/* libvirt's QEMU user (the tree's /etc/passwd), its binary upgraded
	 * under it ("(deleted)"), in libvirt's machine.slice scope. */
	s = spec("lvq", CC_VM_FIND_NAME, "lvq");
	ck_assert_msg(cc_vm_find(root, &s, &p, why, sizeof(why), &err) == 1, "%s", err.msg);
	ck_assert_int_eq(p.pid, 740);
	cc_vm_proc_fini(&p);
	/* Root's qemu-kvm and a user's one of the same name: root's is the VM. */
	s = spec("dup2", CC_VM_FIND_NAME, "dup2");
	ck_assert_msg(cc_vm_find(root, &s, &p, why, sizeof(why), &err) == 1, "%s", err.msg);
	ck_assert_int_eq(p.pid, 750);
	cc_vm_proc_fini(&p);
}
END_TEST

/* A recorded pid whose start time differs is another process. */
START_TEST(test_read_proc_start)
{
	_cleanup_root_ struct cc_root *root = open_tree();
	struct cc_vm_proc p;
	struct cc_err err = CC_ERR_INIT;

	ck_assert_int_eq(cc_vm_read_proc(root, "t", 100, 4242, &p, &err), 1);
	cc_vm_proc_fini(&p);
	ck_assert_int_eq(cc_vm_read_proc(root, "t", 100, 4243, &p, &err), 0);
	ck_assert_int_eq(cc_vm_read_proc(root, "t", 12345, 0, &p, &err), 0);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("vm_find");
	TCase *tc = tcase_create("vm_find");

	/* Built once, in the runner, before the forked tests read it. */
	tcase_add_unchecked_fixture(tc, build_tree, remove_tree);
	tcase_add_loop_test(tc, test_qemu_name, 0, sizeof(names) / sizeof(names[0]));
	tcase_add_loop_test(tc, test_vcpu_of_comm, 0, sizeof(comms) / sizeof(comms[0]));
	tcase_add_test(tc, test_find_by_name);
	tcase_add_test(tc, test_find_libvirt);
	tcase_add_test(tc, test_find_pidfile);
	tcase_add_test(tc, test_find_errors);
	tcase_add_test(tc, test_read_proc_start);
	tcase_add_test(tc, test_find_untrusted);
	suite_add_tcase(s, tc);
	return s;
}

CC_TEST_MAIN(suite)
