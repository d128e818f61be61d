fn main() {
    bpf::skeleton("tcpretrans");
}
