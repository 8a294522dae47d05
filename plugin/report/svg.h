/* corecarve: the host as a picture (SVG), for a person and for a ticket.
 *
 * Packages, NUMA nodes, last-level caches and shared-L2 clusters are
 * nested boxes; every core is a box of its CPUs.  A CPU is filled with its
 * core class's colour; the view adds who owns it (a carve running there, a
 * parked sibling held idle, a CPU reserved for the host) and how many
 * interrupts it has served.  Like the text map (topo_map.c) it only reads
 * the model, so `topology` and `status` share it. */
#ifndef CC_SVG_H
#define CC_SVG_H

#include <stdio.h>

#include "error.h"
#include "interrupts.h"
#include "topo.h"

enum cc_svg_role {
	CC_SVG_FREE = 0,
	CC_SVG_RESERVED, /* kept for the host by the policy */
	CC_SVG_RUN,      /* a carve runs here */
	CC_SVG_PARKED,   /* an SMT sibling held idle for a carve */
};

struct cc_svg_view {
	const char *title;              /* heading; NULL: "host: <source>" */
	/* Indexed like topo->pus; NULL arrays mean "not known". */
	const enum cc_svg_role *roles;
	const char *const *owners;      /* carve id owning the CPU, or NULL */
	const struct cc_interrupts *irqs; /* NULL or ncpus 0: not shown */
	const char *note;               /* one more line under the legend, or NULL */
};

/* Write a standalone SVG 1.1 document.  Returns 0, or -1 with err set
 * (ENOMEM, or EIO when `out` fails). */
int cc_svg_write(FILE *out, const struct cc_topo *t, const struct cc_svg_view *view,
		 struct cc_err *err);

#endif
