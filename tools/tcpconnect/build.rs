fn main() {
    bpf::skeleton("tcpconnect");
}
