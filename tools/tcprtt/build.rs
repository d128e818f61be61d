fn main() {
    bpf::skeleton("tcprtt");
}
