/* common.bpf.c keeps the shared headers' constants in BTF; it has nothing
 * of its own to share. */
