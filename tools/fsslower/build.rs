fn main() {
    bpf::skeleton("fsslower");
}
