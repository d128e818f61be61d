fn main() {
    bpf::skeleton("tcpconnlat");
}
