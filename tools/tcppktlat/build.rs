fn main() {
    bpf::skeleton("tcppktlat");
}
