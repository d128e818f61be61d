/* common.bpf.c keeps the shared headers' constants in BTF; it has nothing
 * of its own to share. */

/* The kernel's TCP states (include/net/tcp_states.h), named for the front
 * ends: the numbers come from vmlinux.h, once. */
enum tcp_state_id {
	TCPS_ESTABLISHED = TCP_ESTABLISHED,
	TCPS_SYN_SENT = TCP_SYN_SENT,
	TCPS_SYN_RECV = TCP_SYN_RECV,
	TCPS_FIN_WAIT1 = TCP_FIN_WAIT1,
	TCPS_FIN_WAIT2 = TCP_FIN_WAIT2,
	TCPS_TIME_WAIT = TCP_TIME_WAIT,
	TCPS_CLOSE = TCP_CLOSE,
	TCPS_CLOSE_WAIT = TCP_CLOSE_WAIT,
	TCPS_LAST_ACK = TCP_LAST_ACK,
	TCPS_LISTEN = TCP_LISTEN,
	TCPS_CLOSING = TCP_CLOSING,
	TCPS_NEW_SYN_RECV = TCP_NEW_SYN_RECV,
	TCPS_BOUND_INACTIVE = TCP_BOUND_INACTIVE,
};
