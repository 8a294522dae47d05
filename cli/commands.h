/* corecarve CLI: one function per subcommand, each in cli/cmd_<name>.c.
 * They parse their own options, print results on stdout, print an error
 * once as "corecarve: <message>" on stderr, and return the exit status:
 * 0 success, 1 refusal/findings, 2 bad input or could not run. */
#ifndef CC_COMMANDS_H
#define CC_COMMANDS_H

#include <stdbool.h>

#include "error.h"
#include "ledger.h"
#include "opts.h"
#include "policy.h"
#include "root.h"
#include "topo.h"

#define CC_EXIT_OK 0
#define CC_EXIT_REFUSED 1
#define CC_EXIT_ERROR 2

/* Options shared by the commands that look at a topology. */
struct cc_cli_common {
	const char *root;      /* --root DIR */
	const char *xml;       /* --hwloc-xml FILE */
	const char *synthetic; /* --synthetic DESC (hwloc synthetic topology) */
	const char *policy;    /* --policy FILE (else $CORECARVE_POLICY, else /etc/corecarve/policy.yaml) */
	bool json;
	bool caller_view;      /* "allowed" = the caller's cpuset/affinity (topology) */
};

/* The options many commands share, for their tables (opts.h): ids above
 * any a command gives its own. */
enum {
	CC_CLI_OPT_HELP = 1000,
	CC_CLI_OPT_ROOT,
	CC_CLI_OPT_XML,
	CC_CLI_OPT_SYNTHETIC,
	CC_CLI_OPT_POLICY,
	CC_CLI_OPT_JSON,
	CC_CLI_OPT_OUTPUT,
	CC_CLI_OPT_NO_HEADERS,
	CC_CLI_OPT_RAW,
	CC_CLI_OPT_WIDTH,
};
/* Accepted only to be refused with the reason (audit --synthetic: "describe
 * no kernel to audit; use --root"): not in --help nor in the completion. */
#define CC_CLI_REFUSED 0x100u

#define CC_CLI_OPTS_HELP { "--help", "-h", NULL, CC_CLI_OPT_HELP, 0, NULL }
/* Where the topology comes from, and the policy; `xml`: the flags of
 * --hwloc-xml and --synthetic (CC_CLI_REFUSED where they make no sense). */
#define CC_CLI_OPTS_SOURCE(xml, subs)                                          \
	{ "--root", NULL, "DIR", CC_CLI_OPT_ROOT, 0, subs },                    \
	{ "--hwloc-xml", NULL, "FILE", CC_CLI_OPT_XML, xml, subs },             \
	{ "--synthetic", NULL, "DESC", CC_CLI_OPT_SYNTHETIC, xml, subs },       \
	{ "--policy", NULL, "FILE", CC_CLI_OPT_POLICY, 0, subs }
#define CC_CLI_OPTS_JSON(flags, subs) { "--json", NULL, NULL, CC_CLI_OPT_JSON, flags, subs }
/* The table options (table.h, cc_table_set). */
#define CC_CLI_OPTS_TABLE(subs)                                                \
	{ "--output", "-o", "LIST", CC_CLI_OPT_OUTPUT, 0, subs },               \
	{ "--no-headers", "-n", NULL, CC_CLI_OPT_NO_HEADERS, 0, subs },         \
	{ "--raw", "-r", NULL, CC_CLI_OPT_RAW, 0, subs },                       \
	{ "--width", NULL, "N", CC_CLI_OPT_WIDTH, 0, subs }

/* A common option cc_opts_next returned, into `c`: 1 when `id` is one,
 * 0 when not. */
int cc_cli_common_set(struct cc_cli_common *c, int id, const char *val);

/* One command: its name, its function, its line in `corecarve --help`, its
 * options (ended by a NULL name) and its subcommands (space-separated, or
 * NULL), for main.c and test_options. */
struct cc_cli_command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
	const struct cc_opt *opts;
	const char *subs;
};
extern const struct cc_cli_command cc_cli_commands[];
extern const int cc_cli_ncommands;

/* Resolve the policy path: --policy, then $CORECARVE_POLICY, else NULL. */
const char *cc_cli_policy_path(const struct cc_cli_common *c);

/* Load root, policy and topology the common options describe. */
int cc_cli_load(const struct cc_cli_common *c, struct cc_root **root,
		struct cc_policy **policy, struct cc_topo **topo, struct cc_err *err);

/* The state directory (ledger) a command uses: `opt` (--state), else
 * $CORECARVE_STATE_DIR, else with --root DIR a captured tree's
 * DIR/run/corecarve (`corecarve capture` writes it there; none when the
 * tree has none), else NULL: CC_LEDGER_DIR, which may be absent (no carve
 * since boot).  A directory --state or the variable names must exist: a
 * misspelt one would read as a node with no carves.  *dir points into
 * `buf` or the arguments.  -1 with err naming the option and the fix. */
int cc_cli_state_dir(const char *opt, const char *root, char *buf, size_t len, const char **dir,
		     struct cc_err *err);

/* cc_ledger_open_as with the fix in the error: run as root for a ledger
 * this user may not read, `corecarve status --kernel` and the recovery
 * steps for a damaged one.  `lock`: the command's (cc_cli_lock). */
struct cc_ledger *cc_cli_ledger_open(const char *dir, enum cc_ledger_mode mode, const struct cc_ledger_lock *lock,
				     struct cc_err *err);
/* The same fix appended to an error cc_ledger_open_as set. */
void cc_cli_ledger_hint(struct cc_err *err);

/* The fault-injection step of $CORECARVE_FAULT in a test build (make's
 * $(BUILD)/faults/corecarve, -DCC_FAULT_INJECTION), NULL in the installed
 * binary, which ignores the variable (cli/fault_env.c). */
const char *cc_cli_fault(void);
bool cc_cli_fault_built(void);

/* The ledger lock as a command takes it: the wait from
 * $CORECARVE_LOCK_TIMEOUT (seconds, "5" or "0.5"; unset or empty:
 * CC_LEDGER_WAIT_MS), and "corecarve <its arguments>" as the holder a
 * waiter is told of (the hook puts its stage and container id there).
 * `lock.holder` points into `holder`: pass `lock` by address, never copy
 * the struct.  -1 on a malformed variable, err naming it. */
struct cc_cli_lock {
	struct cc_ledger_lock lock;
	char holder[256];
	char refused[CC_ERR_MSG_MAX];
};
int cc_cli_lock(struct cc_cli_lock *l, int argc, char **argv, struct cc_err *err);
/* The same, for the hook: a malformed variable is not an error here but
 * the lock's (lock.refused), reported only if the lock is taken. */
void cc_cli_lock_deferred(struct cc_cli_lock *l, int argc, char **argv);

/* Print "corecarve: <msg>" once; returns CC_EXIT_ERROR. */
int cc_cli_fail(const struct cc_err *err);

/* --svg FILE (cli/svg_out.c): write the picture to FILE ("-": stdout)
 * through a temporary file, so a failure leaves no half picture. */
struct cc_svg_view;
struct cc_interrupts;
int cc_cli_write_svg(const char *path, const struct cc_topo *t, const struct cc_svg_view *view,
		     struct cc_err *err);
/* Interrupt load for the picture: 1 with *irqs filled (the host, or a
 * captured tree with /proc/interrupts), 0 with `note` saying why not. */
int cc_cli_svg_irqs(const struct cc_cli_common *c, const struct cc_root *root,
		    struct cc_interrupts *irqs, char *note, size_t notelen);

/* Each command's options (cli/cmd_<name>.c; the hook's in hooks/hook.c). */
extern const struct cc_opt cc_opts_topology[], cc_opts_hook[], cc_opts_init_parent[], cc_opts_plan[],
	cc_opts_status[], cc_opts_audit[], cc_opts_exec[], cc_opts_irq[], cc_opts_vm[], cc_opts_doctor[],
	cc_opts_capture[], cc_opts_device_plugin[], cc_opts_policy[], cc_opts_calibrate[];

int cc_cmd_topology(int argc, char **argv);
int cc_cmd_hook(int argc, char **argv);
int cc_cmd_device_plugin(int argc, char **argv);
int cc_cmd_init_parent(int argc, char **argv);
int cc_cmd_status(int argc, char **argv);
int cc_cmd_plan(int argc, char **argv);
int cc_cmd_audit(int argc, char **argv);
int cc_cmd_exec(int argc, char **argv);
int cc_cmd_irq(int argc, char **argv);
int cc_cmd_vm(int argc, char **argv);
int cc_cmd_doctor(int argc, char **argv);
int cc_cmd_capture(int argc, char **argv);
int cc_cmd_calibrate(int argc, char **argv);
int cc_cmd_policy(int argc, char **argv);
/* plan --explain (cli/cmd_calibrate.c): what the carve avoids, in the
 * node's baseline numbers, printed after the plan. */
int cc_cli_plan_explain(const struct cc_cli_common *c, const struct cc_root *root, const struct cc_topo *t,
			hwloc_const_bitmap_t cpus, hwloc_const_bitmap_t parked);

#endif
