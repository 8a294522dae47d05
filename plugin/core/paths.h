/* corecarve: the node's fixed paths, in a header of their own so that a
 * module that needs only a path does not include the module behind it
 * (the topology cache keeps its file in the state directory; the VM list
 * reads the policy file's `vms:` section).
 *
 * The state directory holds the ledger (ledger.h), its lock and the
 * topology cache (topo_cache.h).  On tmpfs: what is recorded there dies
 * with a reboot, as the cgroups it describes do.  Entry points let --state
 * or $CORECARVE_STATE_DIR name another, and --policy another policy. */
#ifndef CC_PATHS_H
#define CC_PATHS_H

#define CC_LEDGER_DIR "/run/corecarve"
#define CC_POLICY_PATH "/etc/corecarve/policy.yaml"

#endif
