fn main() {
    bpf::skeleton("tcptracer");
}
