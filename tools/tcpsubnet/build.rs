fn main() {
    bpf::skeleton("tcpsubnet");
}
