fn main() {
    bpf::skeleton("tcplife");
}
