/* A test double of cgroup v2's cpuset and cpu files over a temp tree, for
 * the unit tests of corecarve's own logic (every order of create and
 * release, outside writes, injected write failures).  It models what the
 * real kernels were seen to do in the e2e guest (docs/design.md,
 * tests/e2e/scenarios/01-kernel-facts.sh, ../shared/notes):
 *
 *   - an empty cpuset.cpus inherits: effective = the parent's effective;
 *     otherwise own ∩ the parent's effective, the parent's when that is
 *     empty;
 *   - a partition (root/isolated) is valid when its parent is the root or
 *     a valid partition (local) or, on kernels with cpuset.cpus.exclusive,
 *     when every ancestor's exclusive set covers its own (remote); its CPUs
 *     leave the parent's effective set (the root's, for a remote one), and
 *     a later partition that claims CPUs of an earlier one is invalid;
 *   - 6.1: no cpuset.cpus.exclusive; an empty cpuset.cpus or cpuset.mems
 *     on a populated cgroup is refused with ENOSPC; a cpuset.cpus overlapping a sibling
 *     partition is refused with EINVAL;
 *   - 6.12: a sibling's cpuset.cpus overlapping a partition makes it
 *     "root invalid";
 *   - 7.x: that sibling loses the conflicting CPUs instead, the partition
 *     stays valid; a later partition claiming an earlier one's CPUs gets
 *     what is left;
 *   - cpu.max is per cgroup, normalised to "<quota|max> <period>".
 *
 * The kernel half of corecarve writes through fakecg_ops (cc_cg_use);
 * everything reads the files through the root, as on a host. */
#ifndef CC_FAKECG_H
#define CC_FAKECG_H

#include <stdbool.h>

#include "cgroup.h"

enum fakecg_kernel { FAKECG_6_1, FAKECG_6_12, FAKECG_7 };

struct fakecg;

extern const struct cc_cg_ops fakecg_ops;

/* A cgroup2 mount at <rootdir>/sys/fs/cgroup with `cpus` and `mems`
 * ("0-15", "0-1") at the root; NULL on failure (printed). */
struct fakecg *fakecg_new(const char *rootdir, enum fakecg_kernel k, const char *cpus, const char *mems);
void fakecg_free(struct fakecg *f);

/* What a runtime, the kubelet or an operator does: make a cgroup (its
 * parent must exist), write a file, remove a cgroup.  0, or an errno. */
int fakecg_mkdir(struct fakecg *f, const char *cgroup, bool populated);
int fakecg_write(struct fakecg *f, const char *cgroup, const char *file, const char *value);
int fakecg_rmdir(struct fakecg *f, const char *cgroup);
bool fakecg_exists(const struct fakecg *f, const char *cgroup);
/* A kernel that grants less than it is asked: `cgroup`'s effective set
 * never holds `cpus` (whatever made it so: the read-back is what counts). */
int fakecg_withhold(struct fakecg *f, const char *cgroup, const char *cpus);
/* The cgroup's tasks exit (it reads "populated 0"). */
void fakecg_exit(struct fakecg *f, const char *cgroup);

/* The value of a file as corecarve reads it ("" when absent); one of 8
 * static buffers used in turn. */
const char *fakecg_get(const struct fakecg *f, const char *cgroup, const char *file);

/* Failure injection: the `nth` write through fakecg_ops from now (1 is
 * the next one) fails with `code`; 0 turns it off.  fakecg_writes counts
 * the writes made through fakecg_ops. */
void fakecg_fail_write(struct fakecg *f, int nth, int code);
int fakecg_writes(const struct fakecg *f);
/* A peer that exits mid-carve: at the next write through fakecg_ops to
 * `cgroup`, its tasks exit and it is removed, and that write fails with
 * `code` (ENOENT, or ENODEV as Linux answers while it removes one). */
void fakecg_vanish(struct fakecg *f, const char *cgroup, int code);

/* Every cgroup path, one per line (for messages). */
const char *fakecg_dump(const struct fakecg *f);

#endif
