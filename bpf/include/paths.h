/* A file's path as the kernel side walks it (paths.bpf.h): the sizes the
 * walk and the record that holds it share with the front ends. */
#ifndef __PATHS_H
#define __PATHS_H

#define NAME_MAX 255
#define PATH_MAX 4096
/* The most names a walk appends before it calls the path truncated. */
#define MAX_DIR_DEPTH 40
/* A record's buffer for a path and its walk: a power of two (the walk
 * masks its offset with it). */
#define WALK_BUF_SIZE (2 * PATH_MAX)

#endif
