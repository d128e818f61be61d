// SPDX-License-Identifier: GPL-2.0
/* Not a tool: the shared headers' constants, kept in BTF by globals of their
 * types, so that `common` gets them as generated Rust types (common/build.rs)
 * instead of hand copies. No program. */
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include "hist.h"
#include "common.h"
#include "stacks.h"
#include "ustack.h"
#include "block.h"
#include "fileio.h"
#include "task.h"

enum hist_layout hist_layout_btf;
struct hist hist_btf;
struct fine_hist fine_hist_btf;
enum tcp_state_id tcp_state_btf;
enum stack_limits stack_limits_btf;
enum stack_error stack_error_btf;
struct stack_key stack_key_btf;
struct stack_sample stack_sample_btf;
struct wake_key wake_key_btf;
enum ustack_limits ustack_limits_btf;
struct ustack_header ustack_header_btf;
enum block_layout block_layout_btf;
enum file_op file_op_btf;
struct task_header task_header_btf;

char LICENSE[] SEC("license") = "GPL";
