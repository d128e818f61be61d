/* libbpf's usdt.bpf.h includes <linux/errno.h>, which wants the target
 * architecture's asm/errno.h: the BPF target has none, and the numbers are
 * the generic ones on x86_64 and arm64. */
#include <asm-generic/errno.h>
