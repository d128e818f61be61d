fn main() {
    bpf::skeleton("tcpstates");
}
