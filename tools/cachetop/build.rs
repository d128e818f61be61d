fn main() {
    bpf::skeleton("cachetop");
}
