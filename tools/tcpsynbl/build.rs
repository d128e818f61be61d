fn main() {
    bpf::skeleton("tcpsynbl");
}
