/* corecarve: living with irqbalance.
 *
 * irqbalance moves IRQs every 10 s and would put them back on carved CPUs.
 * Distributions configure its banned CPUs in an environment file
 * (/etc/default/irqbalance on Debian and Ubuntu, /etc/sysconfig/irqbalance
 * on Fedora, RHEL and SUSE).  While steer-away carves exist, corecarve
 * keeps IRQBALANCE_BANNED_CPULIST (irqbalance >= 1.8) and the older
 * IRQBALANCE_BANNED_CPUS mask (every version; 1.8 and 1.9 still let it win
 * when set) at the operator's own banned set plus the carves, and puts the
 * operator's lines back byte for byte when the last carve goes.
 *
 * irqbalance reads that file only when it starts (systemd's
 * EnvironmentFile): SIGHUP makes it rescan topology and IRQs but re-reads
 * getenv(), the environment it was started with.  So a running daemon is
 * told over its control socket, /run/irqbalance/irqbalance<pid>.sock
 * ("settings cpus <list>", what irqbalance-ui sends; root only), which
 * takes effect at its next rescan; without a socket it is restarted with
 * `systemctl --no-block try-restart -- irqbalance.service`.  See docs/irq.md.
 */
#ifndef CC_IRQBALANCE_H
#define CC_IRQBALANCE_H

#include <hwloc.h>
#include <stdbool.h>
#include <sys/types.h>

#include "error.h"
#include "root.h"

#define CC_IRQBALANCE_SOCKET_DIR "/run/irqbalance"
#define CC_IRQBALANCE_FILE_MAX (64u << 10)
#define CC_IRQBALANCE_LIST "IRQBALANCE_BANNED_CPULIST"
#define CC_IRQBALANCE_MASK "IRQBALANCE_BANNED_CPUS"

/* Environment files, in the order they are looked for; NULL-terminated. */
extern const char *const cc_irqbalance_files[];

/* What corecarve keeps in the ledger while it manages the file. */
struct cc_irqbalance_rec {
	bool active;           /* corecarve wrote the file and will restore it */
	char file[64];         /* which of cc_irqbalance_files */
	char *cpulist;         /* the operator's raw IRQBALANCE_BANNED_CPULIST value, NULL: absent */
	char *cpus;            /* the operator's raw IRQBALANCE_BANNED_CPUS value, NULL: absent */
	hwloc_bitmap_t banned; /* what corecarve wrote last */
	hwloc_bitmap_t pending; /* journal only: what it is about to write (NULL: nothing);
				 * the file holds `banned` or this one */
};

void cc_irqbalance_rec_init(struct cc_irqbalance_rec *r);
void cc_irqbalance_rec_fini(struct cc_irqbalance_rec *r);
int cc_irqbalance_rec_copy(struct cc_irqbalance_rec *dst, const struct cc_irqbalance_rec *src);

/* ---- environment files (pure) ------------------------------------------ */

/* The raw value of the last `VAR=...` (or `export VAR=...`) line, NULL
 * when there is none; *value (may be NULL) gets it without its quotes. */
int cc_env_get(const char *text, const char *var, char **raw, char **value, struct cc_err *err);
/* `text` with every assignment of VAR given `raw` (NULL: those lines
 * removed), or one appended when there is none.  Other lines, comments
 * included, are kept byte for byte. */
char *cc_env_set(const char *text, const char *var, const char *raw, struct cc_err *err);

/* The operator's banned CPUs: IRQBALANCE_BANNED_CPUS when non-empty (it
 * wins in every version), else IRQBALANCE_BANNED_CPULIST, else `auto`
 * (what irqbalance bans by itself: isolated and nohz_full CPUs).  Errors
 * name the file and the variable. */
int cc_irqbalance_base(const struct cc_irqbalance_rec *rec, hwloc_const_bitmap_t autoban,
		       hwloc_bitmap_t out, struct cc_err *err);

/* ---- the file and the daemon (I/O) --------------------------------------- */

struct cc_irqbalance_pending {
	char file[64];       /* "" when no environment file exists: nothing to do */
	char *new_text;      /* the file's next text; NULL: unchanged */
	bool read_only;      /* new_text, but the file is on a read-only mount */
	struct cc_irqbalance_rec next;
	bool tell;           /* a running daemon must hear of it */
	hwloc_bitmap_t list; /* what to tell it; empty: drop its override */
};

/* Decide (pure): with `avoid` not empty, banned = the operator's set (see
 * cc_irqbalance_base) + avoid, recording the operator's values in p->next
 * the first time; with `avoid` empty, the operator's lines back and the
 * record ends.  A value changed by hand since corecarve wrote it becomes
 * the operator's.  `text` is the file now, `autoban` the CPUs irqbalance
 * bans by itself (isolated, nohz_full).  p->file must be set. */
int cc_irqbalance_render(const char *text, const struct cc_irqbalance_rec *rec, hwloc_const_bitmap_t avoid,
			 hwloc_const_bitmap_t autoban, struct cc_irqbalance_pending *p, struct cc_err *err);

/* Find and read the file, read `autoban` from sysfs and render, writing
 * nothing (so its errors come before any IRQ moves).  A file to change
 * whose directory or itself is mounted read-only (statvfs ST_RDONLY: /etc
 * on Fedora CoreOS-style, Talos and Bottlerocket hosts) sets p->read_only:
 * not an error, the IRQs are steered all the same and the caller warns
 * (cc_irqbalance_read_only). */
int cc_irqbalance_prepare(const struct cc_root *root, const struct cc_irqbalance_rec *rec,
			  hwloc_const_bitmap_t avoid, struct cc_irqbalance_pending *p, struct cc_err *err);
void cc_irqbalance_pending_fini(struct cc_irqbalance_pending *p);

struct cc_irqbalance_result {
	bool file_written;
	char file[64];
	pid_t pid;           /* a running irqbalance, 0 when none was found */
	char action[160];    /* what was done to tell it, "" for nothing */
	char warning[512];   /* set when it could not be told, or the file not written */
	bool read_only;      /* the file is on a read-only mount: left as it was */
};

/* The file of `p` cannot be written (read-only mount): res->read_only and
 * a warning naming the file, the CPUs irqbalance is then not told about
 * and the fixes. */
void cc_irqbalance_read_only(const struct cc_irqbalance_pending *p, struct cc_irqbalance_result *res);

/* Replace the file atomically (temp file, fsync, rename) when its text
 * changes.  -1 with err: the file is as it was.  A read-only mount (seen
 * by prepare, or EROFS now) is 0 with res->read_only and res->warning set
 * (cc_irqbalance_read_only) and nothing written. */
int cc_irqbalance_write(const struct cc_root *root, const struct cc_irqbalance_pending *p,
			struct cc_irqbalance_result *res, struct cc_err *err);
/* Before a tool loads its seccomp filter (sandbox.h: no execve): fork the
 * helper that alone runs `systemctl --no-block try-restart --
 * irqbalance.service` for cc_irqbalance_notify() (systemctl.h).  0, or -1. */
int cc_irqbalance_restart_helper(struct cc_err *err);

/* Tell a running daemon (host only): over its socket, else by restarting
 * irqbalance.service.  Without `talk` (the sandboxed hook, which may open
 * no socket and start no process) the daemon is only looked for: the
 * corecarve-irqbalance.path unit tells it (`corecarve irq notify`), and a
 * warning says so when that unit is not enabled.  Never fails:
 * res->warning says what could not be done. */
void cc_irqbalance_notify(const struct cc_root *root, const struct cc_irqbalance_pending *p, bool talk,
			  struct cc_irqbalance_result *res);

/* What a daemon should ban now, from the record or, when corecarve
 * manages nothing, the operator's own values in the file (empty: drop any
 * override), as a pending notification for cc_irqbalance_notify().
 * p->file is "" when there is no environment file. */
int cc_irqbalance_current(const struct cc_root *root, const struct cc_irqbalance_rec *rec,
			  struct cc_irqbalance_pending *p, struct cc_err *err);

/* The message for the control socket: "settings cpus <list>", or
 * "settings cpus NULL" to drop the override.  NULL when too long for
 * irqbalance's 500-byte buffer.  Caller frees. */
char *cc_irqbalance_message(hwloc_const_bitmap_t tell);

#endif
