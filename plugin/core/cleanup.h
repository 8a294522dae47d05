/* corecarve: the one cleanup convention.
 *
 * `__attribute__((cleanup))` helpers: initialise at declaration, hand
 * ownership out with cc_steal_ptr()/cc_steal_fd().  Every helper accepts
 * NULL / -1.  These free memory and descriptors only; kernel changes are
 * undone through explicit rollback paths, never by a destructor.
 */
#ifndef CC_CLEANUP_H
#define CC_CLEANUP_H

#include <dirent.h>
#include <errno.h>
#include <hwloc.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static inline void cc_freep(void *p)
{
	free(*(void **)p);
}

static inline void cc_closep(int *fd)
{
	if (*fd >= 0) {
		int saved = errno;
		close(*fd);
		errno = saved;
	}
}

static inline void cc_fclosep(FILE **f)
{
	if (*f)
		fclose(*f);
}

static inline void cc_closedirp(DIR **d)
{
	if (*d)
		closedir(*d);
}

static inline void cc_bitmap_freep(hwloc_bitmap_t *b)
{
	if (*b)
		hwloc_bitmap_free(*b);
}

static inline void cc_json_decrefp(json_t **j)
{
	if (*j)
		json_decref(*j);
}

#define _cleanup_free_ __attribute__((cleanup(cc_freep)))
#define _cleanup_close_ __attribute__((cleanup(cc_closep)))
#define _cleanup_fclose_ __attribute__((cleanup(cc_fclosep)))
#define _cleanup_closedir_ __attribute__((cleanup(cc_closedirp)))
#define _cleanup_bitmap_ __attribute__((cleanup(cc_bitmap_freep)))
#define _cleanup_json_ __attribute__((cleanup(cc_json_decrefp)))

#define cc_steal_ptr(p)                                                        \
	({                                                                     \
		__typeof__(p) _tmp = (p);                                      \
		(p) = NULL;                                                    \
		_tmp;                                                          \
	})

#define cc_steal_fd(fd)                                                        \
	({                                                                     \
		int _tmp = (fd);                                               \
		(fd) = -1;                                                     \
		_tmp;                                                          \
	})

#endif
