#define _GNU_SOURCE
#include "yaml_tree.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "cleanup.h"

#define TAG_PREFIX "tag:yaml.org,2002:"
/* Longest scalar or key quoted in a message before it is shortened. */
#define QUOTE_MAX 48
#define KEY_MAX 64

#define _cleanup_(f) __attribute__((cleanup(f)))

/* ---- bounded string building, for messages ---- */

struct sbuf {
	char *buf;
	size_t size, len;
};

static void sb_putc(struct sbuf *sb, char c)
{
	if (sb->len + 1 < sb->size)
		sb->buf[sb->len++] = c;
	sb->buf[sb->len < sb->size ? sb->len : sb->size - 1] = '\0';
}

static void sb_puts(struct sbuf *sb, const char *s)
{
	while (*s)
		sb_putc(sb, *s++);
}

static void __attribute__((format(printf, 2, 3))) sb_printf(struct sbuf *sb, const char *fmt, ...)
{
	char tmp[CC_ERR_MSG_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	sb_puts(sb, tmp);
}

/* Text from the input, shown safely: control bytes escaped, cut after `max`
 * bytes on a UTF-8 character boundary. */
static void sb_escaped(struct sbuf *sb, const char *s, size_t len, size_t max)
{
	size_t i, end = len;

	if (end > max) {
		end = max;
		while (end > 0 && ((unsigned char)s[end] & 0xc0) == 0x80)
			end--;
	}
	for (i = 0; i < end; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '"' || c == '\\') {
			sb_putc(sb, '\\');
			sb_putc(sb, (char)c);
		} else if (c < 0x20 || c == 0x7f) {
			sb_printf(sb, "\\x%02x", c);
		} else {
			sb_putc(sb, (char)c);
		}
	}
	if (end < len)
		sb_puts(sb, "...");
}

static void sb_quoted(struct sbuf *sb, const char *s, size_t len)
{
	sb_putc(sb, '"');
	sb_escaped(sb, s, len, QUOTE_MAX);
	sb_putc(sb, '"');
}

/* ---- locations and paths ---- */

static void sb_path(struct sbuf *sb, const struct cc_ynode *parent, const char *key,
		    int index)
{
	if (parent)
		sb_path(sb, parent->parent, parent->key, parent->index);
	if (key) {
		if (sb->len > 0)
			sb_putc(sb, '.');
		sb_escaped(sb, key, strlen(key), KEY_MAX);
	} else if (index >= 0) {
		sb_printf(sb, "[%d]", index);
	}
}

/* The location prefix of something at line:col, under `parent`, named by
 * `key` (a mapping entry) or `index` (a sequence item). */
static void sb_where(struct sbuf *sb, const struct cc_ydoc *doc, int line, int col,
		     const struct cc_ynode *parent, const char *key, int index)
{
	char path[CC_ERR_MSG_MAX / 2];
	struct sbuf ps = { path, sizeof(path), 0 };

	path[0] = '\0';
	sb_path(&ps, parent, key, index);
	if (doc->source[0])
		sb_printf(sb, "%s:%d:%d%s", doc->source, line, col, path[0] ? ": " : "");
	sb_puts(sb, path);
}

static void node_where(struct sbuf *sb, const struct cc_ynode *n)
{
	if (n->key)
		sb_where(sb, n->doc, n->key_line, n->key_col, n->parent, n->key, -1);
	else
		sb_where(sb, n->doc, n->line, n->col, n->parent, NULL, n->index);
}

static int __attribute__((format(printf, 9, 0)))
verr_at(struct cc_err *err, int code, const struct cc_ydoc *doc, int line, int col,
	const struct cc_ynode *parent, const char *key, int index, const char *fmt,
	va_list ap)
{
	char where[CC_ERR_MSG_MAX], reason[CC_ERR_MSG_MAX];
	struct sbuf sb = { where, sizeof(where), 0 };

	where[0] = '\0';
	sb_where(&sb, doc, line, col, parent, key, index);
	vsnprintf(reason, sizeof(reason), fmt, ap);
	return cc_err_set(err, code, "%s%s%s", where, where[0] ? ": " : "", reason);
}

static int __attribute__((format(printf, 9, 10)))
err_at(struct cc_err *err, int code, const struct cc_ydoc *doc, int line, int col,
       const struct cc_ynode *parent, const char *key, int index, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	verr_at(err, code, doc, line, col, parent, key, index, fmt, ap);
	va_end(ap);
	return -1;
}

void cc_ynode_where(const struct cc_ynode *n, char *buf, size_t size)
{
	struct sbuf sb = { buf, size, 0 };

	if (!size)
		return;
	buf[0] = '\0';
	node_where(&sb, n);
}

int cc_ynode_err(const struct cc_ynode *n, struct cc_err *err, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (n->key)
		verr_at(err, code, n->doc, n->key_line, n->key_col, n->parent, n->key, -1, fmt, ap);
	else
		verr_at(err, code, n->doc, n->line, n->col, n->parent, NULL, n->index, fmt, ap);
	va_end(ap);
	return -1;
}

static bool is_null_word(const char *s)
{
	return !*s || !strcmp(s, "~") || !strcmp(s, "null") || !strcmp(s, "Null") ||
	       !strcmp(s, "NULL");
}

void cc_ynode_describe(const struct cc_ynode *n, char *buf, size_t size)
{
	struct sbuf sb = { buf, size, 0 };

	if (!size)
		return;
	buf[0] = '\0';
	if (n->type == CC_YMAPPING)
		sb_puts(&sb, "a mapping");
	else if (n->type == CC_YSEQUENCE)
		sb_puts(&sb, "a sequence");
	else if (n->plain && !n->len)
		sb_puts(&sb, "an empty value");
	else if (n->plain && is_null_word(n->text))
		sb_puts(&sb, "null");
	else
		sb_quoted(&sb, n->text, n->len);
}

/* ---- the tree ---- */

static void node_free(struct cc_ynode *n)
{
	while (n) {
		struct cc_ynode *next = n->next;

		node_free(n->first);
		free(n->key);
		free(n->text);
		free(n);
		n = next;
	}
}

void cc_ydoc_free(struct cc_ydoc *doc)
{
	if (!doc)
		return;
	node_free(doc->root);
	free(doc);
}

void cc_ydoc_freep(struct cc_ydoc **doc)
{
	cc_ydoc_free(*doc);
}

struct frame {
	struct cc_ynode *node; /* the collection being filled */
	char *key;             /* mapping: the key waiting for its value */
	int key_line, key_col;
};

struct builder {
	struct cc_ydoc *doc;
	const char *text;
	size_t len;
	struct frame stack[CC_YAML_MAX_DEPTH];
	int depth;
	int ndocs;
};

static void yaml_parser_deletep(yaml_parser_t **p)
{
	if (*p)
		yaml_parser_delete(*p);
}

static void yaml_event_deletep(yaml_event_t **e)
{
	if (*e)
		yaml_event_delete(*e);
}

/* Tags a configuration may carry: the YAML core schema's, and "!" (the
 * non-specific tag, "a string").  Anything else asks for a type this
 * loader does not have. */
static const char *const allowed_tags[] = { "str", "int", "bool", "null", "float", "map", "seq", NULL };

static int check_tag(const char *tag, enum cc_ytype type, bool *is_str, const char **why)
{
	const char *t;

	*is_str = false;
	if (!tag)
		return 0;
	if (!strcmp(tag, "!")) {
		*is_str = type == CC_YSCALAR;
		return 0;
	}
	if (strncmp(tag, TAG_PREFIX, strlen(TAG_PREFIX)) != 0) {
		*why = "is not allowed (only the standard !!str, !!int, !!bool, !!null, !!float, !!map and !!seq)";
		return -1;
	}
	t = tag + strlen(TAG_PREFIX);
	for (size_t i = 0; allowed_tags[i]; i++) {
		if (strcmp(t, allowed_tags[i]) != 0)
			continue;
		if ((type == CC_YMAPPING) != !strcmp(t, "map") ||
		    (type == CC_YSEQUENCE) != !strcmp(t, "seq")) {
			*why = "does not fit the node it is on";
			return -1;
		}
		*is_str = !strcmp(t, "str");
		return 0;
	}
	*why = "is not allowed (only the standard !!str, !!int, !!bool, !!null, !!float, !!map and !!seq)";
	return -1;
}

static void sb_tag(struct sbuf *sb, const char *tag)
{
	if (!strncmp(tag, TAG_PREFIX, strlen(TAG_PREFIX))) {
		sb_puts(sb, "!!");
		tag += strlen(TAG_PREFIX);
	}
	sb_escaped(sb, tag, strlen(tag), KEY_MAX);
}

/* The node type a scalar, mapping-start or sequence-start event opens,
 * and the anchor and tag it carries (NULL: none). */
static enum cc_ytype event_kind(const yaml_event_t *ev, const char **anchor, const char **tag)
{
	switch (ev->type) {
	case YAML_SCALAR_EVENT:
		*anchor = (const char *)ev->data.scalar.anchor;
		*tag = (const char *)ev->data.scalar.tag;
		return CC_YSCALAR;
	case YAML_MAPPING_START_EVENT:
		*anchor = (const char *)ev->data.mapping_start.anchor;
		*tag = (const char *)ev->data.mapping_start.tag;
		return CC_YMAPPING;
	default:
		*anchor = (const char *)ev->data.sequence_start.anchor;
		*tag = (const char *)ev->data.sequence_start.tag;
		return CC_YSEQUENCE;
	}
}

/* A mapping's key: held in `top` until its value comes, so the value's
 * node carries it.  Only a scalar, without NUL, not seen before in the
 * mapping. */
static int on_key(struct builder *b, struct frame *top, const yaml_event_t *ev, enum cc_ytype type, int line,
		  int col, struct cc_err *err)
{
	const struct cc_ynode *parent = top->node;
	const char *text = (const char *)ev->data.scalar.value;
	size_t len = ev->data.scalar.length;

	if (type != CC_YSCALAR)
		return err_at(err, EINVAL, b->doc, line, col, parent, NULL, -1, "mapping keys must be scalars, got a %s",
			      type == CC_YMAPPING ? "mapping" : "sequence");
	if (strlen(text) != len)
		return err_at(err, EINVAL, b->doc, line, col, parent, NULL, -1, "a key holds a NUL character");
	for (const struct cc_ynode *c = parent->first; c; c = c->next)
		if (!strcmp(c->key, text))
			return err_at(err, EINVAL, b->doc, line, col, parent, text, -1,
				      "duplicate key (first at line %d)", c->key_line);
	top->key = strdup(text);
	if (!top->key)
		return cc_err_sys(err, ENOMEM, "YAML key");
	top->key_line = line;
	top->key_col = col;
	return 0;
}

/* Hang the new node `n` in the tree: the document's root, or the last
 * child of the collection being filled (under the key it waited for, or
 * at the sequence's next index). */
static void link_node(struct builder *b, struct frame *top, struct cc_ynode *n)
{
	if (!top) {
		b->doc->root = n;
		return;
	}
	if (top->node->type == CC_YMAPPING) {
		n->key = cc_steal_ptr(top->key);
		n->key_line = top->key_line;
		n->key_col = top->key_col;
	} else {
		n->index = top->node->n;
	}
	if (top->node->last)
		top->node->last->next = n;
	else
		top->node->first = n;
	top->node->last = n;
	top->node->n++;
}

static int on_node(struct builder *b, const yaml_event_t *ev, struct cc_err *err)
{
	struct frame *top = b->depth ? &b->stack[b->depth - 1] : NULL;
	int line = (int)ev->start_mark.line + 1, col = (int)ev->start_mark.column + 1;
	bool is_key = top && top->node->type == CC_YMAPPING && !top->key;
	/* Where this event sits, for errors raised before it is a node. */
	const struct cc_ynode *parent = top ? top->node : NULL;
	const char *key = top && !is_key ? top->key : NULL;
	int index = top && top->node->type == CC_YSEQUENCE ? top->node->n : -1;
	const char *anchor = NULL, *tag = NULL, *why = NULL;
	enum cc_ytype type = event_kind(ev, &anchor, &tag);
	struct cc_ynode *n;
	bool is_str;

	if (b->doc->nnodes >= CC_YAML_MAX_NODES)
		return err_at(err, E2BIG, b->doc, line, col, parent, key, index,
			      "more than %d nodes", CC_YAML_MAX_NODES);
	b->doc->nnodes++;
	/* Anchors are refused where they are defined, not only where used:
	 * a configuration never needs them, and refusing early keeps an alias
	 * bomb from ever being built. */
	if (anchor)
		return err_at(err, EINVAL, b->doc, line, col, parent, key, index,
			      "anchors and aliases are not allowed (anchor &%.64s)", anchor);
	if (check_tag(tag, type, &is_str, &why) < 0) {
		char t[128];
		struct sbuf sb = { t, sizeof(t), 0 };

		t[0] = '\0';
		sb_tag(&sb, tag);
		return err_at(err, EINVAL, b->doc, line, col, parent, key, index, "tag %s %s", t, why);
	}
	if (is_key)
		return on_key(b, top, ev, type, line, col, err);

	n = calloc(1, sizeof(*n));
	if (!n)
		return cc_err_sys(err, ENOMEM, "YAML node");
	n->type = type;
	n->doc = b->doc;
	n->parent = parent;
	n->line = line;
	n->col = col;
	n->index = -1;
	link_node(b, top, n);

	if (type == CC_YSCALAR) {
		n->len = ev->data.scalar.length;
		n->text = strndup((const char *)ev->data.scalar.value, n->len);
		if (!n->text)
			return cc_err_sys(err, ENOMEM, "YAML scalar");
		/* "\0" in a double-quoted scalar: C strings would silently cut
		 * the value there. */
		if (strlen(n->text) != n->len)
			return cc_ynode_err(n, err, EINVAL, "a value holds a NUL character");
		n->plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE ? !is_str : (tag && !is_str);
		return 0;
	}
	if (b->depth >= CC_YAML_MAX_DEPTH)
		return cc_ynode_err(n, err, E2BIG, "nesting deeper than %d levels", CC_YAML_MAX_DEPTH);
	b->stack[b->depth].node = n;
	b->stack[b->depth].key = NULL;
	b->depth++;
	return 0;
}

/* Line and column (1-based, in characters) of a byte offset, for reader
 * errors, which libyaml reports by offset only. */
static void offset_mark(const char *text, size_t len, size_t off, int *line, int *col)
{
	*line = 1;
	*col = 1;
	for (size_t i = 0; i < off && i < len; i++) {
		unsigned char c = (unsigned char)text[i];

		if (c == '\n') {
			(*line)++;
			*col = 1;
		} else if ((c & 0xc0) != 0x80) {
			(*col)++;
		}
	}
}

static int parser_error(const yaml_parser_t *p, const struct builder *b, struct cc_err *err)
{
	char loc[300], detail[160] = "";
	const char *problem = p->problem ? p->problem : "invalid YAML";
	int line, col;

	if (p->error == YAML_MEMORY_ERROR)
		return cc_err_sys(err, ENOMEM, "%s%sYAML parser", b->doc->source,
				  b->doc->source[0] ? ": " : "");
	if (p->error == YAML_READER_ERROR) {
		offset_mark(b->text, b->len, p->problem_offset, &line, &col);
		if (p->problem_value != -1)
			snprintf(detail, sizeof(detail), " (byte 0x%02X)", (unsigned)p->problem_value & 0xffu);
		if (!strncmp(problem, "invalid", 7) || strstr(problem, "UTF-8"))
			snprintf(detail + strlen(detail), sizeof(detail) - strlen(detail),
				 ": the input must be UTF-8");
	} else {
		line = (int)p->problem_mark.line + 1;
		col = (int)p->problem_mark.column + 1;
		if (p->context)
			snprintf(detail, sizeof(detail), " (%s at line %d column %d)", p->context,
				 (int)p->context_mark.line + 1, (int)p->context_mark.column + 1);
	}
	if (b->doc->source[0])
		snprintf(loc, sizeof(loc), "%s:%d:%d", b->doc->source, line, col);
	else
		snprintf(loc, sizeof(loc), "line %d column %d", line, col);
	return cc_err_set(err, EINVAL, "%s: %s%s", loc, problem, detail);
}

static int build(yaml_parser_t *parser, struct builder *b, struct cc_err *err)
{
	for (;;) {
		yaml_event_t ev;
		_cleanup_(yaml_event_deletep) yaml_event_t *evp = NULL;
		int line, col;

		if (!yaml_parser_parse(parser, &ev))
			return parser_error(parser, b, err);
		evp = &ev;
		line = (int)ev.start_mark.line + 1;
		col = (int)ev.start_mark.column + 1;
		switch (ev.type) {
		case YAML_STREAM_END_EVENT:
			return 0;
		case YAML_DOCUMENT_START_EVENT:
			if (b->ndocs++ > 0)
				return err_at(err, EINVAL, b->doc, line, col, NULL, NULL, -1,
					      "multiple documents are not allowed");
			break;
		case YAML_ALIAS_EVENT: {
			const struct frame *top = b->depth ? &b->stack[b->depth - 1] : NULL;

			return err_at(err, EINVAL, b->doc, line, col, top ? top->node : NULL,
				      top ? top->key : NULL,
				      top && top->node->type == CC_YSEQUENCE ? top->node->n : -1,
				      "anchors and aliases are not allowed (alias *%.64s)",
				      (const char *)ev.data.alias.anchor);
		}
		case YAML_SCALAR_EVENT:
		case YAML_SEQUENCE_START_EVENT:
		case YAML_MAPPING_START_EVENT:
			if (on_node(b, &ev, err) < 0)
				return -1;
			break;
		case YAML_SEQUENCE_END_EVENT:
		case YAML_MAPPING_END_EVENT:
			b->depth--;
			free(b->stack[b->depth].key);
			b->stack[b->depth].key = NULL;
			break;
		default:
			break;
		}
	}
}

struct cc_ydoc *cc_yaml_parse(const char *text, size_t len, const char *source,
			      struct cc_err *err)
{
	yaml_parser_t parser;
	_cleanup_(yaml_parser_deletep) yaml_parser_t *pp = NULL;
	struct builder b = { 0 };
	int r;

	b.doc = calloc(1, sizeof(*b.doc));
	if (!b.doc) {
		cc_err_sys(err, ENOMEM, "YAML document");
		return NULL;
	}
	snprintf(b.doc->source, sizeof(b.doc->source), "%s", source ? source : "");
	b.text = text;
	b.len = len;
	if (!yaml_parser_initialize(&parser)) {
		cc_ydoc_free(b.doc);
		cc_err_sys(err, ENOMEM, "YAML parser");
		return NULL;
	}
	pp = &parser;
	/* libyaml would otherwise honour a UTF-16 byte order mark. */
	yaml_parser_set_encoding(&parser, YAML_UTF8_ENCODING);
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	r = build(&parser, &b, err);
	for (int i = 0; i < b.depth; i++)
		free(b.stack[i].key);
	if (r < 0) {
		cc_ydoc_free(b.doc);
		return NULL;
	}
	return b.doc;
}

/* ---- reading ---- */

const struct cc_ynode *cc_ynode_get(const struct cc_ynode *map, const char *key)
{
	if (!map || map->type != CC_YMAPPING)
		return NULL;
	for (const struct cc_ynode *c = map->first; c; c = c->next)
		if (!strcmp(c->key, key))
			return c;
	return NULL;
}

int cc_ynode_mapping(const struct cc_ynode *n, struct cc_err *err)
{
	char got[QUOTE_MAX + 16];

	if (n->type == CC_YMAPPING)
		return 0;
	cc_ynode_describe(n, got, sizeof(got));
	return cc_ynode_err(n, err, EINVAL, "expected a mapping, got %s", got);
}

int cc_ynode_check_keys(const struct cc_ynode *map, const char *const *allowed,
			struct cc_err *err)
{
	for (const struct cc_ynode *c = map->first; c; c = c->next) {
		char list[512];
		struct sbuf sb = { list, sizeof(list), 0 };
		size_t i;

		for (i = 0; allowed[i]; i++)
			if (!strcmp(c->key, allowed[i]))
				break;
		if (allowed[i])
			continue;
		list[0] = '\0';
		for (i = 0; allowed[i]; i++) {
			if (i)
				sb_puts(&sb, ", ");
			sb_puts(&sb, allowed[i]);
		}
		return cc_ynode_err(c, err, EINVAL, "unknown key (expected one of %s)", list);
	}
	return 0;
}

int cc_ynode_missing(const struct cc_ynode *map, const char *key, struct cc_err *err)
{
	int line = map->key ? map->key_line : map->line;
	int col = map->key ? map->key_col : map->col;

	return err_at(err, EINVAL, map->doc, line, col, map, key, -1, "required key is missing");
}

int cc_ynode_string(const struct cc_ynode *n, const char **out, struct cc_err *err)
{
	char got[QUOTE_MAX + 16];

	if (n->type == CC_YSCALAR && !(n->plain && is_null_word(n->text))) {
		*out = n->text;
		return 0;
	}
	cc_ynode_describe(n, got, sizeof(got));
	return cc_ynode_err(n, err, EINVAL, "expected a string, got %s", got);
}

int cc_ynode_strcpy(const struct cc_ynode *n, char *buf, size_t size, struct cc_err *err)
{
	const char *s;

	if (cc_ynode_string(n, &s, err) < 0)
		return -1;
	if (n->len >= size)
		return cc_ynode_err(n, err, ENAMETOOLONG, "longer than %zu characters", size - 1);
	memcpy(buf, s, n->len + 1);
	return 0;
}

/* "got ..." for readers of non-string types: a quoted "4" is named as a
 * string, since that is why it was refused. */
static void describe_typed(const struct cc_ynode *n, char *buf, size_t size)
{
	if (n->type == CC_YSCALAR && !n->plain) {
		struct sbuf sb = { buf, size, 0 };

		buf[0] = '\0';
		sb_puts(&sb, "the string ");
		sb_quoted(&sb, n->text, n->len);
		return;
	}
	cc_ynode_describe(n, buf, size);
}

int cc_ynode_bool(const struct cc_ynode *n, bool *out, struct cc_err *err)
{
	char got[QUOTE_MAX + 32];

	if (n->type == CC_YSCALAR && n->plain) {
		if (!strcmp(n->text, "true")) {
			*out = true;
			return 0;
		}
		if (!strcmp(n->text, "false")) {
			*out = false;
			return 0;
		}
	}
	describe_typed(n, got, sizeof(got));
	return cc_ynode_err(n, err, EINVAL, "expected true or false, got %s", got);
}

int cc_ynode_uint(const struct cc_ynode *n, long long min, long long max, long long *out,
		  struct cc_err *err)
{
	char got[QUOTE_MAX + 32];
	const char *s = n->text;
	unsigned long long v = 0;
	bool overflow = false;
	size_t i;

	describe_typed(n, got, sizeof(got));
	if (n->type != CC_YSCALAR || !n->plain || !n->len)
		return cc_ynode_err(n, err, EINVAL, "expected an integer, got %s", got);
	/* A negative number is an integer out of range, not a malformed one. */
	i = s[0] == '-' && n->len > 1 ? 1 : 0;
	for (size_t j = i; j < n->len; j++)
		if (s[j] < '0' || s[j] > '9')
			return cc_ynode_err(n, err, EINVAL, "expected an integer, got %s", got);
	if (i)
		return cc_ynode_err(n, err, ERANGE, "expected an integer >= %lld, got %s", min, got);
	/* YAML 1.1 reads 010 as octal 8; refuse rather than guess. */
	if (s[0] == '0' && n->len > 1)
		return cc_ynode_err(n, err, EINVAL, "expected an integer without leading zeros, got %s", got);
	for (; i < n->len; i++) {
		unsigned d = (unsigned)(s[i] - '0');

		if (v > (ULLONG_MAX - d) / 10) {
			overflow = true;
			break;
		}
		v = v * 10 + d;
	}
	if (overflow || v > (unsigned long long)max)
		return cc_ynode_err(n, err, ERANGE, "expected an integer <= %lld, got %s", max, got);
	if ((long long)v < min)
		return cc_ynode_err(n, err, ERANGE, "expected an integer >= %lld, got %s", min, got);
	*out = (long long)v;
	return 0;
}

int cc_ynode_enum(const struct cc_ynode *n, const struct cc_yenum *table, int *out,
		  struct cc_err *err)
{
	char list[256], got[QUOTE_MAX + 16];
	struct sbuf sb = { list, sizeof(list), 0 };
	size_t count = 0;

	if (n->type == CC_YSCALAR && !(n->plain && is_null_word(n->text))) {
		for (size_t i = 0; table[i].name; i++) {
			if (!strcmp(n->text, table[i].name)) {
				*out = table[i].value;
				return 0;
			}
		}
	}
	while (table[count].name)
		count++;
	list[0] = '\0';
	for (size_t i = 0; i < count; i++) {
		if (i)
			sb_puts(&sb, i + 1 == count ? " or " : ", ");
		sb_puts(&sb, table[i].name);
	}
	cc_ynode_describe(n, got, sizeof(got));
	return cc_ynode_err(n, err, EINVAL, "expected %s, got %s", list, got);
}

const char *cc_yenum_name(const struct cc_yenum *table, int value)
{
	for (size_t i = 0; table[i].name; i++)
		if (table[i].value == value)
			return table[i].name;
	return "?";
}
