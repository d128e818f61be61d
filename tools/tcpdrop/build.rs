fn main() {
    bpf::skeleton("tcpdrop");
}
