/* corecarve: a strict, small YAML loader for configuration.
 *
 * Built on libyaml's event API (never its document loader, which expands
 * aliases): the events become an owned tree of mappings, sequences and
 * scalars, each remembering where it was written.  Policy and annotations
 * are operator input read by a privileged hook, so the loader refuses what
 * a configuration never needs and an attacker could use: anchors and
 * aliases (the "billion laughs" expansion), nesting deeper than
 * CC_YAML_MAX_DEPTH, more than CC_YAML_MAX_NODES nodes, duplicate or
 * non-scalar keys, more than one document, non-standard tags, input that is
 * not UTF-8 and scalars holding NUL.  The caller bounds the input size.
 *
 * Errors read "<source>:<line>:<col>: <dotted.key.path>: <reason>"; with an
 * empty source (annotations: one short value, named by the caller's
 * prefix) node errors read "<path>: <reason>".
 */
#ifndef CC_YAML_TREE_H
#define CC_YAML_TREE_H

#include <stdbool.h>
#include <stddef.h>

#include "error.h"

#define CC_YAML_MAX_DEPTH 16
#define CC_YAML_MAX_NODES 10000

enum cc_ytype { CC_YSCALAR, CC_YMAPPING, CC_YSEQUENCE };

struct cc_ydoc;

struct cc_ynode {
	enum cc_ytype type;
	const struct cc_ydoc *doc;
	const struct cc_ynode *parent; /* NULL for the root */
	int line, col;                 /* 1-based position of the value */
	/* Mapping entries: the key and its position; NULL otherwise. */
	char *key;
	int key_line, key_col;
	int index; /* sequence items: position from 0; -1 otherwise */
	/* Scalars: NUL-terminated text (never holds a NUL itself). */
	char *text;
	size_t len;
	/* Plain style without a string tag: YAML would resolve it as a number,
	 * boolean or null where it looks like one.  Quoted and block scalars,
	 * and "!!str"/"!" tagged ones, are strings. */
	bool plain;
	/* Collections: children in document order. */
	struct cc_ynode *first, *last, *next;
	int n;
};

struct cc_ydoc {
	char source[256]; /* "" when errors carry no location */
	struct cc_ynode *root; /* NULL when the stream holds no document */
	int nnodes;
};

/* Parse `len` bytes of `text`.  `source` names the input in errors (a file
 * path, "embedded default"); NULL or "" leaves locations out of node errors
 * (syntax errors then say "line L column C").  An empty stream gives a
 * document with root NULL: callers decide whether that is an error. */
struct cc_ydoc *cc_yaml_parse(const char *text, size_t len, const char *source,
			      struct cc_err *err);
void cc_ydoc_free(struct cc_ydoc *doc);
void cc_ydoc_freep(struct cc_ydoc **doc);
#define _cleanup_ydoc_ __attribute__((cleanup(cc_ydoc_freep)))

/* "<source>:<line>:<col>: <path>" for a node (its key's position for a
 * mapping entry); "<path>" without a source; "<source>:<line>:<col>" for
 * the root.  Use as the `what` of helpers that name a field themselves,
 * e.g. cc_cpulist_parse(). */
void cc_ynode_where(const struct cc_ynode *n, char *buf, size_t size);

/* Set an error about `n`: "<where>: <reason>".  Returns -1. */
int cc_ynode_err(const struct cc_ynode *n, struct cc_err *err, int code,
		 const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* "a mapping", "a sequence", "an empty value", or the quoted scalar text
 * (escaped, shortened), as the "got ..." of a message. */
void cc_ynode_describe(const struct cc_ynode *n, char *buf, size_t size);

/* The child of mapping `map` under `key`, or NULL. */
const struct cc_ynode *cc_ynode_get(const struct cc_ynode *map, const char *key);

/* Error unless `n` is a mapping: "expected a mapping, got ...". */
int cc_ynode_mapping(const struct cc_ynode *n, struct cc_err *err);

/* Error naming the first key of `map` not in the NULL-terminated `allowed`
 * list: "<path>.<key>: unknown key (expected one of a, b, c)". */
int cc_ynode_check_keys(const struct cc_ynode *map, const char *const *allowed,
			struct cc_err *err);

/* Error for a required key absent from `map`: "<path>.<key>: missing". */
int cc_ynode_missing(const struct cc_ynode *map, const char *key,
		     struct cc_err *err);

/* Typed readers.  Each fails with an error naming the node and the reason.
 *
 * cc_ynode_string: any scalar except a plain null ("", "~", "null"). The
 *   result is borrowed from the tree.
 * cc_ynode_strcpy: the same, copied into buf; longer than size-1 bytes is an
 *   error.
 * cc_ynode_bool: plain `true` or `false` only (not yes/no/on/off/"true").
 * cc_ynode_uint: plain decimal digits, no sign, no leading zero, within
 *   [min, max] ("expected an integer, got \"4.5\"", "expected an integer >=
 *   1, got \"0\"").
 * cc_ynode_enum: a string from the NULL-name-terminated table ("expected
 *   isolate or full, got \"half\""). */
int cc_ynode_string(const struct cc_ynode *n, const char **out, struct cc_err *err);
int cc_ynode_strcpy(const struct cc_ynode *n, char *buf, size_t size,
		    struct cc_err *err);
int cc_ynode_bool(const struct cc_ynode *n, bool *out, struct cc_err *err);
int cc_ynode_uint(const struct cc_ynode *n, long long min, long long max,
		  long long *out, struct cc_err *err);

struct cc_yenum {
	const char *name;
	int value;
};
int cc_ynode_enum(const struct cc_ynode *n, const struct cc_yenum *table,
		  int *out, struct cc_err *err);

/* Name of `value` in `table`, or "?". */
const char *cc_yenum_name(const struct cc_yenum *table, int value);

#endif
