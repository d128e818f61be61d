fn main() {
    bpf::skeleton("tcpaccept");
}
