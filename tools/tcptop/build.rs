fn main() {
    bpf::skeleton("tcptop");
}
